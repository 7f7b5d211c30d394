"""``summary.json``: what a run concluded — each scenario × target's verdict and statistics,
and the run's totals.

:class:`Summary` and its parts are the only description of the file;
:func:`summary_json` writes one (``dsl.results.summarize`` makes it from the records) and
:func:`summary_from_json` reads one back, checking ``schema_version`` and every field's
type. The report, the terminal, the CI files, the baseline, conformance and the history
read its attributes, never keys.

The file, as written (keys in this order; in a check ``always`` and ``items`` only when
set, in a failing check ``always`` only when set; a check's ``evaluated`` counts the attempts
in which it really was evaluated, and ``not_evaluated``, only when not 0, those in which it
was not — its turn was never played, or its part of the attempt failed before the checks
could decide: ``not_decided`` of them, only when not 0)::

    {"schema_version": 1, "run_id", "suite", "started_at", "finished_at", "duration_s",
     "interrupted", "stopped", "early_stop": run.json's | null, "shard": [I, N] | null,
     "targets": plan.json's, "judge": {"target", "validated", "validation"} | null,
     "totals": {"scenarios", "passed", "failed", "inconclusive", "attempts", "passes",
                "fails", "unsure", "errors", "not_run", "saved", "pass_rate", "ci_low",
                "ci_high", "tokens", "model_calls", "retries", "judge_questions",
                "judge_asked", "judge_tokens", "skipped", "tokens_unknown"?},
     "tool_calls": {"all": COUNTS, "by_target": {TARGET: COUNTS}},
     "scenarios": [ROW], "skipped": [{"scenario", "target", "file", "line",
                                      "description", "tags", "reason"}],
     "missing_shards"?: [{"shard": [I, N], "scenarios": [ID] | null}],
     "baseline": COMPARISON | null, "compare": [COMPARISON]}

    ROW = {"scenario", "target", "file", "line", "description", "tags", "planned", "runs",
           "decided", "passes", "fails", "unsure", "errors", "saved", "not_run", "min_pass",
           "pass_rate", "ci_low", "ci_high", "pass_at_k": {K: P}, "pass_hat_k": {K: P},
           "verdict", "verdict_reason", "always_broken", "passed", "file_runs",
           "checks": [{"check", "label", "judge", "passes", "unsure", "evaluated",
                       "pass_rate", "ci_low", "ci_high", "always"?, "not_evaluated"?,
                       "not_decided"?, "items"?: [{"label", "passes", "evaluated",
                                                   "pass_rate", "ci_low", "ci_high"}]}],
           "failing_checks": [{"label", "count", "always"?}],
           "latency_ms": {"mean", "p50", "p95"},
           "tokens": {"prompt", "completion", "total"} | null,
           "model_calls", "retries", "turns_retried"?, "error_kinds": {KIND: N},
           "failure_kinds": {KIND: N},
           "error_messages": {KIND: TEXT}, "tool_calls": COUNTS | null, "unsure_rate",
           "judge": {"questions", "cached", "asked", "tokens"} | null}
    COUNTS = {"tp", "fp", "fn", "tn", "precision", "recall", "f1", "expected"?}

A COUNTS' ``expected`` (attempts whose scenario expected a tool call) is there only when
recall counts nothing (no TP, no FN) although calls were expected: every such attempt made
an expected call but not the right calls (FP); the words then say "recall not measured",
never "no calls were expected".

``missing_shards`` only in a merge that was not given every shard (run.json's): the
scenarios those shards hold were not run, and have no row.

``tokens`` is null where no attempt's tokens are known — an agent that does not say what it
used (``kind: http``, ``command``): a row's when none of its attempts' are, the totals'
when no row's is. ``tokens_unknown`` (only when not empty) names the targets whose tokens
are unknown; the totals' ``tokens`` counts the others'.

``turns_retried`` (only when not 0) counts the turns of an agent that runs its own loop
sent again after a try that failed when the agent may have acted (``retry: {turns: true}``;
results.jsonl's ``retried`` says why).

``baseline`` and ``compare`` are comparisons as :class:`dsl.results.baseline.Comparison`
writes and reads them. Summaries written before a field existed read with its default.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Any, NamedTuple

from ..model import SCHEMA_VERSION, Tokens
from .fields import (
    FieldError,
    JSONObject,
    counts,
    each,
    inner,
    maybe,
    maybe_inner,
    need,
    obj,
    shard,
    texts,
)
from .jsonfile import from_json, read_file, write_json
from .planfile import PlannedTarget, _target
from .runfile import (
    EarlyStop,
    MissingShard,
    _early_stop,
    early_stop_json,
    missing_shard,
    missing_shard_json,
)

SUMMARY = "summary.json"


class ToolCounts(NamedTuple):
    """Tool-call precision, recall and F1 of a set of attempts, with their counts
    (dsl.results.stats.PRF computes them)."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    precision: float = 1.0
    recall: float = 1.0
    f1: float = 1.0
    # attempts counted whose scenario expected a tool call; kept in summary.json only when
    # recall has nothing to count though calls were expected (None: as tp + fn)
    expected: int | None = None

    @property
    def relevant(self) -> int:
        """Attempts the figures are about (true negatives play no part)."""
        return self.tp + self.fp + self.fn


