"""Summarize: stored attempt records become per-scenario verdicts and statistics.

Reads ``plan.json`` and ``results.jsonl`` only (never live objects), so a summary can be
recomputed from any run folder. Pass rates and their 95% Wilson intervals are computed
over the attempts that reached a verdict: an attempt that ended in an endpoint error says
nothing about the model, so it is counted apart (``errors``) and never as a failure.

A scenario × target's verdict is :class:`~dsl.verdict.Tally`'s (the one home of the
rule): ``pass``, ``fail`` or ``inconclusive`` (endpoint errors, or attempts that were not
run, decide it either way), with what decided it (``verdict_reason``: min_pass, or a check
marked ``always: true``). A scenario × target that the scenario's ``targets:`` leave out
is no row at all: it is listed under ``skipped``, with the reason (never failed).

Every figure is kept at full precision (the statistics are :mod:`dsl.results.stats`'s); the
terminal, the report and summary.md round them for display. Besides the pass rate and its
interval, each row has each check's pass rate with its interval, pass@k and pass^k, and
tool-call precision, recall and F1 (:mod:`dsl.execution.toolcalls` counts each attempt); the
summary has the same F1 for the suite and per target. (The comparisons — with a baseline,
between the targets of the run — are :mod:`dsl.results.baseline`'s: the report stage adds them.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..execution.toolcalls import ToolExpectation, expectation_of
from ..model import SCHEMA_VERSION
from ..store import PLAN, RUN, AttemptRecord, CheckResult, latest_records, read_json
from ..verdict import Tally
from .stats import PRF, Z95, pass_k_table, percentile, wilson

__all__ = ["Z95", "exit_code", "percentile", "summarize_dir", "summarize_records", "wilson"]


TOOL_OUTCOMES = ("tp", "fp", "fn", "tn")


@dataclass(slots=True)
class _Acc:
    """Running totals for one scenario × target (a few numbers, plus latencies)."""

    tally: Tally
    latencies: list[float] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    error_kinds: Counter[str] = field(default_factory=Counter)
    failure_kinds: Counter[str] = field(default_factory=Counter)  # model_output, max_steps
    said: dict[str, str] = field(default_factory=dict)  # kind -> the first message of it
    check_pass: list[int] = field(default_factory=list)
    check_seen: list[int] = field(default_factory=list)
    check_unsure: list[int] = field(default_factory=list)
    tools: dict[str, int] = field(default_factory=lambda: dict.fromkeys(TOOL_OUTCOMES, 0))
    failing_checks: Counter[str] = field(default_factory=Counter)
    always_failing: set[str] = field(default_factory=set)  # labels of `always` checks
    judge_questions: int = 0
    judge_cached: int = 0
    judge_tokens: int = 0
    items: dict[int, dict[str, list[int]]] = field(default_factory=dict)  # criteria


def summarize_records(plan: dict[str, Any], records: Iterable[AttemptRecord],
                      run: dict[str, Any] | None = None) -> dict[str, Any]:
    scenarios = {s["id"]: s for s in plan["scenarios"]}
    expectations: dict[str, ToolExpectation | None] = {
        sid: expectation_of(spec) for sid, spec in scenarios.items()}
    targets = [t["name"] for t in plan["targets"]]
    acc: dict[tuple[str, str], _Acc] = {}
    first_started: str | None = None
    last_started: str | None = None
    for r in records:
        key = (r.scenario, r.target)
        a = acc.get(key)
        if a is None:
            a = acc[key] = _new_acc(scenarios.get(r.scenario))
        a.tally.add(r.status, r.steps, r.broke_always)
        started = r.started_at
        if started:
            first_started = min(first_started or started, started)
            last_started = max(last_started or started, started)
        a.prompt_tokens += r.tokens.prompt
        a.completion_tokens += r.tokens.completion
        a.retries += r.retries
        if r.status == "error":
            kind = r.error.kind if r.error else "unknown"
            a.error_kinds[kind] += 1
            if kind not in a.said:
                a.said[kind] = _short(r.error.message if r.error else r.reason)
            continue
        if r.failure_kind:
            a.failure_kinds[r.failure_kind] += 1
            if r.failure_kind not in a.said:
                a.said[r.failure_kind] = _short(r.failure or r.reason)
        if r.latency_ms is not None:
            a.latencies.append(r.latency_ms)
        checks = r.checks
        if len(a.check_seen) < len(checks):
            grow = len(checks) - len(a.check_seen)
            a.check_seen += [0] * grow
            a.check_pass += [0] * grow
            a.check_unsure += [0] * grow
        for i, c in enumerate(checks):
            _judge_stats(a, c)
            for item in c.items:
                counts = a.items.setdefault(i, {}).setdefault(item["label"], [0, 0])
                counts[1] += 1
                counts[0] += item["status"] == "pass"
            a.check_seen[i] += 1
            if c.status == "pass":
                a.check_pass[i] += 1
            elif c.status == "unsure":
                a.check_unsure[i] += 1
            else:
                a.failing_checks[c.label] += 1
                if c.always:
                    a.always_failing.add(c.label)
        expectation = expectations.get(r.scenario)
        if expectation is not None:
            a.tools[expectation.classify_attempt(r.calls, r.turns)] += 1

    info = run or {}
    saved = {(x["scenario"], x["target"]): x["runs"]
             for x in (info.get("early_stop") or {}).get("by_scenario", [])}
    rows = []
    skipped = []
    for sid, spec in scenarios.items():
        for t in targets:
            if not runs_on(spec, t):
                skipped.append(_skipped(spec, t))
                continue
            rows.append(_row(spec, t, acc.get((sid, t)) or _new_acc(spec),
                             saved.get((sid, t), 0)))
    rows.sort(key=lambda r: (r["verdict"] == "pass", r["scenario"], r["target"]))
    totals = _totals(rows)
    totals["skipped"] = len(skipped)
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": info.get("run_id"),
        "suite": plan.get("suite"),
        "started_at": info.get("started_at") or first_started,
        "finished_at": info.get("finished_at") or last_started,
        "duration_s": info.get("duration_s"),
        "interrupted": info.get("interrupted", False),
        "stopped": info.get("stopped"),
        "early_stop": info.get("early_stop"),
        "shard": plan.get("shard"),
        "targets": plan["targets"],
        "judge": _judge(info.get("judge")),
        "totals": totals,
        "tool_calls": _tool_calls(rows, targets),
        "scenarios": rows,
        "skipped": skipped,
    }


def runs_on(spec: dict[str, Any], target: str) -> bool:
    """Does a plan.json scenario run on ``target``? (Its ``targets:`` skip the others, as
    :meth:`dsl.model.Scenario.runs_on` says for the live plan.)"""
    meant = spec.get("targets")
    return not meant or target in meant


def _skipped(spec: dict[str, Any], target: str) -> dict[str, Any]:
    """A scenario × target the plan skips: the scenario's ``targets:`` leave it out."""
    return {"scenario": spec["id"], "target": target, "file": spec["file"],
            "line": spec["line"], "description": spec.get("description", ""),
            "tags": spec.get("tags", []),
            "reason": "the scenario is meant for " + ", ".join(spec.get("targets") or ())}


