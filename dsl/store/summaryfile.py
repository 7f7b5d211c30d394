"""``summary.json``: what a run concluded — each scenario × target's verdict and statistics,
and the run's totals.

:class:`Summary` and its parts (frozen msgspec Structs, their fields in the order of the
file's keys) are the only description of the file: :func:`write_summary` writes one
(``dsl.results.summarize`` makes it from the records), byte for byte as before msgspec
wrote it, and :func:`read_summary` reads one back — msgspec decodes the file into the
Summary, checking ``schema_version``, every field's type, and that no count is below 0 and
no rate outside 0..1 (``Count``, ``Rate``); :func:`sound` adds that no row passed more
attempts than it decided. The report, the terminal, the CI files, the baseline,
conformance and the history read its attributes, never keys.

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

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any, ClassVar

import msgspec
from msgspec.structs import force_setattr

from ..errors import RunDirError
from ..model import SCHEMA_VERSION, Tokens
from .jsonfile import read_file, write_json
from .planfile import PlannedTarget
from .runfile import EarlyStop, MissingShard
from .typed import Reading, from_data, json_data

SUMMARY = "summary.json"

# What a summary's counts and rates may be (msgspec checks them as it reads the file; the
# description is what a refusal says: "scenarios[0].runs is -1, not a count")
Count = Annotated[int, msgspec.Meta(ge=0, description="a count")]
Rate = Annotated[float, msgspec.Meta(ge=0, le=1, description="a rate between 0 and 1")]


class ToolCounts(msgspec.Struct, frozen=True, gc=False):
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

    def unwritten(self) -> list[str]:
        """``expected`` is written only when recall counts nothing though calls were
        expected (see the module's docstring)."""
        return [] if self.expected and not self.tp + self.fn else ["expected"]

    @property
    def relevant(self) -> int:
        """Attempts the figures are about (true negatives play no part)."""
        return self.tp + self.fp + self.fn


NO_COUNTS = ToolCounts()


class ToolScores(msgspec.Struct, frozen=True, gc=False):
    all: ToolCounts = NO_COUNTS
    by_target: Mapping[str, ToolCounts] = msgspec.field(default_factory=dict)


class ItemRow(msgspec.Struct, frozen=True, gc=False):
    """One criterion of a ``criteria`` check: how often it was met."""

    label: str
    passes: int
    evaluated: int
    pass_rate: float | None = None
    ci_low: float = 0.0
    ci_high: float = 1.0


class CheckRow(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """One check of a scenario × target: how often it passed, with its 95% interval."""

    only_when_set: ClassVar[tuple[str, ...]] = ("always", "not_evaluated", "not_decided",
                                                "items")

    check: str
    label: str
    judge: bool = False
    passes: int
    unsure: int = 0
    evaluated: int
    pass_rate: float | None = None
    ci_low: float = 0.0
    ci_high: float = 1.0
    always: bool = False
    # attempts in which it was not evaluated: its turn was never played (an earlier turn
    # failed, a confirm had nothing waiting), or its part of the attempt failed before the
    # checks could decide (max_steps, a reply the server could not parse); neither passed
    # nor failed, not in `evaluated`
    not_evaluated: int = 0
    # of those, the attempts whose part failed before the checks could decide
    not_decided: int = 0
    items: tuple[ItemRow, ...] = ()


class FailingCheck(msgspec.Struct, frozen=True, gc=False):
    only_when_set: ClassVar[tuple[str, ...]] = ("always",)

    label: str
    count: int  # attempts it failed in
    always: bool = False


class Latency(msgspec.Struct, frozen=True, gc=False):
    mean: float | None = None
    p50: float | None = None
    p95: float | None = None


NO_LATENCY = Latency()


class RowJudge(msgspec.Struct, frozen=True, gc=False):
    """The questions a scenario × target asked the judge."""

    questions: int = 0
    cached: int = 0
    asked: int = 0
    tokens: int = 0


class SummaryRow(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """One scenario × target: its counts, verdict, statistics and what failed.
    ``passed``, ``file_runs`` (when not given: ``planned``) and ``unsure_rate`` follow from
    the others: the file keeps them for its readers."""

    only_when_set: ClassVar[tuple[str, ...]] = ("turns_retried",)

    scenario: str
    target: str
    file: str = ""
    line: int = 0
    description: str = ""
    tags: tuple[str, ...] = ()
    planned: Count = 0
    runs: Count = 0  # attempts that finished
    decided: Count  # attempts that passed or failed (unsure and errors apart)
    passes: Count
    fails: Count = 0
    unsure: Count = 0
    errors: Count = 0
    saved: Count = 0  # runs early stop did not need
    not_run: Count = 0
    min_pass: Count = 0
    pass_rate: Rate | None = None
    ci_low: Rate = 0.0
    ci_high: Rate = 1.0
    pass_at_k: Mapping[str, float] = msgspec.field(default_factory=dict)
    pass_hat_k: Mapping[str, float] = msgspec.field(default_factory=dict)
    verdict: str  # pass | fail | inconclusive (dsl.verdict.Tally)
    verdict_reason: str = "min_pass"  # min_pass, always_broken, always_unseen
    always_broken: Count = 0  # attempts in which an always check did not pass
    passed: bool = False  # verdict == "pass"
    file_runs: int | None = None  # what the file asks (before --runs); None: planned
    checks: tuple[CheckRow, ...] = ()
    failing_checks: tuple[FailingCheck, ...] = ()
    latency_ms: Latency = NO_LATENCY
    tokens: Tokens | None = Tokens()  # None: unknown (an agent that does not say them)
    model_calls: Count = 0
    retries: Count = 0
    turns_retried: Count = 0  # own-loop turns sent again after a failed try (results' retried)
    error_kinds: Mapping[str, int] = msgspec.field(default_factory=dict)
    failure_kinds: Mapping[str, int] = msgspec.field(default_factory=dict)
    error_messages: Mapping[str, str] = msgspec.field(default_factory=dict)
    tool_calls: ToolCounts | None = None  # None: its checks say nothing about tools
    unsure_rate: float | None = None  # unsure / decided
    judge: RowJudge | None = None

    def __post_init__(self) -> None:
        force_setattr(self, "passed", self.verdict == "pass")
        if self.file_runs is None:
            force_setattr(self, "file_runs", self.planned)
        force_setattr(self, "unsure_rate", self.unsure / self.decided if self.decided
                      else None)

    @property
    def key(self) -> tuple[str, str]:
        return (self.scenario, self.target)

    @property
    def runs_asked(self) -> int:
        """The runs its file asks for (before ``--runs``)."""
        return self.planned if self.file_runs is None else self.file_runs

    @property
    def problem_kinds(self) -> dict[str, int]:
        """Endpoint errors and failures before the checks, by kind."""
        return {**self.error_kinds, **self.failure_kinds}


class Skipped(msgspec.Struct, frozen=True, gc=False, kw_only=True):
    """A scenario × target the plan skips: the scenario's ``targets:`` leave it out."""

    scenario: str
    target: str
    file: str = ""
    line: int = 0
    description: str = ""
    tags: tuple[str, ...] = ()
    reason: str = ""


class Totals(msgspec.Struct, frozen=True, gc=False):
    only_when_set: ClassVar[tuple[str, ...]] = ("tokens_unknown",)

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


class SummaryJudge(msgspec.Struct, frozen=True, gc=False):
    """The run's judge, and whether judge-check measured it (in words)."""

    target: str | None = None
    validated: bool = False
    validation: str = ""


class Summary(msgspec.Struct, frozen=True, kw_only=True, tag_field="schema_version",
              tag=SCHEMA_VERSION):
    """summary.json: see the module's docstring."""

    only_when_set: ClassVar[tuple[str, ...]] = ("missing_shards",)

    run_id: str | None = None
    suite: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    duration_s: float | None = None
    interrupted: bool = False
    stopped: str | None = None
    early_stop: EarlyStop | None = None
    shard: tuple[int, int] | None = None
    targets: tuple[PlannedTarget, ...] = ()
    judge: SummaryJudge | None = None
    totals: Totals = Totals()
    tool_calls: ToolScores = ToolScores()
    scenarios: tuple[SummaryRow, ...]  # the rows
    skipped: tuple[Skipped, ...] = ()
    missing_shards: tuple[MissingShard, ...] = ()  # a merge's: their scenarios were not run
    baseline: Mapping[str, Any] | None = None  # the comparison with a baseline (its JSON)
    compare: tuple[Mapping[str, Any], ...] = ()  # each pair of targets compared (its JSON)

    def replace(self, **changes: Any) -> Summary:
        return msgspec.structs.replace(self, **changes)


# ---- writing -----------------------------------------------------------------------------

def summary_json(s: Summary) -> dict[str, Any]:
    """The summary as summary.json's JSON object."""
    data: dict[str, Any] = json_data(s)
    return data


def write_summary(run_dir: Path, summary: Summary) -> None:
    """Write summary.json into ``run_dir`` (atomically)."""
    write_json(run_dir / SUMMARY, summary)


# ---- reading -----------------------------------------------------------------------------

_LACKING = {"scenarios": "(no 'scenarios' list)"}


def sound(summary: Summary, where: object) -> Summary:
    """``summary`` when each row passed no more attempts than it decided (a tampered
    summary.json would otherwise break the statistics that read it: the intervals of
    ``diff``); RunDirError saying which row otherwise."""
    for i, row in enumerate(summary.scenarios):
        if row.passes > row.decided:
            raise RunDirError(f"{where} is not a run summary: scenarios[{i}].passes is "
                              f"{row.passes}, more than its decided attempts ({row.decided})")
    return summary


def read_summary(path: Path) -> Summary:
    """A summary.json file. RunDirError (with the file) when it is missing, of another
    version, or not a run's summary."""
    return sound(read_file(path, Summary, "a run summary", lacking=_LACKING), path)


class _Kept(msgspec.Struct, frozen=True, tag_field="schema_version", tag=SCHEMA_VERSION):
    baseline: Mapping[str, Any] | None = None


def kept_comparison(path: Path) -> Mapping[str, Any] | None:
    """What a summary.json kept under ``baseline`` (the comparison it was made with), its
    rows left unread: making a summary again needs only this. RunDirError as
    :func:`read_summary`'s."""
    return read_file(path, _Kept, "a run summary").baseline


def summary_from_json(data: Any, where: object = "the summary") -> Summary:
    """A summary from summary.json's JSON already parsed, its schema_version checked when
    it has one (RunDirError as :func:`read_summary`'s)."""
    return sound(from_data(data, Summary, Reading(where, "a run summary", lacking=_LACKING),
                           versioned=False), where)


def summary_of(data: Any, where: object = "the summary") -> Summary:
    """A summary from JSON already parsed, which must have its schema_version."""
    return sound(from_data(data, Summary, Reading(where, "a run summary", lacking=_LACKING)),
                 where)
