"""``run.json``: how a run went — when, with what, what it saved, what it was told.

:class:`RunInfo` (a frozen msgspec Struct, with its parts) is the only description of
the file: :func:`write_run_info` writes one and :func:`read_run_info` reads one back —
msgspec decodes the file into the RunInfo, checking ``schema_version`` and every field's
type (:mod:`dsl.store.typed`).
A run writes it as it starts (``--resume`` and ``recheck`` read its ``settings`` to run the
same plan again) and again as it ends; recheck and merge write their own.

The file, as written (keys in this order; a key whose value is unknown or empty is left
out, except ``suite``, ``started_at``, ``targets``, ``git`` and ``history`` (a merge's
has neither), a recheck's ``finished_at`` and ``refused``, and ``early_stop`` and
``stopped`` once a run has ended: :meth:`RunInfo.unwritten`)::

    {"schema_version": 1, "run_id": ID, "scenarist": VERSION, "python": VERSION,
     "suite": PATH, "merged_from"?: [ID],
     "missing_shards"?: [{"shard": [I, N], "scenarios": [ID] | null}],
     "started_at": ISO-8601,
     "rechecked_at"?, "recheck_of"?: ID, "rechecked_from"?: PATH,
     "refused"?: [{"scenario", "why"}],
     "targets": [{"name", "kind", ...}], "argv"?: [ARG],
     "settings"?: {"paths", "extra_files", "targets", "runs", "shard", "early_stop",
                   "judge", "tags", "patterns", "root"?},
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

import datetime as dt
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import msgspec

from .. import __version__
from ..model import SCHEMA_VERSION
from .jsonfile import read_file, write_json
from .planfile import PlannedTarget
from .typed import Reading, from_data, json_data

RUN = "run.json"


class RunSettings(msgspec.Struct, frozen=True, gc=False):
    """What ``--resume`` needs to run the same plan again (and recheck to compile it)."""

    paths: tuple[str, ...] = ()
    extra_files: tuple[str, ...] = ()
    targets: tuple[str, ...] = ()
    runs: int | None = None
    shard: tuple[int, int] | None = None
    early_stop: bool = True
    judge: str | None = None
    tags: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()
    # the suite's folder (where its scenarist.yaml is), absolute: ``recheck --suite DIR``
    # finds each of ``paths`` in DIR by its place in it ("": a run written before it was kept)
    root: str = ""

    only_when_set: ClassVar[tuple[str, ...]] = ("root",)


class SavedRuns(msgspec.Struct, frozen=True, gc=False):
    """Runs of one scenario × target that early stop did not need."""

    scenario: str
    target: str
    runs: int


class EarlyStop(msgspec.Struct, frozen=True, gc=False):
    runs: int = 0
    model_calls: int = 0  # estimated from the mean steps of the attempts that ran
    by_scenario: tuple[SavedRuns, ...] = ()


class Git(msgspec.Struct, frozen=True, gc=False):
    commit: str
    branch: str | None = None
    dirty: str | None = None  # "yes" when files differed from the commit


class HistoryKept(msgspec.Struct, frozen=True, gc=False):
    """Which history the run was recorded in: ``sqlite`` and its file, or ``postgresql``
    and its URL without a password."""

    kind: str
    target: str


class JudgeUse(msgspec.Struct, frozen=True):
    """What the run asked its judge."""

    only_when_set: ClassVar[tuple[str, ...]] = ("not_cached",)

    asked: int = 0
    cache_hits: int = 0
    tokens: int = 0
    not_cached: int | None = None  # recheck without --judge: questions left unasked
    cache: bool = True  # --no-judge-cache turned it off
    target: str | None = None
    validation: Mapping[str, Any] | None = None  # dsl.judge.validation.ValidationInfo's JSON

    @classmethod
    def of(cls, stats: JudgeStats, cache: bool, target: str | None,
           validation: Mapping[str, Any] | None) -> JudgeUse:
        """The entry of a run (or a recheck) whose judge answered ``stats``."""
        return cls(stats.asked, stats.cache_hits, stats.tokens, stats.not_cached, cache,
                   target, validation)


class JudgeStats(NamedTuple):
    """What a judge counted while it was asked (dsl.judge.Judge.stats)."""

    asked: int
    cache_hits: int
    tokens: int
    not_cached: int | None = None  # only when it was told not to ask what it lacks


class MissingShard(msgspec.Struct, frozen=True, gc=False):
    """A shard a merge was not given: which one, and the scenarios it held (None:
    unknown), which were not run."""

    shard: tuple[int, int]
    scenarios: tuple[str, ...] | None = None

    @property
    def name(self) -> str:
        return f"{self.shard[0]}/{self.shard[1]}"


class Refused(msgspec.Struct, frozen=True, gc=False):
    """A scenario that recheck refused, and why."""

    scenario: str
    why: str


class RunInfo(msgspec.Struct, frozen=True, tag_field="schema_version", tag=SCHEMA_VERSION):
    """run.json: see the module's docstring (its keys are these fields, in this order)."""

    run_id: str
    scenarist: str | None = None  # the version that ran it
    python: str | None = None
    suite: str | None = None
    merged_from: tuple[str, ...] | None = None  # merge: the shards' run ids
    missing_shards: tuple[MissingShard, ...] = ()  # merge: the shards it was not given
    started_at: str | None = None
    rechecked_at: str | None = None
    recheck_of: str | None = None  # recheck: the run whose transcripts it checked again
    rechecked_from: str | None = None
    refused: tuple[Refused, ...] | None = None
    targets: tuple[PlannedTarget, ...] = ()
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
    targets_down: Mapping[str, str] | None = None  # target -> why it was given up on
    throttled: Mapping[str, int] | None = None  # target -> the lowest concurrency it came to
    judge: JudgeUse | None = None

    def unwritten(self) -> list[str]:
        """The keys run.json leaves out of this run's (see the module's docstring)."""
        recheck = self.recheck_of is not None
        # a run that ended says whether early stop saved runs and why it stopped, null or not
        ended = self.finished_at is not None and not recheck and self.merged_from is None
        out = [name for name in ("scenarist", "python", "merged_from", "rechecked_at",
                                 "rechecked_from", "argv", "settings", "compare",
                                 "duration_s", "interrupted", "judge")
               if getattr(self, name) is None]
        if not recheck:
            out += ["recheck_of", "refused"]
            if self.finished_at is None:
                out.append("finished_at")
        elif self.refused is None:
            out.append("refused")
        if self.merged_from is not None:
            out += ["git", "history"]
        if not ended:
            out += [name for name in ("early_stop", "stopped") if getattr(self, name) is None]
        out += [name for name in ("missing_shards", "resumed_at", "reran_errors",
                                  "targets_down", "throttled")
                if not getattr(self, name)]
        return out

    def replace(self, **changes: Any) -> RunInfo:
        return msgspec.structs.replace(self, **changes)


def new_run_info(run_id: str, suite: str | None, started: dt.datetime,
                 targets: tuple[PlannedTarget, ...], argv: tuple[str, ...]) -> RunInfo:
    """run.json of a run that is starting."""
    return RunInfo(run_id, targets=targets, suite=suite,
                   started_at=started.isoformat(timespec="seconds"), scenarist=__version__,
                   python=sys.version.split()[0], argv=argv)


def run_json(info: RunInfo) -> dict[str, Any]:
    """The run's information as run.json's JSON object."""
    data: dict[str, Any] = json_data(info)
    return data


def write_run_info(run_dir: Path, info: RunInfo) -> None:
    """Write run.json into ``run_dir`` (atomically)."""
    write_json(run_dir / RUN, info)


def run_from_json(data: Any, where: object = "the run's information") -> RunInfo:
    """A run's information from run.json's JSON already parsed, its schema_version
    checked when it has one (RunDirError as :func:`read_run_info`'s)."""
    return from_data(data, RunInfo, Reading(where, "a run's information"), versioned=False)


def read_run_info(run_dir: Path) -> RunInfo:
    """The run folder's run.json. RunDirError (with the file) when it is missing, of
    another version, or not a run's information."""
    return read_file(run_dir / RUN, RunInfo, "a run's information")


def read_run_info_if_any(run_dir: Path) -> RunInfo | None:
    """run.json when the folder has one (a folder written by hand may not)."""
    return read_run_info(run_dir) if (run_dir / RUN).exists() else None
