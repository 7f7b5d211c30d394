"""``run.json``: how a run went — when, with what, what it saved, what it was told.

:class:`RunInfo` is the only description of the file; :func:`run_json` writes one and
:func:`run_from_json` reads one back, checking ``schema_version`` and every field's type.
A run writes it as it starts (``--resume`` and ``recheck`` read its ``settings`` to run the
same plan again) and again as it ends; recheck and merge write their own.

The file, as written (keys in this order; a key whose value is unknown or empty is left
out, except ``suite``, ``started_at``, ``targets``, ``git`` and ``history``, and
``early_stop`` and ``stopped`` once a run has ended)::

    {"schema_version": 1, "run_id": ID, "scenarist": VERSION, "python": VERSION,
     "suite": PATH, "merged_from"?: [ID],
     "missing_shards"?: [{"shard": [I, N], "scenarios": [ID] | null}],
     "started_at": ISO-8601,
     "rechecked_at"?, "recheck_of"?: ID, "rechecked_from"?: PATH,
     "refused"?: [{"scenario", "why"}],
     "targets": [{"name", "kind", ...}], "argv"?: [ARG],
     "settings"?: {"paths", "extra_files", "targets", "runs", "shard", "early_stop",
                   "judge", "tags", "patterns"},
     "compare"?: [[OLD, NEW]], "git": {"commit", "branch", "dirty"} | null,
     "history": {"kind", "target"} | null, "resumed_at"?: [ISO-8601],
     "reran_errors"?: true, "finished_at"?, "duration_s"?, "interrupted"?,
     "early_stop"?: {"runs", "model_calls", "by_scenario": [{"scenario", "target", "runs"}]},
     "stopped"?: TEXT, "targets_down"?: {TARGET: WHY}, "throttled"?: {TARGET: N},
     "judge"?: {"asked", "cache_hits", "tokens", "not_cached"?, "cache", "target",
                "validation"}}

``missing_shards`` (a merge): the shards of the plan that were not merged, and the
scenarios each held (null: unknown — the shards were run by a Scenarist that did not keep
the whole plan's scenarios); those scenarios were not run.

``history`` says which history the run was recorded in (never a password); it is a record,
never an instruction: commands that read a run folder choose their history from the
suite's own configuration or ``SCENARIST_HISTORY`` (dsl/pipeline/).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..model import SCHEMA_VERSION
from .fields import (
    FieldError,
    JSONObject,
    counts,
    each,
    maybe,
    maybe_inner,
    need,
    obj,
    shard,
    texts,
)
from .jsonfile import read_file, write_json
from .planfile import PlannedTarget, _target

RUN = "run.json"


class RunSettings(NamedTuple):
    """What ``--resume`` needs to run the same plan again (and recheck to compile it)."""

    paths: tuple[str, ...]
    extra_files: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    runs: int | None = None
    shard: tuple[int, int] | None = None
    early_stop: bool = True
    judge: str | None = None
    tags: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()


class SavedRuns(NamedTuple):
    """Runs of one scenario × target that early stop did not need."""

    scenario: str
    target: str
    runs: int


class EarlyStop(NamedTuple):
    runs: int = 0
    model_calls: int = 0  # estimated from the mean steps of the attempts that ran
    by_scenario: tuple[SavedRuns, ...] = ()


class Git(NamedTuple):
    commit: str
    branch: str | None = None
    dirty: str | None = None  # "yes" when files differed from the commit


class HistoryKept(NamedTuple):
    """Which history the run was recorded in: ``sqlite`` and its file, or ``postgresql``
    and its URL without a password."""

    kind: str
    target: str


class JudgeUse(NamedTuple):
    """What the run asked its judge."""

    asked: int = 0
    cache_hits: int = 0
    tokens: int = 0
    not_cached: int | None = None  # recheck without --judge: questions left unasked
    cache: bool = True  # --no-judge-cache turned it off
    target: str | None = None
    validation: JSONObject | None = None  # dsl.judge.validation.ValidationInfo's JSON

    @classmethod
    def of(cls, stats: JudgeStats, cache: bool, target: str | None,
           validation: JSONObject | None) -> JudgeUse:
        """The entry of a run (or a recheck) whose judge answered ``stats``."""
        return cls(stats.asked, stats.cache_hits, stats.tokens, stats.not_cached, cache,
                   target, validation)


class JudgeStats(NamedTuple):
    """What a judge counted while it was asked (dsl.judge.Judge.stats)."""

    asked: int
    cache_hits: int
    tokens: int
    not_cached: int | None = None  # only when it was told not to ask what it lacks


class MissingShard(NamedTuple):
    """A shard a merge was not given: which one, and the scenarios it held (None:
    unknown), which were not run."""

    shard: tuple[int, int]
    scenarios: tuple[str, ...] | None

    @property
    def name(self) -> str:
        return f"{self.shard[0]}/{self.shard[1]}"


def missing_shard_json(m: MissingShard) -> dict[str, Any]:
    return {"shard": list(m.shard),
            "scenarios": None if m.scenarios is None else list(m.scenarios)}


def missing_shard(d: Any) -> MissingShard:
    """One entry of ``missing_shards`` (run.json's, summary.json's). Raises FieldError."""
    d = obj(d)
    at = shard(d)
    if at is None:
        raise FieldError("shard", "is missing")
    return MissingShard(at, None if d.get("scenarios") is None else texts(d, "scenarios"))


class Refused(NamedTuple):
    """A scenario that recheck refused, and why."""

    scenario: str
    why: str


@dataclass(frozen=True, slots=True)
class RunInfo:
    """run.json: see the module's docstring."""

    run_id: str
    targets: tuple[PlannedTarget, ...] = ()
    suite: str | None = None
    started_at: str | None = None
    scenarist: str | None = None  # the version that ran it
    python: str | None = None
    argv: tuple[str, ...] | None = None
    settings: RunSettings | None = None
    compare: tuple[tuple[str, str], ...] | None = None
    git: Git | None = None
    history: HistoryKept | None = None
    resumed_at: tuple[str, ...] = ()
    reran_errors: bool = False  # --retry-errors: results.jsonl may hold an attempt twice
    finished_at: str | None = None
    duration_s: float | None = None
    interrupted: bool | None = None  # None: the run has not ended (or was not told)
    early_stop: EarlyStop | None = None
    stopped: str | None = None  # why it stopped handing out attempts (a budget)
    targets_down: JSONObject | None = None  # target -> why it was given up on
    throttled: JSONObject | None = None  # target -> the lowest concurrency it came to
    judge: JudgeUse | None = None
    merged_from: tuple[str, ...] | None = None  # merge: the shards' run ids
    missing_shards: tuple[MissingShard, ...] = ()  # merge: the shards it was not given
    recheck_of: str | None = None  # recheck: the run whose transcripts it checked again
    rechecked_from: str | None = None
    rechecked_at: str | None = None
    refused: tuple[Refused, ...] | None = None

    def replace(self, **changes: Any) -> RunInfo:
        return dataclasses.replace(self, **changes)


def new_run_info(run_id: str, suite: str | None, started: dt.datetime,
                 targets: tuple[PlannedTarget, ...], argv: tuple[str, ...]) -> RunInfo:
    """run.json of a run that is starting."""
    from .. import __version__

    return RunInfo(run_id, targets, suite, started.isoformat(timespec="seconds"),
                   __version__, sys.version.split()[0], argv)


# ---- writing -----------------------------------------------------------------------------

def settings_json(s: RunSettings) -> dict[str, Any]:
    return {"paths": list(s.paths), "extra_files": list(s.extra_files),
            "targets": list(s.targets), "runs": s.runs,
            "shard": list(s.shard) if s.shard else None, "early_stop": s.early_stop,
            "judge": s.judge, "tags": list(s.tags), "patterns": list(s.patterns)}


def early_stop_json(e: EarlyStop) -> dict[str, Any]:
    return {"runs": e.runs, "model_calls": e.model_calls,
            "by_scenario": [{"scenario": x.scenario, "target": x.target, "runs": x.runs}
                            for x in e.by_scenario]}


def judge_use_json(j: JudgeUse) -> dict[str, Any]:
    out: dict[str, Any] = {"asked": j.asked, "cache_hits": j.cache_hits, "tokens": j.tokens}
    if j.not_cached is not None:
        out["not_cached"] = j.not_cached
    out.update(cache=j.cache, target=j.target,
               validation=None if j.validation is None else dict(j.validation))
    return out