NO_COUNTS = ToolCounts()  # (named tuples are immutable: one default for all)



class ToolScores(NamedTuple):
    all: ToolCounts
    by_target: Mapping[str, ToolCounts]


NO_SCORES = ToolScores(NO_COUNTS, MappingProxyType({}))


class ItemRow(NamedTuple):
    """One criterion of a ``criteria`` check: how often it was met."""

    label: str
    passes: int
    evaluated: int
    pass_rate: float | None
    ci_low: float
    ci_high: float


class CheckRow(NamedTuple):
    """One check of a scenario × target: how often it passed, with its 95% interval."""

    check: str
    label: str
    passes: int
    evaluated: int
    pass_rate: float | None
    ci_low: float = 0.0
    ci_high: float = 1.0
    judge: bool = False
    unsure: int = 0
    always: bool = False
    items: tuple[ItemRow, ...] = ()
    # attempts in which it was not evaluated: its turn was never played (an earlier turn
    # failed, a confirm had nothing waiting), or its part of the attempt failed before the
    # checks could decide (max_steps, a reply the server could not parse); neither passed
    # nor failed, not in `evaluated`
    not_evaluated: int = 0
    # of those, the attempts whose part failed before the checks could decide
    not_decided: int = 0


@dataclass(frozen=True, slots=True)
class FailingCheck:
    label: str
    count: int  # attempts it failed in
    always: bool = False


class Latency(NamedTuple):
    mean: float | None = None
    p50: float | None = None
    p95: float | None = None


NO_LATENCY = Latency()


class RowJudge(NamedTuple):
    """The questions a scenario × target asked the judge."""

    questions: int
    cached: int
    asked: int
    tokens: int


@dataclass(frozen=True, slots=True)
class SummaryRow:
    """One scenario × target: its counts, verdict, statistics and what failed."""

    scenario: str
    target: str
    verdict: str  # pass | fail | inconclusive (dsl.verdict.Tally)
    passes: int
    decided: int  # attempts that passed or failed (unsure and errors apart)
    file: str = ""
    line: int = 0
    description: str = ""
    tags: tuple[str, ...] = ()
    planned: int = 0
    runs: int = 0  # attempts that finished
    fails: int = 0
    unsure: int = 0
    errors: int = 0
    saved: int = 0  # runs early stop did not need
    not_run: int = 0
    min_pass: int = 0
    pass_rate: float | None = None
    ci_low: float = 0.0
    ci_high: float = 1.0
    pass_at_k: Mapping[str, float] = dataclasses.field(default_factory=dict)
    pass_hat_k: Mapping[str, float] = dataclasses.field(default_factory=dict)
    verdict_reason: str = "min_pass"  # min_pass, always_broken, always_unseen
    always_broken: int = 0  # attempts in which an always check did not pass
    file_runs: int | None = None  # what the file asks (before --runs); None: planned
    checks: tuple[CheckRow, ...] = ()
    failing_checks: tuple[FailingCheck, ...] = ()
    latency_ms: Latency = NO_LATENCY
    tokens: Tokens | None = Tokens()  # None: unknown (an agent that does not say them)
    model_calls: int = 0
    retries: int = 0
    error_kinds: Mapping[str, int] = dataclasses.field(default_factory=dict)
    failure_kinds: Mapping[str, int] = dataclasses.field(default_factory=dict)
    error_messages: Mapping[str, str] = dataclasses.field(default_factory=dict)
    tool_calls: ToolCounts | None = None  # None: its checks say nothing about tools
    judge: RowJudge | None = None
    turns_retried: int = 0  # own-loop turns sent again after a failed try (results' retried)

    @property
    def key(self) -> tuple[str, str]:
        return (self.scenario, self.target)

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"

    @property
    def runs_asked(self) -> int:
        """The runs its file asks for (before ``--runs``)."""
        return self.planned if self.file_runs is None else self.file_runs

    @property
    def unsure_rate(self) -> float | None:
        return self.unsure / self.decided if self.decided else None

    @property
    def problem_kinds(self) -> dict[str, int]:
        """Endpoint errors and failures before the checks, by kind."""
        return {**self.error_kinds, **self.failure_kinds}


