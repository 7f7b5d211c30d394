"""Small builders for run folders: plan.json, run.json, results.jsonl and summary.json
written straight from records, so report tests need no model and no server."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dsl.model import SCHEMA_VERSION
from dsl.pipeline import AfterRun, finish
from dsl.results.summarize import summarize_records
from dsl.store import record_from_json, write_json
from dsl.store.planfile import plan_from_json
from dsl.store.runfile import run_from_json
from dsl.store.summaryfile import Summary, summary_json

if TYPE_CHECKING:
    from dsl.results.baseline import Comparison

# How the tests and the bench scripts start Debian's Chromium (Playwright's own download
# does not work in CI): no sandbox (containers), nothing that would reach the network.
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]

AT = "2026-09-29T10:00:00-03:00"
MOMENT = "Tuesday 29 September 2026, 10:00 (UTC-03:00)"
SYSTEM = f"You are the assistant of a dental clinic.\n\nCurrent date and time: {MOMENT}."


def scenario(sid: str, *, checks: Sequence[str] = ('contains: "18:00"',), runs: int = 5,
             min_pass: int = 4, tags: Sequence[str] = (), file: str | None = None,
             line: int = 1, description: str = "", message: str = "¿Hasta qué hora atienden?",
             tools: Sequence[dict[str, Any]] = (), expected_tools: Sequence[str] = ()
             ) -> dict[str, Any]:
    """A scenario as plan.json holds it; a check's name is its label up to the colon."""
    return {
        "id": sid, "file": file or f"scenarios/{sid}.yaml", "line": line,
        "description": description, "tags": list(tags), "at": AT, "system": "",
        "message": message, "tools": list(tools), "expected_tools": list(expected_tools),
        "checks": [{"check": label.split(":")[0], "label": label, "judge": False,
                    "line": line + 5 + i} for i, label in enumerate(checks)],
        "runs": runs, "min_pass": min_pass, "max_steps": 6,
    }


def call(name: str, args: Any = None, output: str | None = "ok", *, pending: bool = False,
         error: str | None = None, raw_args: str | None = None, action: str = "read",
         step: int = 1, cid: str | None = None) -> dict[str, Any]:
    c: dict[str, Any] = {"id": cid or f"call_{name}_{step}", "name": name,
                         "args": {} if args is None and raw_args is None else args,
                         "output": None if pending else output, "action": action,
                         "pending": pending, "step": step}
    if raw_args is not None:
        c["raw_args"] = raw_args
        c["args"] = None
    if error:
        c["error"] = error
    return c


def transcript(message: str, calls: Sequence[dict[str, Any]], answer: str,
               system: str = SYSTEM) -> list[dict[str, Any]]:
    """The OpenAI-format messages the agent loop would have kept for these calls."""
    msgs: list[dict[str, Any]] = [{"role": "system", "content": system},
                                  {"role": "user", "content": message}]
    steps = sorted({c["step"] for c in calls})
    for step in steps:
        mine = [c for c in calls if c["step"] == step]
        msgs.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": c["id"], "type": "function",
             "function": {"name": c["name"],
                          "arguments": c.get("raw_args") or json.dumps(c["args"] or {})}}
            for c in mine]})
        for c in mine:
            if not c["pending"]:
                msgs.append({"role": "tool", "tool_call_id": c["id"], "content": c["output"]})
    if not any(c["pending"] for c in calls):
        msgs.append({"role": "assistant", "content": answer})
    return msgs


def record(sid: str, run: int, status: str = "pass", *, target: str = "fake",
           answer: str = "Hoy atendemos hasta las 18:00.",
           calls: Sequence[dict[str, Any]] = (),
           checks: Sequence[tuple[str, str, str]] = (), reason: str | None = None,
           error: dict[str, Any] | None = None, message: str = "¿Hasta qué hora atienden?",
           messages: list[dict[str, Any]] | None = None, latency_ms: float | None = 1200.0,
           tokens: int = 300) -> dict[str, Any]:
    """An attempt record as dsl.execution.run.make_record writes it. ``checks``: (label, status,
    reason) triples."""
    rec: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION, "scenario": sid, "target": target, "run": run,
        "seed": run, "status": status,
        "reason": reason or {"pass": "all checks passed", "fail": "1 of 1 checks failed",
                             "unsure": "the judge was unsure",
                             "error": "timeout: no answer"}[status],
        "started_at": f"2026-11-30T10:00:{run:02d}.000+00:00",
        "answer": answer if status != "error" else "",
        "calls": list(calls),
        "messages": messages if messages is not None else transcript(
            message, calls, answer),
        "steps": 1 + len({c["step"] for c in calls}),
        "latency_ms": latency_ms if status != "error" else None,
        "tokens": {"prompt": tokens - tokens // 4, "completion": tokens // 4, "total": tokens},
        "checks": [{"check": label.split(":")[0], "label": label, "status": st,
                    "score": 1.0 if st == "pass" else 0.0, "reason": why}
                   for label, st, why in checks],
        "error": error,
        "retries": 0,
        "model_calls": [],
    }
    if status == "error" and error is None:
        rec["error"] = {"kind": "timeout", "message": "no answer within 30 s", "status": None}
    return rec


