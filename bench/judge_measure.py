"""How far the judge agrees with hand labels: json mode, logprobs mode, logprobs calibrated
(cross-fitted), and the ``grounded`` check, per check — the tables of docs/judge.md.

    python bench/judge_measure.py scenarios/judge/labels.yaml \
        --judge j05=http://127.0.0.1:8095/v1 --judge j15=http://127.0.0.1:8096/v1 \
        [--mode json --mode logprobs] [-j 1] [--min-confidence 0.8] [--work DIR] \
        [--no-judge-cache] [--json]

Each ``--judge NAME=URL`` is an OpenAI-compatible server (e.g. one started by
``local-llm.sh``); the model name is the server's own (its ``/v1/models``). The script
writes, in the work folder (default ``/tmp/scenarist-judge-measure``), a ``scenarist.yaml``
with those targets and the judge's defaults (temperature 0, seed 0, ``min_confidence``
0.8) and a copy of the labels file, so the judge's cache (``.scenarist/judge-cache`` there)
survives: a rerun asks nothing already asked. For every judge and mode it asks each
labelled question, as ``scenarist judge-check`` does, and prints, over all the questions
and per check:

- agreement and Cohen's kappa of the judge's likelier verdict (P(pass) ≥ 0.5) on every
  question; Brier score and expected calibration error (10 bins);
- coverage (the share decided at ``min_confidence``, not unsure) and agreement and kappa
  on the decided questions;
- in logprobs mode, the same with the calibration temperature fitted on one half of the
  labels and measured on the other (``judge-check --calibrate``'s halves), and the two
  fitted temperatures;
- the ``grounded`` check (no judge) on the ``faithful`` questions, with its confusion.

It prints the time taken and how many questions were really sent (0 from the cache).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import shutil
import sys
import time
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import msgspec

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dsl.checks.grounded import grounded  # noqa: E402
from dsl.clients.open import open_model  # noqa: E402
from dsl.judge import Judge  # noqa: E402
from dsl.judge.calibration import Case, figures  # noqa: E402
from dsl.pipeline.judgecheck import (  # noqa: E402
    Example,
    Result,
    ask_all,
    cases,
    fit_both,
    halves,
    load_examples,
    replay,
)
from dsl.targets.kinds import is_model  # noqa: E402

CHECKS = ("faithful", "answers_the_question")


def decided(cs: list[Case]) -> str:
    """The decided verdicts against the labels: label→judge counts, pass→pass first."""
    n = Counter((c.expected, c.verdict) for c in cs)
    return "/".join(str(n[e, g]) for e in ("pass", "fail") for g in ("pass", "fail"))


def interval(results: list[Result], statistic: str, rounds: int) -> list[float] | None:
    """A 95% bootstrap interval of a figure, resampling answers (an answer's questions
    stay together), with a fixed seed; None when too few resamples have the figure."""
    if rounds <= 0:
        return None
    groups: dict[str, list[Result]] = {}
    for r in results:
        groups.setdefault(r.example.id.rpartition("/")[0] or r.example.id, []).append(r)
    clusters = list(groups.values())
    rng = random.Random(1)
    values = []
    for _ in range(rounds):
        sample = [r for g in rng.choices(clusters, k=len(clusters)) for r in g]
        v = getattr(figures(cases(sample)), statistic)
        if v is not None:
            values.append(v)
    if len(values) < rounds // 2:
        return None
    values.sort()
    return [round(values[int(0.025 * len(values))], 2),
            round(values[int(0.975 * len(values)) - 1], 2)]


def by_check(results: list[Result], rounds: int = 0) -> dict[str, dict[str, Any]]:
    out = {}
    for check in ("all", *CHECKS):
        chosen = [r for r in results if check in ("all", r.example.check)]
        if chosen:
            out[check] = {**figures(cases(chosen)).as_json(),
                          "decided": decided(cases(chosen)),
                          "kappa_95": interval(chosen, "kappa", rounds),
                          "kappa_covered_95": interval(chosen, "kappa_covered", rounds)}
    return out


async def measure(examples: list[Example], suite: Any, target_name: str, mode: str,
                  concurrency: int, min_confidence: float | None, use_cache: bool,
                  rounds: int = 0) -> dict[str, Any]:
    target = suite.targets.get(target_name)
    if target is None or not is_model(target):
        raise SystemExit(f"{target_name}: not a kind: openai target of the suite "
                         f"({', '.join(sorted(suite.targets))})")
    config = msgspec.structs.replace(suite.judge_with(target), mode=mode)
    if min_confidence is not None:
        config = msgspec.structs.replace(config, min_confidence=min_confidence)
    model = open_model(target, 4)
    judge = Judge(config, model, suite.redact.redactor(suite.targets.values()),
                  use_cache=use_cache, memory={})
    started = time.monotonic()
    try:
        results = await ask_all(examples, judge, concurrency)
        seconds = time.monotonic() - started
        usable = [r for r in results if r.got != "error"]
        rows: dict[str, dict[str, dict[str, Any]]] = {"configured": by_check(usable, rounds)}
        temperatures: list[float] = []
        if mode == "logprobs":
            pooled: list[Result] = []
            a, b = halves(usable)
            for fit_on, measured_on in ((a, b), (b, a)):
                fitted = fit_both(fit_on, config.calibration)
                temperatures.append(fitted.yes_no)
                pooled += await replay(measured_on, judge, fitted)
            rows["cross-fitted"] = by_check(pooled, rounds)
            rows["fitted on all"] = by_check(
                await replay(usable, judge, fit_both(usable, config.calibration)))
    finally:
        await model.aclose()
    got = Counter((r.example.expected, r.got) for r in results)
    return {"target": target_name,
            "model": config.model or getattr(target.config, "model", ""),
            "mode": mode, "min_confidence": config.min_confidence,
            "questions": len(results), "errors": len(results) - len(usable),
            "asked": judge.asked, "seconds": round(seconds, 1),
            "temperatures": temperatures,  # fitted on half A, on half B
            "fitted_on_all": (fit_both(usable, config.calibration).yes_no
                              if mode == "logprobs" else None),
            "verdicts": {f"{e}->{g}": n for (e, g), n in sorted(got.items())},
            "rows": rows}


def grounded_row(examples: list[Example]) -> dict[str, Any]:
    faithful = [e for e in examples if e.check == "faithful"]
    out = [Case(e.expected, s, 1.0 if s == "pass" else 0.0)
           for e in faithful for s in [grounded(True, e.attempt).status]]
    confusion = Counter((c.expected, c.verdict) for c in out)
    return {"figures": {**figures(out).as_json(), "decided": decided(out)},
            "verdicts": {f"{e}->{g}": n for (e, g), n in sorted(confusion.items())}}


def pct(x: float | None) -> str:
    return "–" if x is None else f"{x:.0%}"


def num(x: float | None, digits: int = 2) -> str:
    return "–" if x is None else f"{x:.{digits}f}"


def span(x: list[float] | None) -> str:
    return "" if x is None else f" [{x[0]:.2f}, {x[1]:.2f}]"


def table(measured: list[dict[str, Any]], ground: dict[str, Any]) -> str:
    lines = ["| judge | mode | check | agreement | κ | Brier | ECE | coverage "
             "| agreement decided | κ decided | decided pp/pf/fp/ff |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for m in measured:
        for name, figs in m["rows"].items():
            if name == "fitted on all":
                continue  # flatters: measured on what it was fitted on
            label = m["mode"] if name == "configured" else (
                f"{m['mode']}, cross-fitted T {' / '.join(f'{t:g}' for t in m['temperatures'])}")
            for check, f in figs.items():
                lines.append(
                    f"| {m['model']} | {label} | {check} | {pct(f['agreement'])} "
                    f"| {num(f['kappa'])}{span(f['kappa_95'])} | {num(f['brier'], 3)} "
                    f"| {num(f['ece'], 3)} | {pct(f['coverage'])} "
                    f"| {pct(f['agreement_covered'])} "
                    f"| {num(f['kappa_covered'])}{span(f['kappa_covered_95'])} "
                    f"| {f['decided']} |")
    g = ground["figures"]
    lines.append(f"| grounded (no judge) | – | faithful | {pct(g['agreement'])} "
                 f"| {num(g['kappa'])} | – | – | {pct(g['coverage'])} "
                 f"| {pct(g['agreement_covered'])} | {num(g['kappa_covered'])} "
                 f"| {g['decided']} |")
    return "\n".join(lines)


def server_model(base_url: str, name: str, work: Path) -> str:
    """The model a server serves, by its /v1/models (the first one); when the server is
    not up, the model this script wrote for that judge last time (the cache still
    answers every question already asked)."""
    try:
        with urllib.request.urlopen(base_url.rstrip("/") + "/models", timeout=10) as r:
            return str(json.load(r)["data"][0]["id"])
    except OSError as exc:
        suite = work / "scenarist.yaml"
        lines = suite.read_text("utf-8").splitlines() if suite.exists() else []
        for i, line in enumerate(lines):
            if line == f"  {name}:" and i + 3 < len(lines) and "model: " in lines[i + 3]:
                return lines[i + 3].split("model: ", 1)[1]
        raise SystemExit(f"--judge {name}={base_url}: no model list from the server "
                         f"({exc})") from exc


def prepare(work: Path, labels: Path, judges: list[tuple[str, str]]) -> Path:
    """The measurement suite in ``work``: the judges as targets, a copy of the labels."""
    work.mkdir(parents=True, exist_ok=True)
    lines = ["# written by bench/judge_measure.py", "targets:"]
    for name, url in judges:
        lines += [f"  {name}:", "    kind: openai", f"    base_url: {url}",
                  f"    model: {server_model(url, name, work)}", "    timeout_ms: 600000",
                  "    concurrency: 1"]
    lines += ["judge:", f"  target: {judges[0][0]}", "  temperature: 0", "  seed: 0",
              "  min_confidence: 0.8", 'exclude: ["**"]', ""]
    (work / "scenarist.yaml").write_text("\n".join(lines), "utf-8")
    copy = work / "labels.yaml"
    if not (copy.exists() and copy.samefile(labels)):
        shutil.copyfile(labels, copy)
    return copy


def main() -> None:
    p = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    p.add_argument("labels", type=Path)
    p.add_argument("--judge", action="append", required=True, metavar="NAME=URL",
                   help="a judge: a name and an OpenAI-compatible base URL (repeat)")
    p.add_argument("--mode", action="append", choices=("json", "logprobs"),
                   help="json, logprobs (repeat; default both)")
    p.add_argument("-j", "--concurrency", type=int, default=1)
    p.add_argument("--min-confidence", type=float, help="instead of 0.8")
    p.add_argument("--work", type=Path, default=Path("/tmp/scenarist-judge-measure"),
                   help="where the suite, the labels' copy and the judge's cache live")
    p.add_argument("--no-judge-cache", action="store_true", help="ask every question again")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N",
                   help="resamples of the answers for the kappas' 95%% intervals (0: none)")
    p.add_argument("--json", action="store_true", help="print everything as JSON")
    args = p.parse_args()
    judges = []
    for spec in args.judge:
        name, sep, url = spec.partition("=")
        if not sep or not name or not url:
            p.error(f"--judge {spec}: write NAME=URL")
        judges.append((name, url))
    examples, suite, _ = load_examples(prepare(args.work, args.labels, judges))
    measured = []
    for name, _url in judges:
        for mode in args.mode or ["json", "logprobs"]:
            m = asyncio.run(measure(examples, suite, name, mode, args.concurrency,
                                    args.min_confidence, not args.no_judge_cache,
                                    args.bootstrap))
            measured.append(m)
            print(f"# {name} ({m['model']}), {mode}: {m['questions']} questions, "
                  f"{m['asked']} asked, {m['errors']} errors, {m['seconds']} s; "
                  f"verdicts {m['verdicts']}"
                  + (f"; T fitted on A / B: {m['temperatures']}, on all: "
                     f"{m['fitted_on_all']}" if mode == "logprobs" else ""),
                  file=sys.stderr)
    ground = grounded_row(examples)
    count = Counter((e.check, e.expected) for e in examples)
    if args.json:
        print(json.dumps({"labels": str(args.labels), "questions": len(examples),
                          "labels_by_check": {f"{c}:{e}": n for (c, e), n in
                                              sorted(count.items())},
                          "judges": measured, "grounded": ground},
                         ensure_ascii=False, indent=2))
        return
    print(f"{len(examples)} labelled questions: "
          + ", ".join(f"{c} {e} {n}" for (c, e), n in sorted(count.items())))
    print(f"grounded on faithful: verdicts {ground['verdicts']}\n")
    print(table(measured, ground))


if __name__ == "__main__":
    main()