def _prf(rows: Iterable[dict[str, Any]]) -> PRF:
    total = PRF(0, 0, 0)
    for r in rows:
        t = r["tool_calls"]
        if t is not None:
            total += PRF(t["tp"], t["fp"], t["fn"], t["tn"])
    return total


def _tool_calls(rows: list[dict[str, Any]], targets: list[str]) -> dict[str, Any]:
    """Tool-call precision, recall and F1 over the suite and per target."""
    return {"all": _prf(rows).as_json(),
            "by_target": {t: _prf(r for r in rows if r["target"] == t).as_json()
                          for t in targets}}


def _judge(info: Any) -> dict[str, Any] | None:
    """The run's judge and whether it was measured (judge-check), in words."""
    if not isinstance(info, dict):
        return None
    from ..judge.validation import ValidationInfo, validation_text

    checked = ValidationInfo.from_json(info.get("validation"))
    return {"target": info.get("target"), "validated": checked is not None,
            "validation": validation_text(checked)}


def _new_acc(spec: dict[str, Any] | None) -> _Acc:
    spec = spec or {}
    always = any(c.get("always") for c in spec.get("checks", ()))
    return _Acc(Tally(spec.get("runs", 0), spec.get("min_pass", 0), always))


def _judge_stats(a: _Acc, check: CheckResult) -> None:
    ev = check.evidence
    if not ev:
        return
    for e in ev.get("items") or [ev]:
        a.judge_questions += 1
        a.judge_cached += bool(e.get("cached"))
        a.judge_tokens += e.get("tokens") or 0


def _rate(k: int, n: int) -> dict[str, Any]:
    low, high = wilson(k, n)
    return {"pass_rate": k / n if n else None, "ci_low": low, "ci_high": high}