def write_run(path: Path, scenarios: Sequence[dict[str, Any]],
              records: Iterable[dict[str, Any]], *,
              targets: Sequence[tuple[str, str]] = (("fake", "fake-model"),),
              run_id: str = "20261130-100000-abcd", duration_s: float = 12.5,
              suite: str = "scenarist.yaml") -> Path:
    """A complete run folder at ``path``; returns it. summary.json is computed."""
    path.mkdir(parents=True, exist_ok=True)
    tj = [{"name": n, "kind": "openai", "model": m, "base_url": "http://127.0.0.1:9/v1",
           "api_key_env": None, "temperature": None, "params": {}} for n, m in targets]
    plan = {"schema_version": SCHEMA_VERSION, "suite": suite, "targets": tj,
            "scenarios": list(scenarios),
            "attempts": sum(s["runs"] for s in scenarios) * len(targets),
            "max_model_calls": 0, "concurrency": 4}
    run = {"schema_version": SCHEMA_VERSION, "run_id": run_id, "scenarist": "0.1.0",
           "suite": suite, "started_at": "2026-11-30T10:00:00+00:00", "targets": tj,
           "argv": ["run"], "finished_at": "2026-11-30T10:00:12+00:00",
           "duration_s": duration_s, "interrupted": False}
    records = list(records)
    write_json(path / "plan.json", plan)
    write_json(path / "run.json", run)
    with (path / "results.jsonl").open("w", encoding="utf-8") as f:
        for r in records:
            line = json.dumps(r, ensure_ascii=False)
            if not line.isascii():
                try:
                    line.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate: keep it as a \u escape
                    line = json.dumps(r)
            f.write(line + "\n")
    write_json(path / "summary.json", summary_json(summarize_records(
        plan_from_json(plan), [record_from_json(r) for r in records], run_from_json(run))))
    return path


def passing(sid: str, run: int, labels: Sequence[str] = ('contains: "18:00"',),
            **kw: Any) -> dict[str, Any]:
    return record(sid, run, "pass", checks=[(lb, "pass", "ok") for lb in labels], **kw)


def failing(sid: str, run: int, failed: Sequence[str] = ('contains: "18:00"',),
            passed: Sequence[str] = (), **kw: Any) -> dict[str, Any]:
    checks = [(lb, "pass", "ok") for lb in passed] + [
        (lb, "fail", f"expected {lb}, and it was not so") for lb in failed]
    return record(sid, run, "fail", checks=checks,
                  reason=f"{len(failed)} of {len(checks)} checks failed: " + "; ".join(failed),
                  **kw)