class Skipped(NamedTuple):
    """A scenario × target the plan skips: the scenario's ``targets:`` leave it out."""

    scenario: str
    target: str
    file: str
    line: int
    reason: str
    description: str = ""
    tags: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Totals:
    scenarios: int = 0  # scenario × target rows
    passed: int = 0
    failed: int = 0
    inconclusive: int = 0
    attempts: int = 0
    passes: int = 0
    fails: int = 0
    unsure: int = 0
    errors: int = 0
    not_run: int = 0
    saved: int = 0
    pass_rate: float | None = None
    ci_low: float = 0.0
    ci_high: float = 1.0
    tokens: int | None = 0  # None: no attempt's tokens are known
    model_calls: int = 0
    retries: int = 0
    judge_questions: int = 0
    judge_asked: int = 0
    judge_tokens: int = 0
    skipped: int = 0
    tokens_unknown: tuple[str, ...] = ()  # targets that do not say their tokens (http, ...)


class SummaryJudge(NamedTuple):
    """The run's judge, and whether judge-check measured it (in words)."""

    target: str | None
    validated: bool
    validation: str


@dataclass(frozen=True, slots=True)
class Summary:
    """summary.json: see the module's docstring."""

    targets: tuple[PlannedTarget, ...]
    totals: Totals
    scenarios: tuple[SummaryRow, ...]  # the rows
    run_id: str | None = None
    suite: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_s: float | None = None
    interrupted: bool = False
    stopped: str | None = None
    early_stop: EarlyStop | None = None
    shard: tuple[int, int] | None = None
    judge: SummaryJudge | None = None
    tool_calls: ToolScores = NO_SCORES
    skipped: tuple[Skipped, ...] = ()
    missing_shards: tuple[MissingShard, ...] = ()  # a merge's: their scenarios were not run
    baseline: JSONObject | None = None  # the comparison with a baseline (Comparison's JSON)
    compare: tuple[JSONObject, ...] = ()  # each pair of targets compared (Comparison's JSON)

    def replace(self, **changes: Any) -> Summary:
        return dataclasses.replace(self, **changes)


# ---- writing -----------------------------------------------------------------------------

def counts_json(c: ToolCounts) -> dict[str, Any]:
    out = {"tp": c.tp, "fp": c.fp, "fn": c.fn, "tn": c.tn, "precision": c.precision,
           "recall": c.recall, "f1": c.f1}
    if c.expected and not c.tp + c.fn:  # recall counts nothing, yet calls were expected
        out["expected"] = c.expected
    return out


def check_row_json(c: CheckRow) -> dict[str, Any]:
    out: dict[str, Any] = {"check": c.check, "label": c.label, "judge": c.judge,
                           "passes": c.passes, "unsure": c.unsure, "evaluated": c.evaluated,
                           "pass_rate": c.pass_rate, "ci_low": c.ci_low,
                           "ci_high": c.ci_high}
    if c.always:
        out["always"] = True
    if c.not_evaluated:
        out["not_evaluated"] = c.not_evaluated
    if c.not_decided:
        out["not_decided"] = c.not_decided
    if c.items:
        out["items"] = [{"label": i.label, "passes": i.passes, "evaluated": i.evaluated,
                         "pass_rate": i.pass_rate, "ci_low": i.ci_low, "ci_high": i.ci_high}
                        for i in c.items]
    return out


