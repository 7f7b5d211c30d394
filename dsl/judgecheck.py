"""``scenarist judge-check LABELS.yaml``: is the judge good enough to trust?

Asks the suite's judge about hand-labelled examples — a message, the tool results, an
answer, a judge check and the verdict a person gave — and reports how often the judge
agrees, and Cohen's kappa (agreement beyond chance: 1 is perfect, 0 is no better than
chance). Unsure and failed questions are counted apart, never as agreement.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import REGISTRY, CheckContext
from .errors import Collector, Diagnostic, InputError, Span
from .load import read_file
from .model import AttemptData, Call, Tokens
from .moment import MomentError, parse_moment
from .suite import display_path, find_suite_file, load_suite
from .validate import validate

DEFAULT_AT = "2026-01-01T12:00:00Z"


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    check: str
    params: Any
    label: str
    attempt: AttemptData
    expected: str
    span: Span


@dataclass(frozen=True, slots=True)
class Result:
    example: Example
    got: str  # pass | fail | unsure | error
    reason: str


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa for two raters over labels (here: expected vs judged, pass/fail)."""
    n = len(pairs)
    if n == 0:
        return None
    labels = sorted({x for p in pairs for x in p})
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == k for a, _ in pairs) / n) * (sum(b == k for _, b in pairs) / n)
                   for k in labels)
    if expected == 1:
        return 1.0 if observed == 1 else 0.0
    return (observed - expected) / (1 - expected)


def load_examples(path: Path) -> tuple[list[Example], Any, str | None]:
    """The labelled examples, the suite, and the judge target the file names."""
    diags = Collector()
    name = display_path(path)
    doc = read_file(path, name)
    diags.extend(doc.diagnostics)
    diags.raise_if_errors()
    if not isinstance(doc.data, dict):
        raise InputError([Diagnostic(Span(name, 1, 1), "Y108", "a labels file must be a "
                                     "mapping with 'examples'")])
    diags.extend(validate(doc, "labels.schema.json", "the labels file"))
    diags.raise_if_errors()
    suite_file = find_suite_file(path)
    if suite_file is None:
        raise InputError([Diagnostic(Span(name, 1, 1), "E210", "no scenarist.yaml found next "
                                     "to the labels file or in its parent folders",
                                     "the judge is configured in the suite's scenarist.yaml")])
    suite = load_suite(suite_file, diags)
    diags.raise_if_errors()
    out = []
    for i, ex in enumerate(doc.data["examples"]):
        path_i = ("examples", i)
        check = ex["check"]
        cname, param = (check, True) if isinstance(check, str) else next(iter(check.items()))
        ctype = REGISTRY.get(cname)
        if ctype is None or not ctype.judge:
            judged = sorted(n for n, c in REGISTRY.items() if c.judge)
            diags.error(doc.span((*path_i, "check")), "S101",
                        f"'{cname}' is not a judge check; use one of {', '.join(judged)}")
            continue
        ctx = CheckContext(doc, (*path_i, "check", cname), {}, diags)
        prepared = ctype.prepare(param, ctx)
        try:
            at = parse_moment(ex.get("at", DEFAULT_AT))
        except MomentError as exc:
            diags.error(doc.span((*path_i, "at")), exc.code, str(exc), exc.hint)
            continue
        calls = tuple(
            Call(f"call_{j}", t["name"], t.get("args", {}), json.dumps(t.get("args", {})),
                 t["output"] if isinstance(t["output"], str) else json.dumps(t["output"],
                                                                             ensure_ascii=False),
                 "read")
            for j, t in enumerate(ex.get("tool_results") or []))
        attempt = AttemptData(ex["message"], ex["answer"], calls, at, (), 1, 0.0, Tokens())
        out.append(Example(str(ex.get("id", f"example {i + 1}")), cname, prepared,
                           cname if param is True else f"{cname}: {json.dumps(param)}",
                           attempt, ex["expected"], doc.span(path_i)))
    diags.raise_if_errors()
    return out, suite, doc.data.get("judge")


async def ask_all(examples: list[Example], judge: Any, concurrency: int = 4) -> list[Result]:
    limit = asyncio.Semaphore(concurrency)

    async def one(e: Example) -> Result:
        evaluate = REGISTRY[e.check].evaluate_async
        assert evaluate is not None  # only judge checks are loaded
        async with limit:
            o = await evaluate(e.params, e.attempt, judge)
        return Result(e, o.status, o.reason)

    return list(await asyncio.gather(*(one(e) for e in examples)))


def report(results: list[Result]) -> dict[str, Any]:
    decided = [(r.example.expected, r.got) for r in results if r.got in ("pass", "fail")]
    agree = sum(a == b for a, b in decided)
    by_check: dict[str, list[tuple[str, str]]] = {}
    for r in results:
        if r.got in ("pass", "fail"):
            by_check.setdefault(r.example.check, []).append((r.example.expected, r.got))
    matrix = {f"{e}->{g}": sum(1 for a, b in decided if (a, b) == (e, g))
              for e in ("pass", "fail") for g in ("pass", "fail")}
    return {
        "schema_version": 1,
        "examples": len(results),
        "decided": len(decided),
        "unsure": sum(r.got == "unsure" for r in results),
        "errors": sum(r.got == "error" for r in results),
        "agreement": round(agree / len(decided), 4) if decided else None,
        "kappa": None if (k := cohen_kappa(decided)) is None else round(k, 4),
        "confusion": matrix,
        "by_check": {c: {"decided": len(p), "agreement": round(sum(a == b for a, b in p)
                                                                / len(p), 4),
                         "kappa": None if (k := cohen_kappa(p)) is None else round(k, 4)}
                     for c, p in sorted(by_check.items())},
        "results": [{"id": r.example.id, "check": r.example.label,
                     "expected": r.example.expected, "judge": r.got, "reason": r.reason}
                    for r in results],
        "checked_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }
