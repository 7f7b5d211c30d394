"""The run folder: ``runs/<run-id>/`` with ``run.json``, ``plan.json``,
``results.jsonl`` (one line appended and flushed as each attempt ends), ``summary.json``
and the reports — and ``attachments/``: each file the scenarios attach, once, named by the
SHA-256 of its content (records refer to them by that hash; the report shows them).

Every file carries ``schema_version``; a reader refuses versions it does not know.
A torn last line (the process was killed while writing it) is skipped, not fatal.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import hashlib
import os
import secrets
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import IO, Any

from ..errors import RunDirError
from .jsonfile import (
    MAX_RECORD_BYTES,
    MAX_RESULTS_BYTES,
    open_regular,
    read_json,
    write_atomic,
)
from .planfile import PLAN, PlanFile, edited, plan_from_json, shard_ids, write_plan
from .records import AttemptRecord, read_record, record_line
from .runfile import (
    EarlyStop,
    MissingShard,
    RunInfo,
    read_run_info,
    read_run_info_if_any,
    write_run_info,
)

RESULTS = "results.jsonl"
LOCK = ".lock"
ATTACHMENTS = "attachments"
MAX_STORED_ATTACHMENT = 5 * 2**20  # as dsl.compiler.attachments.MAX_ATTACHMENT_BYTES
FSYNC_EVERY_S = 1.0  # results reach the OS at every line; the disk at least this often


RUN_ID_TIME = "%Y%m%d-%H%M%S-%f"  # the time part of a run id: UTC, to the microsecond


def new_run_id(now: dt.datetime | None = None, after: str | None = None) -> str:
    """``20261130-091500-123456-ab12``: the time (UTC, to the microsecond), then four random
    hex digits, so that ids sort by time — ``ls runs | tail -1`` is the latest run — and two
    machines never make the same one. ``after``: an id this one must sort after (the
    latest in the folder), should the clock stand still or step back."""
    now = now or dt.datetime.now(dt.UTC)
    if after is not None:
        try:
            last = dt.datetime.strptime(after[:22], RUN_ID_TIME).replace(tzinfo=dt.UTC)
        except ValueError:
            last = None
        if last is not None and now <= last:
            now = last + dt.timedelta(microseconds=1)
    return now.astimezone(dt.UTC).strftime(RUN_ID_TIME) + "-" + secrets.token_hex(2)


def _latest_id(parent: Path) -> str | None:
    try:
        names = [e.name for e in os.scandir(parent) if e.name[:1].isdigit()]
    except OSError:
        return None
    return max(names, default=None)


def create_run_dir(parent: Path, run_id: str | None = None) -> Path:
    """A new, empty run folder in ``parent`` (created as needed), named to sort after every
    run folder already there. RunDirError, in plain words, when it cannot be made
    (``parent`` is a file, read-only, the disk is full)."""
    run_id = run_id or new_run_id(after=_latest_id(parent))
    path = parent / run_id
    if parent.exists() and not parent.is_dir():
        raise RunDirError(f"{parent} is a file, not a folder: the run folders go into a "
                          "folder (the default is runs)")
    try:
        path.mkdir(parents=True, exist_ok=False)
    except OSError as exc:
        raise RunDirError(f"cannot create a run folder in {parent}: "
                          f"{exc.strerror or exc}") from None
    return path


class RunLock:
    """Only one process writes a run folder at a time: an exclusive lock on
    ``RUN_DIR/.lock`` (``flock``), held while a run or a resume writes it and released when
    that process ends, however it ends (so a killed run can be resumed at once)."""

    def __init__(self, run_dir: Path) -> None:
        self.path = run_dir / LOCK
        self._file: IO[str] | None = None

    def __enter__(self) -> RunLock:
        try:
            # why: fcntl: POSIX only; report loads this module without it
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return self
        f = self.path.open("a+", encoding="utf-8")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            holder = f.read().strip() or "another process"
            f.close()
            raise RunDirError(f"{self.path.parent} is being written by another scenarist "
                              f"process ({holder}); wait for it to end, or stop it, then try "
                              "again") from None
        f.seek(0)
        f.truncate()
        f.write(f"pid {os.getpid()}\n")
        f.flush()
        self._file = f
        return self

    def __exit__(self, *exc: object) -> None:
        if self._file is not None:
            self._file.close()  # closing releases the lock
            self._file = None


def store_attachments(run_dir: Path, files: Iterable[tuple[str, bytes]]) -> None:
    """Keep each attached file (its hash, its bytes) in ``run_dir/attachments/``, once."""
    folder = run_dir / ATTACHMENTS
    for sha, content in files:
        path = folder / sha
        if not path.exists():
            folder.mkdir(exist_ok=True)
            write_atomic(path, content)


def read_attachment(run_dir: Path, sha: str) -> bytes | None:
    """A kept attachment's bytes, or None when the run folder does not have it (or what it
    has is not that file: the name is checked, and the content against its hash)."""
    if len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha):
        return None
    path = run_dir / ATTACHMENTS / sha
    try:
        with open_regular(path, MAX_STORED_ATTACHMENT) as f:
            data = f.read(MAX_STORED_ATTACHMENT + 1)
    except (OSError, RunDirError):  # missing, a FIFO, a device, too large
        return None
    return data if hashlib.sha256(data).hexdigest() == sha else None


def copy_attachments(sources: Iterable[Path], run_dir: Path) -> None:
    """The attachments the run folders ``sources`` keep, kept in ``run_dir`` too (merge,
    recheck)."""
    for src in sources:
        folder = src / ATTACHMENTS
        if not folder.is_dir():
            continue
        for f in sorted(folder.iterdir()):
            data = read_attachment(src, f.name)
            if data is not None:
                store_attachments(run_dir, [(f.name, data)])


class ResultsWriter:
    """Appends attempt records to results.jsonl, one flushed line each."""

    def __init__(self, run_dir: Path, redact: Callable[[Any], Any] | None = None) -> None:
        """``redact`` maps a JSON-like value to its redacted copy (Redactor.value)."""
        self.path = run_dir / RESULTS
        self._file: IO[str] = self.path.open("a", encoding="utf-8")
        self._synced = time.monotonic()
        self._redact = redact

    def write(self, record: AttemptRecord) -> None:
        """Append one record. OSError (a full disk) propagates: the caller stops the run."""
        self._file.write(record_line(record, self._redact) + "\n")
        self._file.flush()
        now = time.monotonic()
        if now - self._synced >= FSYNC_EVERY_S:
            os.fsync(self._file.fileno())
            self._synced = now

    def close(self) -> None:
        if not self._file.closed:
            try:
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError:  # the disk is full: what was flushed before is kept
                pass
            finally:
                with contextlib.suppress(OSError):
                    self._file.close()




def iter_results(run_dir: Path) -> Iterator[AttemptRecord]:
    """Attempt records, in the order they were written; a torn last line is skipped."""
    path = run_dir / RESULTS
    if not os.path.lexists(path):
        raise RunDirError(f"{run_dir} has no {RESULTS}; is it a run folder?")
    with open_regular(path, MAX_RESULTS_BYTES) as f:
        n = 0
        while True:
            n += 1
            try:
                line = f.readline(MAX_RECORD_BYTES + 1)
            except OSError as exc:
                raise RunDirError(f"cannot read {path}: {exc.strerror or exc}") from None
            if len(line) > MAX_RECORD_BYTES:
                raise RunDirError(f"{path}:{n} is longer than Scenarist reads (a record of "
                                  f"at most {MAX_RECORD_BYTES:,} bytes)")
            if not line.endswith(b"\n"):
                return  # the end, or torn: the writer was killed mid-line
            yield read_record(line, f"{path}:{n}")


def truncate_torn(run_dir: Path) -> bool:
    """Cut a torn last line (the writer was killed mid-line) so appending stays valid."""
    path = run_dir / RESULTS
    if not path.exists():
        return False
    with open_regular(path, MAX_RESULTS_BYTES) as f:
        end = f.seek(0, os.SEEK_END)
        if end == 0:
            return False
        f.seek(end - 1)
        if f.read(1) == b"\n":
            return False
        keep = 0
        pos = end
        while pos > 0:  # back from the end, a MiB at a time, to the last newline
            start = max(0, pos - 2**20)
            f.seek(start)
            at = f.read(pos - start).rfind(b"\n")
            if at >= 0:
                keep = start + at + 1
                break
            pos = start
    with path.open("r+b") as f:
        f.truncate(keep)
    return True


def latest_records(run_dir: Path) -> Iterator[AttemptRecord]:
    """Each attempt's latest record. Only ``--resume --retry-errors`` writes an attempt
    twice (run.json says so); otherwise this streams the file once, in constant memory."""
    try:
        reran = read_run_info(run_dir).reran_errors
    except RunDirError:
        reran = True  # no run.json (or not one): be safe
    if not reran:
        yield from iter_results(run_dir)
        return
    last: dict[tuple[str, str, int], int] = {}
    for i, r in enumerate(iter_results(run_dir)):
        last[r.key] = i
    for i, r in enumerate(iter_results(run_dir)):
        if last.get(r.key) == i:
            yield r


def merge_runs(run_dirs: list[Path], parent: Path
               ) -> tuple[Path, tuple[MissingShard, ...]]:
    """Combine shard run folders into one new run folder. Returns it and the shards that
    are missing (their scenarios were not run; run.json names them).

    Refuses, before anything is made: runs of different plans (their ``full_plan``
    fingerprints differ), shards that overlap (a scenario in two of them, or an attempt in
    two of them), a shard whose results hold an attempt its plan does not (a scenario it
    does not have, a run beyond its runs), and a shard's plan.json edited after its run
    (:func:`dsl.store.planfile.edited`)."""
    plans = []
    for d in run_dirs:
        raw = read_json(d / PLAN)
        changed = edited(raw)
        if changed is not None:
            raise RunDirError(f"{d / PLAN} was edited after its run: {changed} differs from "
                              "what the run planned; merge the shards as their runs left "
                              "them (or run the shard again)")
        plans.append(plan_from_json(raw, d / PLAN))
    infos = [read_run_info_if_any(d) for d in run_dirs]
    fingerprints = {p.full_plan for p in plans}
    if len(fingerprints) != 1 or not next(iter(fingerprints)):
        raise RunDirError("these runs come from different plans (or different versions of "
                          "the files); merge only the shards of one run")
    for d, p in zip(run_dirs[1:], plans[1:], strict=True):
        for what, mine, first in (("targets", p.targets, plans[0].targets),
                                  ("judge", p.judge, plans[0].judge)):
            if mine != first:
                raise RunDirError(f"the {what} of {d} differ from those of {run_dirs[0]}: "
                                  "these runs come from different plans; merge only the "
                                  "shards of one run")
    seen: dict[str, Path] = {}
    for d, p in zip(run_dirs, plans, strict=True):
        for s in p.scenarios:
            if s.id in seen:
                raise RunDirError(f"the scenario {s.id} is in both {seen[s.id]} and {d}; "
                                  "merge each shard once")
            seen[s.id] = d
    _check_attempts(run_dirs, plans)
    missing = missing_shards(plans)
    scenarios = sorted((s for p in plans for s in p.scenarios), key=lambda s: s.id)
    merged_plan = plans[0].replace(scenarios=tuple(scenarios), shard=None, full_scenarios=(),
                                   attempts=sum(p.attempts for p in plans),
                                   max_model_calls=sum(p.max_model_calls for p in plans))
    out = create_run_dir(parent)
    write_plan(out, merged_plan)
    copy_attachments(run_dirs, out)
    with (out / RESULTS).open("w", encoding="utf-8") as f:
        for d in run_dirs:
            for r in latest_records(d):
                f.write(record_line(r) + "\n")
    known = [i for i in infos if i is not None]
    started = [i.started_at for i in known if i.started_at]
    finished = [i.finished_at for i in known if i.finished_at]
    saved = [x for i in known if i.early_stop for x in i.early_stop.by_scenario]
    write_run_info(out, RunInfo(
        run_id=out.name,
        targets=known[0].targets if known and known[0].targets else merged_plan.targets,
        suite=merged_plan.suite,
        merged_from=tuple(i.run_id if i is not None else d.name
                          for i, d in zip(infos, run_dirs, strict=True)),
        started_at=min(started) if started else None,
        finished_at=max(finished) if finished else None,
        duration_s=max((i.duration_s or 0 for i in known), default=0),
        early_stop=EarlyStop(sum(x.runs for x in saved),
                             sum(i.early_stop.model_calls for i in known if i.early_stop),
                             tuple(saved)),
        interrupted=any(i.interrupted for i in known), missing_shards=missing))
    return out, missing


def missing_shards(plans: Sequence[PlanFile]) -> tuple[MissingShard, ...]:
    """The shards of the plan that ``plans`` (shards of one plan) leave out, each with the
    scenarios it holds (from the whole plan's ``full_scenarios``; None when the shards'
    plans do not keep them)."""
    shards = [p.shard for p in plans if p.shard]
    if not shards:
        return ()
    n = shards[0][1]
    full = next((p.full_scenarios for p in plans if p.full_scenarios), ())
    return tuple(MissingShard((i, n), tuple(shard_ids(full, i, n)) if full else None)
                 for i in sorted(set(range(1, n + 1)) - {i for i, _ in shards}))


def _check_attempts(run_dirs: list[Path], plans: list[Any]) -> None:
    """Each shard's results hold only attempts its own plan has, and no attempt is in two
    shards (or twice in one, unless ``--retry-errors`` wrote it again): RunDirError naming
    the attempt. Reads every record once, so a tampered line stops the merge before
    anything is made."""
    where: dict[tuple[str, str, int], Path] = {}
    for d, plan in zip(run_dirs, plans, strict=True):
        runs = {s.id: s.runs for s in plan.scenarios}
        targets = set(plan.target_names)
        mine: set[tuple[str, str, int]] = set()
        for r in latest_records(d):
            attempt = f"{r.scenario} × {r.target} run {r.run}"
            planned = runs.get(r.scenario)
            if planned is None or r.target not in targets:
                raise RunDirError(
                    f"{d / RESULTS} holds the attempt {attempt}, which the plan of {d} does "
                    f"not have ({'its scenario' if planned is None else 'its target'} is "
                    "another shard's or no one's): the shards overlap; merge the shards as "
                    "their runs left them")
            if not 1 <= r.run <= planned:
                raise RunDirError(
                    f"{d / RESULTS} holds the attempt {attempt}, but {r.scenario} is planned "
                    f"for {planned} run{'s' if planned != 1 else ''}: merge the shards as "
                    "their runs left them")
            if r.key in mine:
                raise RunDirError(
                    f"the attempt {attempt} is twice in {d / RESULTS}: merge the shards as "
                    "their runs left them")
            if r.key in where:
                raise RunDirError(
                    f"the attempt {attempt} is in both {where[r.key]} and {d}: the shards "
                    "overlap; merge each shard once, as its run left it")
            mine.add(r.key)
        for key in mine:
            where[key] = d