def row_json(r: SummaryRow) -> dict[str, Any]:
    j = r.judge
    return {
        "scenario": r.scenario, "target": r.target, "file": r.file, "line": r.line,
        "description": r.description, "tags": list(r.tags), "planned": r.planned,
        "runs": r.runs, "decided": r.decided, "passes": r.passes, "fails": r.fails,
        "unsure": r.unsure, "errors": r.errors, "saved": r.saved, "not_run": r.not_run,
        "min_pass": r.min_pass, "pass_rate": r.pass_rate, "ci_low": r.ci_low,
        "ci_high": r.ci_high, "pass_at_k": dict(r.pass_at_k),
        "pass_hat_k": dict(r.pass_hat_k), "verdict": r.verdict,
        "verdict_reason": r.verdict_reason, "always_broken": r.always_broken,
        "passed": r.passed, "file_runs": r.runs_asked,
        "checks": [check_row_json(c) for c in r.checks],
        "failing_checks": [{"label": f.label, "count": f.count,
                            **({"always": True} if f.always else {})}
                           for f in r.failing_checks],
        "latency_ms": {"mean": r.latency_ms.mean, "p50": r.latency_ms.p50,
                       "p95": r.latency_ms.p95},
        "tokens": None if r.tokens is None else {
            "prompt": r.tokens.prompt, "completion": r.tokens.completion,
            "total": r.tokens.total},
        "model_calls": r.model_calls, "retries": r.retries,
        **({"turns_retried": r.turns_retried} if r.turns_retried else {}),
        "error_kinds": dict(r.error_kinds), "failure_kinds": dict(r.failure_kinds),
        "error_messages": dict(r.error_messages),
        "tool_calls": None if r.tool_calls is None else counts_json(r.tool_calls),
        "unsure_rate": r.unsure_rate,
        "judge": None if j is None else {"questions": j.questions, "cached": j.cached,
                                         "asked": j.asked, "tokens": j.tokens},
    }


def _totals_json(t: Totals) -> dict[str, Any]:
    out = dataclasses.asdict(t)
    if t.tokens_unknown:
        out["tokens_unknown"] = list(t.tokens_unknown)
    else:
        del out["tokens_unknown"]
    return out


def summary_json(s: Summary) -> dict[str, Any]:
    """The summary as the JSON object of summary.json."""
    j = s.judge
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": s.run_id,
        "suite": s.suite,
        "started_at": s.started_at,
        "finished_at": s.finished_at,
        "duration_s": s.duration_s,
        "interrupted": s.interrupted,
        "stopped": s.stopped,
        "early_stop": None if s.early_stop is None else early_stop_json(s.early_stop),
        "shard": list(s.shard) if s.shard else None,
        "targets": [t.as_json() for t in s.targets],
        "judge": None if j is None else {"target": j.target, "validated": j.validated,
                                         "validation": j.validation},
        "totals": _totals_json(s.totals),
        "tool_calls": {"all": counts_json(s.tool_calls.all),
                       "by_target": {t: counts_json(c)
                                     for t, c in s.tool_calls.by_target.items()}},
        "scenarios": [row_json(r) for r in s.scenarios],
        "skipped": [{"scenario": k.scenario, "target": k.target, "file": k.file,
                     "line": k.line, "description": k.description, "tags": list(k.tags),
                     "reason": k.reason} for k in s.skipped],
        **({"missing_shards": [missing_shard_json(m) for m in s.missing_shards]}
           if s.missing_shards else {}),
        "baseline": None if s.baseline is None else dict(s.baseline),
        "compare": [dict(c) for c in s.compare],
    }


def write_summary(run_dir: Path, summary: Summary) -> None:
    """Write summary.json into ``run_dir`` (atomically)."""
    write_json(run_dir / SUMMARY, summary_json(summary))


# ---- reading -----------------------------------------------------------------------------

def _counts(d: Any) -> ToolCounts:
    d = obj(d)
    return ToolCounts(need(d, "tp", int), need(d, "fp", int), need(d, "fn", int),
                      maybe(d, "tn", int, 0), maybe(d, "precision", float, 1.0),
                      maybe(d, "recall", float, 1.0), maybe(d, "f1", float, 1.0),
                      maybe(d, "expected", int))