def demo_run(path: Path, **kw: Any) -> Path:
    """A small but varied run: a pass, a flaky failure, a no-verdict, two targets, tags,
    a pending confirmation, a tool result, an unsure judge verdict with evidence."""
    hours = scenario("clinic.hours_today", checks=['calls: "list_business_hours"',
                                                    'contains: "18:00"'],
                     tags=["clinic", "smoke"], description="Until what time are we open today?",
                     line=2)
    book = scenario("clinic.book_cleaning", checks=['asks_to_confirm: "book_appointment"',
                                                     'contains: "15:00"'],
                    tags=["clinic", "booking"], description="A patient books a cleaning.",
                    message="Quiero una limpieza el martes a las 15:00", min_pass=4)
    refund = scenario("shop.refund", checks=["faithful"], tags=["shop"], runs=3, min_pass=2,
                      description="A refund question the judge grades.")
    recs: list[dict[str, Any]] = []
    for target in ("fake", "other"):
        for run in range(1, 6):
            recs.append(passing("clinic.hours_today", run, target=target,
                                labels=hours_labels(),
                                calls=[call("list_business_hours", {},
                                            '{"monday": "09:00-18:00"}')]))
    for run in range(1, 6):
        pend = call("book_appointment", {"date": "2026-10-06", "time": "15:00"}, None,
                    pending=True, action="create", step=2)
        slots = call("search_slots", {"date": "2026-10-06"}, '{"free": ["15:00"]}')
        if run in (2, 4):
            recs.append(failing("clinic.book_cleaning", run,
                                failed=['asks_to_confirm: "book_appointment"'],
                                passed=['contains: "15:00"'], calls=[slots],
                                answer="Listo, reservé a las 15:00.",
                                message="Quiero una limpieza el martes a las 15:00"))
        else:
            recs.append(passing("clinic.book_cleaning", run,
                                labels=['asks_to_confirm: "book_appointment"',
                                        'contains: "15:00"'],
                                calls=[slots, pend], answer="¿Confirmo el turno a las 15:00?",
                                message="Quiero una limpieza el martes a las 15:00"))
        recs.append(record("clinic.book_cleaning", run, "error", target="other",
                           calls=[], messages=[], answer=""))
    judge = record("shop.refund", 1, "unsure", checks=[("faithful", "unsure",
                                                        "the judge was not sure")])
    judge["checks"][0]["evidence"] = {"prompt": "Is the answer faithful to the tool output?",
                                      "replies": ["Maybe. SCORE: 0.5"],
                                      "reason": "the reply hedges", "confidence": 0.4}
    recs.append(judge)
    recs.append(record("shop.refund", 2, "pass", checks=[("faithful", "pass", "faithful")]))
    recs.append(record("shop.refund", 3, "pass", checks=[("faithful", "pass", "faithful")]))
    return write_run(path, [hours, book, refund], recs,
                     targets=(("fake", "fake-model"), ("other", "other-model")), **kw)


def hours_labels() -> list[str]:
    return ['calls: "list_business_hours"', 'contains: "18:00"']


# Model output (and names) written to attack the page. Each would run script, load
# something, or break the layout if it reached the page as markup.
XSS = (
    "<script>alert(1)</script>",
    "</script><script>window.__canary='pwned';alert(2)</script>",
    "<img src=x onerror=\"window.__canary='img';alert(3)\">",
    "<a href=\"javascript:alert(4)\">click me</a>",
    "<svg onload=alert(5)>",
    "<!-- <script>alert(6)</script> -->",
    "<style>body{display:none}</style><iframe src=\"https://example.com\"></iframe>",
    "{{ 7*7 }} ${7*7} {% raw %}",
    "&lt;already escaped&gt; &amp; <b>bold</b>",
)
CONTROL = "bell\x07 nul\x00 esc\x1b[31mred\x1b[0m del\x7f \u202eoverride\u202c \u2028sep\u2029"
HOSTILE = " ".join(XSS) + " " + CONTROL
HUGE = 2_000_000  # characters of one answer


def hostile_run(path: Path) -> Path:
    """A run whose every text field is hostile, with a 2-million-character answer and a
    50,000-character line of tool output."""
    sid = "<script>alert('id')</script>"
    sc = scenario(sid, checks=[f"contains: {XSS[1]}", "faithful"],
                  tags=["\"'><img src=x onerror=alert('tag')>", "ok"],
                  description=HOSTILE, message=HOSTILE, file="evil/<b>.yaml")
    plain = scenario("plain", checks=["contains: \"ok\""], runs=1, min_pass=1)
    evil_call = call(XSS[3], None, None, raw_args="{\"x\": \"" + XSS[4] + "\"", error=HOSTILE)
    tool = call("lookup", {"q": XSS[0], "c": CONTROL}, XSS[2] + " " + "x" * 50_000, step=1,
                cid="c1")
    pend = call("book", {"when": XSS[1]}, None, pending=True, action="create", step=2,
                cid="c2")
    recs = []
    system = f"{HOSTILE}\n\nCurrent date and time: {XSS[0]}."
    for run in (1, 2, 3):
        calls = [tool, pend] if run == 1 else [evil_call]
        rec = record(sid, run, "fail", target="t<b>1</b>", answer=HOSTILE + "A" * HUGE,
                     calls=calls, checks=[(f"contains: {XSS[1]}", "fail", HOSTILE),
                                          ("faithful", "unsure", XSS[2])],
                     reason=HOSTILE, message=HOSTILE,
                     messages=transcript(HOSTILE, calls, HOSTILE + "A" * HUGE, system))
        rec["checks"][1]["evidence"] = {"prompt": HOSTILE, "replies": [HOSTILE],
                                        "reason": XSS[0], "confidence": 0.3}
        recs.append(rec)
    err = record(sid, 4, "error", target="t<b>1</b>", messages=[], calls=[])
    err["error"] = {"kind": XSS[0], "message": HOSTILE, "status": 500}
    recs.append(err)
    recs.append(passing("plain", 1, labels=["contains: \"ok\""], target="t<b>1</b>"))
    return write_run(path, [sc, plain], recs, targets=(("t<b>1</b>", XSS[4]),),
                     run_id="<script>alert('run')</script>", suite=XSS[2])