def run_json(r: RunInfo) -> dict[str, Any]:
    """The run's information as the JSON object of run.json."""
    out: dict[str, Any] = {"schema_version": SCHEMA_VERSION, "run_id": r.run_id}
    put = out.__setitem__

    def some(key: str, value: Any) -> None:
        if value is not None:
            put(key, value)

    some("scenarist", r.scenarist)
    some("python", r.python)
    put("suite", r.suite)
    some("merged_from", None if r.merged_from is None else list(r.merged_from))
    if r.missing_shards:
        put("missing_shards", [missing_shard_json(m) for m in r.missing_shards])
    put("started_at", r.started_at)
    if r.recheck_of is not None:
        put("finished_at", r.finished_at)
        some("rechecked_at", r.rechecked_at)
        put("recheck_of", r.recheck_of)
        some("rechecked_from", r.rechecked_from)
        put("refused", [{"scenario": x.scenario, "why": x.why} for x in r.refused or ()])
    put("targets", [t.as_json() for t in r.targets])
    some("argv", None if r.argv is None else list(r.argv))
    some("settings", None if r.settings is None else settings_json(r.settings))
    some("compare", None if r.compare is None else [list(p) for p in r.compare])
    if r.merged_from is None:
        put("git", None if r.git is None else {"commit": r.git.commit, "branch": r.git.branch,
                                               "dirty": r.git.dirty})
        put("history", None if r.history is None else {"kind": r.history.kind,
                                                       "target": r.history.target})
    if r.resumed_at:
        put("resumed_at", list(r.resumed_at))
    if r.reran_errors:
        put("reran_errors", True)
    if r.recheck_of is None:
        some("finished_at", r.finished_at)
    some("duration_s", r.duration_s)
    some("interrupted", r.interrupted)
    # a run that ended says whether early stop saved runs and why it stopped, null or not
    ended = r.finished_at is not None and r.recheck_of is None and r.merged_from is None
    (put if ended else some)(
        "early_stop", None if r.early_stop is None else early_stop_json(r.early_stop))
    (put if ended else some)("stopped", r.stopped)
    if r.targets_down:
        put("targets_down", dict(r.targets_down))
    if r.throttled:
        put("throttled", dict(r.throttled))
    some("judge", None if r.judge is None else judge_use_json(r.judge))
    return out


def write_run_info(run_dir: Path, info: RunInfo) -> None:
    """Write run.json into ``run_dir`` (atomically)."""
    write_json(run_dir / RUN, run_json(info))


# ---- reading -----------------------------------------------------------------------------

def _pair(value: Any, what: str) -> tuple[Any, Any]:
    if not (type(value) is list and len(value) == 2):
        raise FieldError("", f"is not {what}")
    return value[0], value[1]


def _settings(d: JSONObject) -> RunSettings:
    return RunSettings(texts(d, "paths"), texts(d, "extra_files"), texts(d, "targets"),
                       maybe(d, "runs", int), shard(d), maybe(d, "early_stop", bool, True),
                       maybe(d, "judge", str), texts(d, "tags"), texts(d, "patterns"))