def _row(spec: dict[str, Any], target: str, a: _Acc, saved: int = 0) -> dict[str, Any]:
    t = a.tally
    decided = t.decided
    low, high = wilson(t.passes, decided)
    planned = spec["runs"]
    v = t.verdict
    checks = []
    for i, c in enumerate(spec["checks"]):
        seen = a.check_seen[i] if i < len(a.check_seen) else 0
        ok = a.check_pass[i] if i < len(a.check_pass) else 0
        unsure = a.check_unsure[i] if i < len(a.check_unsure) else 0
        entry = {"check": c["check"], "label": c["label"], "judge": c.get("judge", False),
                 "passes": ok, "unsure": unsure, "evaluated": seen, **_rate(ok, seen)}
        if c.get("always"):
            entry["always"] = True
        if i in a.items:
            entry["items"] = [{"label": label, "passes": n[0], "evaluated": n[1],
                               **_rate(n[0], n[1])}
                              for label, n in a.items[i].items()]
        checks.append(entry)
    tool_calls = None
    if expectation_of(spec) is not None:
        tool_calls = PRF(**a.tools).as_json()
    at_k, hat_k = pass_k_table(decided, t.passes) if decided else ({}, {})
    mean = sum(a.latencies) / len(a.latencies) if a.latencies else None
    return {
        "scenario": spec["id"],
        "target": target,
        "file": spec["file"],
        "line": spec["line"],
        "description": spec.get("description", ""),
        "tags": spec.get("tags", []),
        "planned": planned,
        "runs": t.finished,
        "decided": decided,
        "passes": t.passes,
        "fails": t.fails,
        "unsure": t.unsure,
        "errors": t.errors,
        "saved": saved,  # runs not needed: the verdict was decided (early stop)
        "not_run": max(0, planned - t.finished - saved),
        "min_pass": spec["min_pass"],
        "pass_rate": t.passes / decided if decided else None,
        "ci_low": low,
        "ci_high": high,
        "pass_at_k": at_k,
        "pass_hat_k": hat_k,
        "verdict": v,
        "verdict_reason": t.reason,  # min_pass, always_broken or always_unseen
        "always_broken": t.broken,  # attempts in which an `always` check did not pass
        "passed": v == "pass",
        "file_runs": spec.get("file_runs", planned),  # what the file asks (before --runs)
        "checks": checks,
        "failing_checks": [{"label": k, "count": n, **({"always": True}
                                                      if k in a.always_failing else {})}
                           for k, n in a.failing_checks.most_common()],
        "latency_ms": {
            "mean": mean,
            "p50": percentile(a.latencies, 50),
            "p95": percentile(a.latencies, 95),
        },
        "tokens": {"prompt": a.prompt_tokens, "completion": a.completion_tokens,
                   "total": a.prompt_tokens + a.completion_tokens},
        "model_calls": t.steps,
        "retries": a.retries,
        "error_kinds": dict(a.error_kinds),
        "failure_kinds": dict(a.failure_kinds),  # failed before the checks: model_output...
        "error_messages": dict(a.said),  # per kind, what the first such attempt said
        "tool_calls": tool_calls,
        "unsure_rate": t.unsure / decided if decided else None,
        "judge": ({"questions": a.judge_questions, "cached": a.judge_cached,
                   "asked": a.judge_questions - a.judge_cached, "tokens": a.judge_tokens}
                  if a.judge_questions else None),
    }


MAX_SAID = 300  # characters of an endpoint's message kept in the summary (all: results.jsonl)


def _short(text: str) -> str:
    return text if len(text) <= MAX_SAID else text[: MAX_SAID - 1] + "…"


def _totals(rows: list[dict[str, Any]]) -> dict[str, Any]:
    attempts = sum(r["runs"] for r in rows)
    passes = sum(r["passes"] for r in rows)
    decided = sum(r["decided"] for r in rows)
    return {
        "scenarios": len(rows),
        "passed": sum(r["verdict"] == "pass" for r in rows),
        "failed": sum(r["verdict"] == "fail" for r in rows),
        "inconclusive": sum(r["verdict"] == "inconclusive" for r in rows),
        "attempts": attempts,
        "passes": passes,
        "fails": sum(r["fails"] for r in rows),
        "unsure": sum(r["unsure"] for r in rows),
        "errors": sum(r["errors"] for r in rows),
        "not_run": sum(r["not_run"] for r in rows),
        "saved": sum(r["saved"] for r in rows),
        "pass_rate": passes / decided if decided else None,
        "ci_low": wilson(passes, decided)[0],
        "ci_high": wilson(passes, decided)[1],
        "tokens": sum(r["tokens"]["total"] for r in rows),
        "model_calls": sum(r["model_calls"] for r in rows),
        "retries": sum(r["retries"] for r in rows),
        "judge_questions": sum((r["judge"] or {}).get("questions", 0) for r in rows),
        "judge_asked": sum((r["judge"] or {}).get("asked", 0) for r in rows),
        "judge_tokens": sum((r["judge"] or {}).get("tokens", 0) for r in rows),
    }


def summarize_dir(run_dir: Path) -> dict[str, Any]:
    plan = read_json(run_dir / PLAN)
    run = read_json(run_dir / RUN) if (run_dir / RUN).exists() else None
    return summarize_records(plan, latest_records(run_dir), run)


def exit_code(summary: dict[str, Any]) -> int:
    """EXIT_OK every scenario passed; EXIT_FAILED one failed; EXIT_NO_VERDICT endpoint
    errors left one undecided."""
    from ..exits import EXIT_FAILED, EXIT_NO_VERDICT, EXIT_OK

    t = summary["totals"]
    if t["failed"]:
        return EXIT_FAILED
    if t["inconclusive"]:
        return EXIT_NO_VERDICT
    return EXIT_OK