# ---- the demo suite against the scripted server ------------------------------------------

ROOT = Path(__file__).resolve().parents[2]
DEMO = Path(__file__).resolve().parent / "demo"


@contextlib.contextmanager
def fake_server(script: Path = DEMO / "script.json") -> Iterator[int]:
    """tests/fakeserver.py as its own process on 127.0.0.1, answering from ``script``;
    yields its port."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "fakeserver.py"),
                             "--script", str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        if not first.startswith("PORT "):
            raise RuntimeError(f"the fake server did not start: {first!r}")
        yield int(first.split()[1])
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def demo_suite(dest: Path, port: int) -> Path:
    """A copy of the demo suite whose target points at the fake server on ``port``."""
    shutil.copytree(DEMO, dest)
    suite = dest / "scenarist.yaml"
    suite.write_text(suite.read_text("utf-8").replace("127.0.0.1:PORT", f"127.0.0.1:{port}"),
                     "utf-8")
    return dest


def scenarist(*args: str, cwd: Path, env: dict[str, str] | None = None
              ) -> subprocess.CompletedProcess[str]:
    """``scenarist ARGS`` as a real process (the package from this source tree)."""
    full = {**os.environ, "PYTHONPATH": str(ROOT), "NO_COLOR": "1", **(env or {})}
    full.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120)


def conversation_run(path: Path) -> Path:
    """A run of one conversation: given history, a say turn that holds a call, a confirm
    turn that runs it, per-turn checks and the whole conversation's."""
    held = call("set_business_hours", {"day": "saturday"}, "Hours for saturday updated.",
                action="update", cid="call_1_0")
    held["decision"] = "confirmed"
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Hola, soy la dueña."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "history_2_1", "type": "function",
             "function": {"name": "list_business_hours", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "history_2_1", "content": '{"saturday": "09-13"}'},
        {"role": "user", "content": "Los sábados cerramos."},
        {"role": "assistant", "content": "¿Confirmás?", "tool_calls": [
            {"id": "call_1_0", "type": "function",
             "function": {"name": "set_business_hours", "arguments": '{"day": "saturday"}'}}]},
        {"role": "tool", "tool_call_id": "call_1_0", "content": "Hours for saturday updated."},
        {"role": "assistant", "content": "Listo, cerrado los sábados."},
    ]
    rec = record("clinic.change_hours", 1, calls=[held], messages=messages,
                 answer="Listo, cerrado los sábados.",
                 checks=[("turn 1 · asks_to_confirm: set_business_hours", "pass", "asked"),
                         ('turn 2 · contains: "Listo"', "pass", "it does"),
                         ("turn 3 · non_empty", "error", "not evaluated: never reached"),
                         ("does_not_modify", "fail", "set_business_hours ran")])
    for c, turn in zip(rec["checks"], (1, 2, 3, None), strict=True):
        if turn is not None:
            c["turn"] = turn
    rec["status"] = "fail"
    rec["history"] = 3
    rec["turns"] = [
        {"kind": "say", "text": "Los sábados cerramos.", "answer": "¿Confirmás?", "calls": 1,
         "decided": [], "steps": 1, "messages": 6},
        {"kind": "confirm", "text": "set_business_hours",
         "answer": "Listo, cerrado los sábados.", "calls": 0, "decided": [0], "steps": 1,
         "messages": 8}]
    spec = scenario("clinic.change_hours", runs=1, min_pass=1, checks=[
        "turn 1 · asks_to_confirm: set_business_hours", 'turn 2 · contains: "Listo"',
        "turn 3 · non_empty", "does_not_modify"])
    return write_run(path, [spec], [rec])


def regenerate(run_dir: Path, out: Path | None = None, baseline: Summary | None = None
               ) -> tuple[Path, Summary, Comparison | None]:
    """The after-run chain on a run folder, without a history (dsl.pipeline.finish): the
    report's path, the summary and the comparison with ``baseline``."""
    done = finish(run_dir, AfterRun(trend=False, record=False, baseline=baseline, report=out))
    return done.report, done.summary, done.comparison
