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
tool-call precision, recall and F1 (:mod:`dsl.toolcalls` counts each attempt); the
summary has the same F1 for the suite and per target. (The comparisons — with a baseline,
between the targets of the run — are :mod:`dsl.results.baseline`'s: the report stage adds them.)
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from pathlib import Path

import msgspec

from ..errors import said_short
from ..exits import EXIT_FAILED, EXIT_NO_VERDICT, EXIT_OK
from ..model import Tokens, Turn
from ..store import AttemptRecord, CheckResult, latest_records
from ..store.planfile import PlanFile, PlannedScenario, read_plan
from ..store.runfile import JudgeUse, RunInfo, read_run_info_if_any
from ..store.summaryfile import (
    CheckRow,
    FailingCheck,
    ItemRow,
    Latency,
    RowJudge,
    Skipped,
    Summary,
    SummaryJudge,
    SummaryRow,
    ToolCounts,
    ToolScores,
    Totals,
)
from ..toolcalls import COUNTS, ToolExpectation
from ..verdict import Tally
from .stats import PRF, Z95, pass_k_table, percentile, wilson

__all__ = ["Z95", "exit_code", "percentile", "summarize_dir", "summarize_records", "wilson"]


TOOL_OUTCOMES = ("tp", "fp", "fn", "tn")


class _Acc(msgspec.Struct):
    """Running totals for one scenario × target (a few numbers, plus latencies)."""

    tally: Tally
    expectation: ToolExpectation | None = None  # the scenario's, for tool-call F1
    latencies: list[float] = msgspec.field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    counted: int = 0  # attempts whose tokens are known
    uncounted: int = 0  # attempts of an agent that does not say its tokens (http, command)
    retries: int = 0
    turns_retried: int = 0  # own-loop turns sent again (records' retried)
    error_kinds: Counter[str] = msgspec.field(default_factory=Counter)
    failure_kinds: Counter[str] = msgspec.field(default_factory=Counter)  # model_output, max_steps
    said: dict[str, str] = msgspec.field(default_factory=dict)  # kind -> the first message of it
    check_pass: list[int] = msgspec.field(default_factory=list)
    check_seen: list[int] = msgspec.field(default_factory=list)
    check_unsure: list[int] = msgspec.field(default_factory=list)
    check_unseen: list[int] = msgspec.field(default_factory=list)  # not evaluated: turn not played
    check_undecided: list[int] = msgspec.field(default_factory=list)  # ...: its part failed first
    tools: dict[str, int] = msgspec.field(default_factory=lambda: dict.fromkeys(TOOL_OUTCOMES, 0))
    tools_expected: int = 0  # counted attempts whose scenario expects a tool call
    failing_checks: Counter[str] = msgspec.field(default_factory=Counter)
    always_failing: set[str] = msgspec.field(default_factory=set)  # labels of `always` checks
    judge_questions: int = 0
    judge_cached: int = 0
    judge_tokens: int = 0
    items: dict[int, dict[str, list[int]]] = msgspec.field(default_factory=dict)  # criteria


def summarize_records(plan: PlanFile, records: Iterable[AttemptRecord],
                      run: RunInfo | None = None) -> Summary:
    scenarios = {s.id: s for s in plan.scenarios}
    targets = plan.target_names
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
        if r.tokens is None:
            a.uncounted += 1
        else:
            a.counted += 1
            a.prompt_tokens += r.tokens.prompt
            a.completion_tokens += r.tokens.completion
        a.retries += r.retries
        a.turns_retried += len(r.retried)
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
        checks = r.counted_checks  # an answer that never came decides no check
        if len(a.check_seen) < len(checks):
            grow = len(checks) - len(a.check_seen)
            a.check_seen += [0] * grow
            a.check_pass += [0] * grow
            a.check_unsure += [0] * grow
            a.check_unseen += [0] * grow
            a.check_undecided += [0] * grow
        for i, c in enumerate(checks):
            if c.status == "not_evaluated":  # not a result: it counts neither way
                a.check_unseen[i] += 1
                a.check_undecided[i] += not _never_played(c.turn, r.turns)
                continue
            _judge_stats(a, c)
            for item in c.items:
                counts = a.items.setdefault(i, {}).setdefault(item.label, [0, 0])
                counts[1] += 1
                counts[0] += item.status == "pass"
            a.check_seen[i] += 1
            if c.status == "pass":
                a.check_pass[i] += 1
            elif c.status == "unsure":
                a.check_unsure[i] += 1
            else:
                a.failing_checks[c.label] += 1
                if c.always:
                    a.always_failing.add(c.label)
        expectation = a.expectation
        if expectation is not None:
            for counted in COUNTS[expectation.classify_attempt(r.calls, r.turns)]:
                a.tools[counted] += 1
            a.tools_expected += expectation.expects_any

    early = run.early_stop if run is not None else None
    saved = {(x.scenario, x.target): x.runs for x in early.by_scenario} if early else {}
    rows = []
    skipped = []
    for sid, spec in scenarios.items():
        for t in targets:
            if not spec.runs_on(t):
                skipped.append(_skipped(spec, t))
                continue
            rows.append(_row(spec, t, acc.get((sid, t)) or _new_acc(spec),
                             saved.get((sid, t), 0)))
    rows.sort(key=lambda r: (r.verdict == "pass", r.scenario, r.target))
    return Summary(
        targets=plan.targets,
        totals=_totals(rows, len(skipped)),
        scenarios=tuple(rows),
        run_id=run.run_id if run is not None else None,
        suite=plan.suite,
        started_at=(run.started_at if run is not None else None) or first_started,
        finished_at=(run.finished_at if run is not None else None) or last_started,
        duration_s=run.duration_s if run is not None else None,
        interrupted=bool(run.interrupted) if run is not None else False,
        stopped=run.stopped if run is not None else None,
        early_stop=early,
        shard=plan.shard,
        judge=_judge(run.judge) if run is not None else None,
        tool_calls=_tool_calls(rows, targets),
        skipped=tuple(skipped),
        missing_shards=run.missing_shards if run is not None else (),
    )


def _never_played(turn: int | None, turns: tuple[Turn, ...]) -> bool:
    """A check of a turn the agent never answered in (not reached, or a confirm that had
    nothing waiting); else a check whose part of the attempt failed before it decided."""
    return turn is not None and (turn > len(turns) or not turns[turn - 1].steps)


def _skipped(spec: PlannedScenario, target: str) -> Skipped:
    """A scenario × target the plan skips: the scenario's ``targets:`` leave it out."""
    return Skipped(scenario=spec.id, target=target, file=spec.file, line=spec.line,
                   description=spec.description, tags=spec.tags,
                   reason="the scenario is meant for " + ", ".join(spec.targets))


def _prf(rows: Iterable[SummaryRow]) -> ToolCounts:
    total = PRF(0, 0, 0)
    expected = 0
    for r in rows:
        t = r.tool_calls
        if t is not None:
            total += PRF(t.tp, t.fp, t.fn, t.tn)
            expected += t.tp + t.fn if t.expected is None else t.expected
    return tool_counts(total, expected)


def tool_counts(p: PRF, expected: int | None = None) -> ToolCounts:
    """The figures of ``p``; ``expected``: how many of its attempts expected a tool call
    (what recall's words need when it counts nothing: dsl/results/words.py)."""
    return ToolCounts(p.tp, p.fp, p.fn, p.tn, p.precision, p.recall, p.f1, expected)


def _tool_calls(rows: list[SummaryRow], targets: list[str]) -> ToolScores:
    """Tool-call precision, recall and F1 over the suite and per target."""
    return ToolScores(_prf(rows), {t: _prf(r for r in rows if r.target == t)
                                   for t in targets})


def _judge(use: JudgeUse | None) -> SummaryJudge | None:
    """The run's judge and whether it was measured (judge-check), in words."""
    if use is None:
        return None
    # why: the judge; run, report, recheck or merge load this module without it
    from ..judge.validation import ValidationInfo, validation_text

    checked = ValidationInfo.from_json(use.validation)
    return SummaryJudge(use.target, checked is not None, validation_text(checked))


def _new_acc(spec: PlannedScenario | None) -> _Acc:
    if spec is None:
        return _Acc(Tally(0, 0, False))
    return _Acc(Tally(spec.runs, spec.min_pass, spec.always), spec.tool_expectation)


def _judge_stats(a: _Acc, check: CheckResult) -> None:
    ev = check.evidence
    if ev is None:
        return
    for e in ev.answers:
        a.judge_questions += 1
        a.judge_cached += e.cached
        a.judge_tokens += e.tokens


def _row(spec: PlannedScenario, target: str, a: _Acc, saved: int = 0) -> SummaryRow:
    t = a.tally
    decided = t.decided
    low, high = wilson(t.passes, decided)
    planned = spec.runs
    checks = []
    for i, c in enumerate(spec.checks):
        seen = a.check_seen[i] if i < len(a.check_seen) else 0
        ok = a.check_pass[i] if i < len(a.check_pass) else 0
        unsure = a.check_unsure[i] if i < len(a.check_unsure) else 0
        unseen = a.check_unseen[i] if i < len(a.check_unseen) else 0
        undecided = a.check_undecided[i] if i < len(a.check_undecided) else 0
        c_low, c_high = wilson(ok, seen)
        items = tuple(ItemRow(label, n[0], n[1], n[0] / n[1] if n[1] else None,
                              *wilson(n[0], n[1]))
                      for label, n in a.items.get(i, {}).items())
        checks.append(CheckRow(check=c.check, label=c.label, judge=c.judge, passes=ok,
                               unsure=unsure, evaluated=seen,
                               pass_rate=ok / seen if seen else None, ci_low=c_low,
                               ci_high=c_high, always=c.always, not_evaluated=unseen,
                               not_decided=undecided,
                               items=items))
    at_k, hat_k = pass_k_table(decided, t.passes) if decided else ({}, {})
    mean = sum(a.latencies) / len(a.latencies) if a.latencies else None
    return SummaryRow(
        scenario=spec.id, target=target, verdict=t.verdict, passes=t.passes, decided=decided,
        file=spec.file, line=spec.line, description=spec.description, tags=spec.tags,
        planned=planned, runs=t.finished, fails=t.fails, unsure=t.unsure, errors=t.errors,
        saved=saved,  # runs not needed: the verdict was decided (early stop)
        not_run=max(0, planned - t.finished - saved), min_pass=spec.min_pass,
        pass_rate=t.passes / decided if decided else None, ci_low=low, ci_high=high,
        pass_at_k=at_k, pass_hat_k=hat_k,
        verdict_reason=t.reason,  # min_pass, always_broken or always_unseen
        always_broken=t.broken,  # attempts in which an `always` check did not pass
        file_runs=spec.runs_asked,  # what the file asks (before --runs)
        checks=tuple(checks),
        failing_checks=tuple(FailingCheck(k, n, k in a.always_failing)
                             for k, n in a.failing_checks.most_common()),
        latency_ms=Latency(mean, percentile(a.latencies, 50), percentile(a.latencies, 95)),
        tokens=(None if a.uncounted and not a.counted
                else Tokens(a.prompt_tokens, a.completion_tokens)),
        model_calls=t.steps,
        retries=a.retries, error_kinds=dict(a.error_kinds),
        failure_kinds=dict(a.failure_kinds),  # failed before the checks: model_output...
        error_messages=dict(a.said),  # per kind, what the first such attempt said
        tool_calls=(tool_counts(PRF(**a.tools), a.tools_expected) if a.expectation is not None
                    else None),
        judge=(RowJudge(a.judge_questions, a.judge_cached,
                        a.judge_questions - a.judge_cached, a.judge_tokens)
               if a.judge_questions else None),
        turns_retried=a.turns_retried)


MAX_SAID = 300  # characters of an endpoint's message kept in the summary (all: results.jsonl)


def _short(text: str) -> str:
    return text if len(text) <= MAX_SAID else said_short(text, MAX_SAID)


def _totals(rows: list[SummaryRow], skipped: int) -> Totals:
    attempts = sum(r.runs for r in rows)
    passes = sum(r.passes for r in rows)
    decided = sum(r.decided for r in rows)
    low, high = wilson(passes, decided)
    return Totals(
        scenarios=len(rows),
        passed=sum(r.verdict == "pass" for r in rows),
        failed=sum(r.verdict == "fail" for r in rows),
        inconclusive=sum(r.verdict == "inconclusive" for r in rows),
        attempts=attempts,
        passes=passes,
        fails=sum(r.fails for r in rows),
        unsure=sum(r.unsure for r in rows),
        errors=sum(r.errors for r in rows),
        not_run=sum(r.not_run for r in rows),
        saved=sum(r.saved for r in rows),
        pass_rate=passes / decided if decided else None,
        ci_low=low,
        ci_high=high,
        tokens=(None if rows and all(r.tokens is None for r in rows)
                else sum(r.tokens.total for r in rows if r.tokens is not None)),
        tokens_unknown=tuple(sorted({r.target for r in rows if r.tokens is None})),
        model_calls=sum(r.model_calls for r in rows),
        retries=sum(r.retries for r in rows),
        judge_questions=sum(r.judge.questions for r in rows if r.judge),
        judge_asked=sum(r.judge.asked for r in rows if r.judge),
        judge_tokens=sum(r.judge.tokens for r in rows if r.judge),
        skipped=skipped,
    )


def summarize_dir(run_dir: Path) -> Summary:
    return summarize_records(read_plan(run_dir), latest_records(run_dir),
                             read_run_info_if_any(run_dir))


def exit_code(summary: Summary) -> int:
    """EXIT_OK every scenario passed; EXIT_FAILED one failed; EXIT_NO_VERDICT endpoint
    errors left one undecided."""
    t = summary.totals
    if t.failed:
        return EXIT_FAILED
    if t.inconclusive:
        return EXIT_NO_VERDICT
    return EXIT_OK