def _tool_scores(d: JSONObject) -> ToolScores:
    by_target = maybe(d, "by_target", dict, {})
    found = {}
    for name, c in by_target.items():
        try:
            found[name] = _counts(c)
        except FieldError as exc:
            raise exc.inside(f"by_target.{name}") from None
    return ToolScores(inner(d, "all", _counts), found)


def _item(d: Any) -> ItemRow:
    d = obj(d)
    return ItemRow(need(d, "label", str), need(d, "passes", int), need(d, "evaluated", int),
                   maybe(d, "pass_rate", float), maybe(d, "ci_low", float, 0.0),
                   maybe(d, "ci_high", float, 1.0))


def _check(d: Any) -> CheckRow:
    d = obj(d)
    return CheckRow(need(d, "check", str), need(d, "label", str), need(d, "passes", int),
                    need(d, "evaluated", int), maybe(d, "pass_rate", float),
                    maybe(d, "ci_low", float, 0.0), maybe(d, "ci_high", float, 1.0),
                    maybe(d, "judge", bool, False), maybe(d, "unsure", int, 0),
                    maybe(d, "always", bool, False), each(d, "items", _item, required=False),
                    maybe(d, "not_evaluated", int, 0), maybe(d, "not_decided", int, 0))


def _failing(d: Any) -> FailingCheck:
    d = obj(d)
    return FailingCheck(need(d, "label", str), need(d, "count", int),
                        maybe(d, "always", bool, False))


def _latency(d: JSONObject) -> Latency:
    return Latency(maybe(d, "mean", float), maybe(d, "p50", float), maybe(d, "p95", float))


def _tokens(d: JSONObject) -> Tokens:
    return Tokens(maybe(d, "prompt", int, 0), maybe(d, "completion", int, 0))


def _row_judge(d: JSONObject) -> RowJudge:
    return RowJudge(maybe(d, "questions", int, 0), maybe(d, "cached", int, 0),
                    maybe(d, "asked", int, 0), maybe(d, "tokens", int, 0))


def _rates(d: JSONObject, key: str) -> dict[str, float]:
    return counts(d, key, float)


_COUNTS = ("passes", "decided", "planned", "runs", "fails", "unsure", "errors", "saved",
           "not_run", "min_pass", "always_broken", "model_calls", "retries", "turns_retried")
_RATES = ("pass_rate", "ci_low", "ci_high")


def _sound(row: SummaryRow) -> SummaryRow:
    """A row whose counts a summary could have: none below 0, the passes within the decided
    attempts, rates between 0 and 1 (a tampered summary.json would otherwise break the
    statistics that read it: the intervals of ``diff``)."""
    for name in _COUNTS:
        value = getattr(row, name)
        if value < 0:
            raise FieldError(name, f"is {value}, not a count")
    for name in _RATES:
        value = getattr(row, name)
        if value is not None and not 0 <= value <= 1:
            raise FieldError(name, f"is {value}, not a rate between 0 and 1")
    if row.passes > row.decided:
        raise FieldError("passes", f"is {row.passes}, more than its decided attempts "
                                   f"({row.decided})")
    return row


def row_from_json(d: Any) -> SummaryRow:
    d = obj(d)
    return _sound(SummaryRow(
        scenario=need(d, "scenario", str), target=need(d, "target", str),
        verdict=need(d, "verdict", str), passes=need(d, "passes", int),
        decided=need(d, "decided", int), file=maybe(d, "file", str, ""),
        line=maybe(d, "line", int, 0), description=maybe(d, "description", str, ""),
        tags=texts(d, "tags"), planned=maybe(d, "planned", int, 0),
        runs=maybe(d, "runs", int, 0), fails=maybe(d, "fails", int, 0),
        unsure=maybe(d, "unsure", int, 0), errors=maybe(d, "errors", int, 0),
        saved=maybe(d, "saved", int, 0), not_run=maybe(d, "not_run", int, 0),
        min_pass=maybe(d, "min_pass", int, 0), pass_rate=maybe(d, "pass_rate", float),
        ci_low=maybe(d, "ci_low", float, 0.0), ci_high=maybe(d, "ci_high", float, 1.0),
        pass_at_k=_rates(d, "pass_at_k"), pass_hat_k=_rates(d, "pass_hat_k"),
        verdict_reason=maybe(d, "verdict_reason", str, "min_pass"),
        always_broken=maybe(d, "always_broken", int, 0),
        file_runs=maybe(d, "file_runs", int),
        checks=each(d, "checks", _check, required=False),
        failing_checks=each(d, "failing_checks", _failing, required=False),
        latency_ms=maybe_inner(d, "latency_ms", _latency) or Latency(),
        tokens=(None if "tokens" in d and d["tokens"] is None
                else maybe_inner(d, "tokens", _tokens) or Tokens()),
        model_calls=maybe(d, "model_calls", int, 0), retries=maybe(d, "retries", int, 0),
        error_kinds=counts(d, "error_kinds"), failure_kinds=counts(d, "failure_kinds"),
        error_messages=counts(d, "error_messages", str),
        tool_calls=None if d.get("tool_calls") is None else inner(d, "tool_calls", _counts),
        judge=maybe_inner(d, "judge", _row_judge),
        turns_retried=maybe(d, "turns_retried", int, 0)))