def _saved(d: Any) -> SavedRuns:
    d = obj(d)
    return SavedRuns(need(d, "scenario", str), need(d, "target", str), need(d, "runs", int))


def _early_stop(d: JSONObject) -> EarlyStop:
    return EarlyStop(maybe(d, "runs", int, 0), maybe(d, "model_calls", int, 0),
                     each(d, "by_scenario", _saved, required=False))


def _git(d: JSONObject) -> Git | None:
    commit = maybe(d, "commit", str)
    return None if commit is None else Git(commit, maybe(d, "branch", str),
                                           maybe(d, "dirty", str))


def _history(d: JSONObject) -> HistoryKept:
    return HistoryKept(need(d, "kind", str), need(d, "target", str))


def _judge(d: JSONObject) -> JudgeUse:
    validation = d.get("validation")
    return JudgeUse(maybe(d, "asked", int, 0), maybe(d, "cache_hits", int, 0),
                    maybe(d, "tokens", int, 0), maybe(d, "not_cached", int),
                    maybe(d, "cache", bool, True), maybe(d, "target", str),
                    None if validation is None else obj(validation, "validation"))


def _refused(d: Any) -> Refused:
    d = obj(d)
    return Refused(need(d, "scenario", str), need(d, "why", str))


def _compare(d: JSONObject) -> tuple[tuple[str, str], ...] | None:
    value = d.get("compare")
    if value is None:
        return None
    if type(value) is not list:
        raise FieldError("compare", "is not a list of [OLD, NEW] pairs")
    out = []
    for i, pair in enumerate(value):
        old, new = _pair(pair, "[OLD, NEW]") if type(pair) is list else (None, None)
        if type(old) is not str or type(new) is not str:
            raise FieldError(f"compare[{i}]", "is not [OLD, NEW], two target names")
        out.append((old, new))
    return tuple(out)


def run_from_json(d: JSONObject) -> RunInfo:
    """A run's information from run.json's JSON (its version already checked). Raises
    FieldError."""
    git = maybe_inner(d, "git", _git)
    argv = d.get("argv")
    merged = d.get("merged_from")
    refused = d.get("refused")
    return RunInfo(
        run_id=need(d, "run_id", str), targets=each(d, "targets", _target, required=False),
        suite=maybe(d, "suite", str), started_at=maybe(d, "started_at", str),
        scenarist=maybe(d, "scenarist", str), python=maybe(d, "python", str),
        argv=None if argv is None else texts(d, "argv"),
        settings=maybe_inner(d, "settings", _settings), compare=_compare(d), git=git,
        history=maybe_inner(d, "history", _history), resumed_at=texts(d, "resumed_at"),
        reran_errors=maybe(d, "reran_errors", bool, False),
        finished_at=maybe(d, "finished_at", str), duration_s=maybe(d, "duration_s", float),
        interrupted=maybe(d, "interrupted", bool),
        early_stop=maybe_inner(d, "early_stop", _early_stop), stopped=maybe(d, "stopped", str),
        targets_down=counts(d, "targets_down", str) or None,
        throttled=counts(d, "throttled", int) or None,
        judge=maybe_inner(d, "judge", _judge),
        merged_from=None if merged is None else texts(d, "merged_from"),
        missing_shards=each(d, "missing_shards", missing_shard, required=False),
        recheck_of=maybe(d, "recheck_of", str), rechecked_from=maybe(d, "rechecked_from", str),
        rechecked_at=maybe(d, "rechecked_at", str),
        refused=None if refused is None else each(d, "refused", _refused))


def read_run_info(run_dir: Path) -> RunInfo:
    """The run folder's run.json. RunDirError (with the file) when it is missing, of
    another version, or not a run's information."""
    return read_file(run_dir / RUN, run_from_json, "a run's information")


def read_run_info_if_any(run_dir: Path) -> RunInfo | None:
    """run.json when the folder has one (a folder written by hand may not)."""
    return read_run_info(run_dir) if (run_dir / RUN).exists() else None