def _skipped(d: Any) -> Skipped:
    d = obj(d)
    return Skipped(need(d, "scenario", str), need(d, "target", str), maybe(d, "file", str, ""),
                   maybe(d, "line", int, 0), maybe(d, "reason", str, ""),
                   maybe(d, "description", str, ""), texts(d, "tags"))


def _totals(d: JSONObject) -> Totals:
    fields = {f.name: f for f in dataclasses.fields(Totals)}
    values: dict[str, Any] = {}
    for name in fields:
        if name == "tokens_unknown":
            values[name] = texts(d, name)
            continue
        kind = float if name in ("pass_rate", "ci_low", "ci_high") else int
        value = maybe(d, name, kind)
        if value is not None:
            values[name] = value
    if "tokens" in d and d["tokens"] is None:
        values["tokens"] = None
    return Totals(**values)


def _judge(d: JSONObject) -> SummaryJudge:
    return SummaryJudge(maybe(d, "target", str), maybe(d, "validated", bool, False),
                        maybe(d, "validation", str, ""))


def summary_from_json(d: JSONObject) -> Summary:
    """A summary from summary.json's JSON (its version already checked). Raises FieldError."""
    if type(d.get("scenarios")) is not list:
        raise FieldError("", "(no 'scenarios' list)")
    compare = d.get("compare")
    return Summary(
        targets=each(d, "targets", _target, required=False),
        totals=maybe_inner(d, "totals", _totals) or Totals(),
        scenarios=each(d, "scenarios", row_from_json),
        run_id=maybe(d, "run_id", str), suite=maybe(d, "suite", str),
        started_at=maybe(d, "started_at", str), finished_at=maybe(d, "finished_at", str),
        duration_s=maybe(d, "duration_s", float),
        interrupted=maybe(d, "interrupted", bool, False), stopped=maybe(d, "stopped", str),
        early_stop=maybe_inner(d, "early_stop", _early_stop), shard=shard(d),
        judge=maybe_inner(d, "judge", _judge),
        tool_calls=maybe_inner(d, "tool_calls", _tool_scores) or NO_SCORES,
        skipped=each(d, "skipped", _skipped, required=False),
        missing_shards=each(d, "missing_shards", missing_shard, required=False),
        baseline=None if d.get("baseline") is None else obj(d.get("baseline"), "baseline"),
        compare=() if compare is None else each(d, "compare", obj))


def read_summary(path: Path) -> Summary:
    """A summary.json file. RunDirError (with the file) when it is missing, of another
    version, or not a run's summary."""
    return read_file(path, summary_from_json, "a run summary")


def kept_comparison(path: Path) -> JSONObject | None:
    """What a summary.json kept under ``baseline`` (the comparison it was made with), its
    rows left unread: making a summary again needs only this. RunDirError as
    :func:`read_summary`'s."""
    def baseline(d: JSONObject) -> JSONObject | None:
        value = d.get("baseline")
        return None if value is None else obj(value, "baseline")

    return read_file(path, baseline, "a run summary")


def summary_of(data: Any, where: object = "the summary") -> Summary:
    """A summary from JSON already parsed (its version checked here)."""
    return from_json(data, summary_from_json, "a run summary", where)
