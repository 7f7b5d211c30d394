"""The pipeline: every stage of a run, chained in one place.

::

    paths ──compile──▶ Plan ──(ready?)──▶ run folder ──run──▶ results.jsonl
          ──finish: summarize ──▶ summary.json ──report──▶ report.html
                    ──▶ junit.xml, summary.md ──▶ the history ──▶ conformance.json

:func:`run_suite` is ``scenarist run``: the command line only turns its options into a
:class:`RunRequest`, calls it and prints the :class:`RunResult`. :func:`finish` is the
after-run chain, one for every command that ends with a run folder's results —
:func:`run_suite`, :func:`recheck_run`, :func:`report_run` and :func:`merge_shards` —
each choosing in an :class:`AfterRun` whether the report shows a trend and whether the run
is recorded. Each stage can also be called alone (``dsl.compiler.compile.build_plan``,
``dsl.execution.run.execute``, ``dsl.results.summarize.summarize_records``,
``dsl.results.report.build_view``).

Problems in the user's files raise :class:`~dsl.errors.InputError` (every diagnostic);
a run that cannot start as things are (an API key not set, a folder that cannot be
resumed) raises :class:`~dsl.errors.NotReady` before anything is sent.

In: what a command asked for (a :class:`RunRequest`, a run folder, a request of
conformance). Out: what it should print (a :class:`RunResult`, a :class:`Finished`…) and
the files the stages wrote. The other orchestrations sit beside this chain, in the same
layer — the only one that may call every stage (and the clients): ``tryout`` (``scenarist
try``), ``recheck`` (the current checks on stored transcripts) and ``judgecheck``
(``scenarist judge-check``). Only the command line and the studio import this package.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import gc
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import msgspec

from ..errors import NotReady, RunDirError
from ..exits import EXIT_FAILED, EXIT_INTERRUPTED, EXIT_NO_VERDICT, EXIT_OK
from ..model import Plan
from ..source.suitefile import find_suite_file
from ..store.background import BackgroundFile
from ..store.runfile import MissingShard

if TYPE_CHECKING:
    from ..compiler.discover import Selection
    from ..execution.run import RunState, Totals
    from ..history import HistoryStore, Location
    from ..history.store import TrendPoint
    from ..results.baseline import Change, Comparison
    from ..results.conformance import Certificate, ConformanceRequest
    from ..store import AttemptRecord, RunInfo, Summary
    from ..store.runfile import HistoryKept, RunSettings


class RunRequest(msgspec.Struct, frozen=True):
    """What a person asked ``scenarist run`` for."""

    paths: tuple[Path, ...] = ()
    extra_files: tuple[Path, ...] = ()  # files compiled against the suite of paths
    # (conformance's built-in cases)
    targets: tuple[str, ...] = ()
    runs: int | None = None
    concurrency: int | None = None
    out: Path | None = None  # where the run folder goes (None: runs/ beside scenarist.yaml)
    record: Path | None = None
    early_stop: bool = True
    max_calls: int | None = None
    max_tokens: int | None = None
    resume: Path | None = None
    retry_errors: bool = False
    shard: tuple[int, int] | None = None
    judge_target: str | None = None
    judge_cache: bool = True
    record_judge: Path | None = None
    baseline: Path | Summary | None = None  # a run folder, or a summary read
    compare: tuple[tuple[str, str], ...] = ()  # --compare old:new (else the suite's pairs)
    fail_on_regression: bool = False  # exit 1 on any regression (baseline or compare)
    argv: tuple[str, ...] = ()
    selection: Selection | None = None  # --tag, -k (None: every scenario)


class RunResult(msgspec.Struct, frozen=True):
    """What a run did: where it is, its summary, and what to tell the person."""

    run_dir: Path
    summary: Summary
    comparison: Comparison | None  # against the baseline, when one was given
    exit_code: int
    notes: tuple[str, ...] = ()  # for stderr: targets given up on, early stops
    interrupted: str | None = None  # Ctrl-C: what was kept and how to finish
    certificate: Certificate | None = None  # a conformance run's, made again (--resume)
    suite: Path | None = None  # recheck: the suite's folder it read


class Hooks(msgspec.Struct, frozen=True):
    """How the run talks to the person while it runs (the CLI's progress line)."""

    on_attempt: Callable[[AttemptRecord, Totals], None] | None = None  # (record, totals)
    notify: Callable[[str], None] | None = None  # a message, now
    handle_signals: bool = False  # Ctrl-C stops handing out attempts
    started: Callable[[int], None] = msgspec.field(default=lambda todo: None)  # attempts to run


def resume_request(run_dir: Path, request: RunRequest) -> RunRequest:
    """The request of the run that ``run_dir`` holds (``--resume``): its paths, targets,
    runs, shard, early stop and judge, as run.json recorded them."""
    # why: the run folder's files; plan or runs load this module without it
    from ..store import read_run_info

    try:
        info = read_run_info(run_dir)
    except RunDirError as exc:
        raise NotReady(f"cannot resume: {exc}") from None
    saved = info.settings
    if saved is None or not saved.paths:
        raise NotReady(f"cannot resume {run_dir}: its run.json does not say what it ran")
    # why: discovery of a suite's files; report, runs or merge load this module without it
    from ..compiler.discover import Selection

    return msgspec.structs.replace(
        request, paths=tuple(Path(p) for p in saved.paths),
        extra_files=tuple(Path(p) for p in saved.extra_files),
        targets=saved.targets, runs=saved.runs, early_stop=saved.early_stop,
        judge_target=saved.judge, shard=saved.shard,
        selection=Selection(saved.tags, saved.patterns))


def _settings(request: RunRequest) -> RunSettings:
    """What run.json keeps so that ``--resume`` can run the same plan again."""
    # why: the run folder's files; plan or runs load this module without it
    from ..store.runfile import RunSettings

    selection = request.selection
    return RunSettings(
        tuple(str(p.resolve()) for p in request.paths or (Path("."),)),
        tuple(str(p.resolve()) for p in request.extra_files), request.targets, request.runs,
        request.shard, request.early_stop, request.judge_target,
        selection.tags if selection else (), selection.patterns if selection else ())


T = TypeVar("T")


def _write(step: Callable[[], T], run_dir: Path) -> T:
    """A step that writes into the run folder; a full disk or a folder gone read-only
    becomes one sentence (RunDirError), with what was kept."""
    try:
        return step()
    except OSError as exc:
        raise RunDirError(f"cannot write into {run_dir}: {exc.strerror or exc}. What was "
                          "written before is kept; make room, then finish the run with: "
                          f"scenarist run --resume {run_dir}") from None


def plan_for(request: RunRequest) -> Plan:
    """Compile the request's paths into a plan that can start: InputError for the files,
    NotReady for what the environment lacks."""
    # why: the compiler and more; report, runs or merge load this module without it
    from ..compiler.compile import build_plan
    from ..compiler.discover import EVERYTHING
    from ..targets.kinds import missing_keys

    plan, _ = build_plan(request.paths or (Path("."),), targets=request.targets,
                         runs=request.runs, concurrency=request.concurrency,
                         shard=request.shard, judge_target=request.judge_target,
                         compare=request.compare, extra_files=request.extra_files,
                         selection=request.selection or EVERYTHING)
    if request.record is not None and len(plan.targets) != 1:
        raise NotReady("--record records one target; choose it with --target NAME")
    for flag, path in (("--record", request.record), ("--record-judge", request.record_judge)):
        if path is not None and path.is_dir():
            raise NotReady(f"{flag} {path} is a folder; give the cassette's file name, e.g. "
                           f"{path / 'recorded.jsonl'}")
    missing = missing_keys(plan.targets)
    if missing:
        raise NotReady("; ".join(missing))
    return plan


def run_suite(request: RunRequest, hooks: Hooks = Hooks()) -> RunResult:
    """``scenarist run``: compile, open (or resume) the run folder, run, summarize, report.
    Raises InputError, NotReady or RunDirError before anything is sent."""
    with plan_set_aside():
        return _run_suite(request, hooks)


@contextlib.contextmanager
def plan_set_aside() -> Iterator[None]:
    """Within the block, the objects that exist once the plan is compiled are set aside
    from the garbage collector (``gc.freeze``) until the block ends: a plan of 10,000
    scenarios is over a million objects with no cycles, and the first collection after
    compiling would otherwise walk all of them before the first request is sent (~0.1 s,
    bench/cases_bench.py), and every full collection of the run again. A caller that froze
    objects itself keeps its own arrangement."""
    mine = gc.get_freeze_count() == 0
    try:
        yield
    finally:
        if mine:
            gc.unfreeze()


def compiled_apart(make: Callable[[], T]) -> T:
    """``make()`` (compiling a plan) with the collector paused — compiling makes many
    objects and no cycles — and what exists then set aside (within
    :func:`plan_set_aside`)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        made = make()
        gc.freeze()
        return made
    finally:
        if paused:
            gc.enable()


def _run_suite(request: RunRequest, hooks: Hooks) -> RunResult:
    # why: the history and more; plan, report, runs or merge load this module without it
    from ..history import location_for
    from ..store import RunLock, create_run_dir, write_run_info
    from ..targets.cassette import CassetteLock

    if request.resume is not None:
        request = resume_request(request.resume, request)
    baseline = request.baseline
    if isinstance(baseline, Path):
        # why: the comparison with a baseline; plan or runs load this module without it
        from ..results.baseline import load_summary

        baseline = load_summary(baseline)
    plan = compiled_apart(lambda: plan_for(request))
    location = location_for(Path(plan.suite_root), plan.history)
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    # A new run's plan.json is made and written while its first attempts run (a plan of
    # 10,000 scenarios takes most of a second); the first record waits for it, so a run
    # folder never holds results without its plan. Resuming compares plans first.
    planned = PlanWriter(plan, request.resume is None and len(plan.scenarios) >= PLAN_APART_AT)
    # a cassette being recorded is locked before the run folder is made: a second run
    # recording into it refuses before it starts, and makes nothing
    with CassetteLock([p for p in (request.record, request.record_judge) if p]) as cassettes, \
            RunLock(run_dir := cassettes.held_by(
                request.resume if request.resume is not None else create_run_dir(
                    runs_folder(request.out, Path(plan.suite_root))))):
        if request.resume is not None:
            info, prior = _resumed(run_dir, request, planned, started)
        else:
            info, prior = _started(run_dir, request, plan, planned, started, location), []
        _write(lambda: write_run_info(run_dir, info), run_dir)
        state, kept = _execute(run_dir, request, plan, planned, prior, hooks)
        ended = _ended(info, request, plan, state, t0)
        if state.write_error is not None:
            raise RunDirError(f"{state.write_error}. The attempts written before are kept; "
                              "make room, then finish the run with: scenarist run --resume "
                              f"{run_dir}")
        _write(lambda: write_run_info(run_dir, ended), run_dir)
        finished = finish(run_dir, AfterRun(
            location, baseline=baseline, then="What was written before is kept; make room, "
            f"then finish the run with: scenarist run --resume {run_dir}"))
    return _result(run_dir, request, state, finished, kept)


def _resumed(run_dir: Path, request: RunRequest, planned: PlanWriter, started: dt.datetime
             ) -> tuple[RunInfo, list[AttemptRecord]]:
    """``--resume``: the run.json of the run it finishes, and the records it keeps (those
    of endpoint errors are run again with ``--retry-errors``). NotReady when the plan
    changed since the run started."""
    # why: plan.json's contents and more; plan, report, runs or merge load this module without it
    from ..compiler.plan import plan_changes
    from ..store import latest_records, read_plan, read_run_info, truncate_torn
    from ..store.planfile import plan_json

    try:
        old_plan = read_plan(run_dir)
        info = read_run_info(run_dir)
    except RunDirError as exc:
        raise NotReady(f"cannot resume: {exc}") from None
    changes = plan_changes(plan_json(old_plan), planned.result())
    if changes:
        raise NotReady(f"cannot resume {run_dir}: the plan changed since it started: "
                       + "; ".join(changes) + ". Start a new run instead.")
    truncate_torn(run_dir)
    prior = [r for r in latest_records(run_dir)
             if not (request.retry_errors and r.status == "error")]
    return info.replace(  # with --retry-errors, results.jsonl may hold an attempt twice
        reran_errors=info.reran_errors or request.retry_errors,
        resumed_at=(*info.resumed_at, started.isoformat(timespec="seconds"))), prior


def _started(run_dir: Path, request: RunRequest, plan: Plan, planned: PlanWriter,
             started: dt.datetime, location: Location | None) -> RunInfo:
    """A new run: its run.json as it starts, plan.json aimed at its folder (made once the
    first requests are out), and the files its scenarios attach kept there."""
    # why: plan.json's contents and more; plan, report, runs or merge load this module without it
    from ..compiler.plan import kept_target, planned_target
    from ..compiler.redact import redactor_for
    from ..results.entries import git_info
    from ..store import PLAN, store_attachments
    from ..store.runfile import new_run_info

    planned.aim(run_dir / PLAN)
    attached = {a.sha256: a.stored for s in plan.scenarios
                if s.attachments or s.turns  # most have neither: skip them quickly
                for a in s.all_attachments}
    if attached:  # the report shows them; records refer to them by hash
        _write(lambda: store_attachments(run_dir, attached.items()), run_dir)
    redactor = redactor_for(plan.redact, plan.suite_targets)  # run.json is redacted too
    return new_run_info(run_dir.name, plan.suite_file, started,
                        tuple(kept_target(planned_target(t), redactor) for t in plan.targets),
                        tuple(redactor(a) for a in request.argv)).replace(
        settings=msgspec.structs.replace(_settings(request),
                                         root=str(Path(plan.suite_root).resolve())),
        compare=plan.compare,
        git=git_info(Path(plan.suite_root)), history=_kept(location))


def _execute(run_dir: Path, request: RunRequest, plan: Plan, planned: PlanWriter,
             prior: list[AttemptRecord], hooks: Hooks) -> tuple[RunState, list[str]]:
    """The attempts not yet done, run (dsl/execution/run.py); what the cassettes being
    recorded became, in words."""
    import asyncio  # here, not at the top: lint's start-up does without it

    # why: the clients and more; plan, report, recheck, runs or merge load this module without it
    from ..clients.open import CLIENTS
    from ..execution.run import RunOptions, execute
    from ..targets.cassette import Recording

    done = frozenset(r.key for r in prior)
    hooks.started(plan.attempts - len(done))
    recordings = [Recording(p) for p in (request.record, request.record_judge) if p]
    options = RunOptions(
        plan.concurrency, recordings[0].partial if request.record else None,
        early_stop=request.early_stop, max_calls=request.max_calls,
        max_tokens=request.max_tokens, done=done, prior=tuple(prior),
        handle_signals=hooks.handle_signals, judge_cache=request.judge_cache,
        record_judge=recordings[-1].partial if request.record_judge else None,
        before_results=planned.wait, start_plan=planned.start)
    try:
        state = asyncio.run(execute(plan, run_dir, options, hooks.on_attempt,
                                    clients=CLIENTS, notify=hooks.notify))
    finally:
        planned.wait_quietly()
    if planned.error is not None and state.write_error is None:
        state.write_error = planned.error
    complete = not state.interrupted and state.write_error is None
    return state, [said for r in recordings if (said := r.finish(complete))]


def _ended(info: RunInfo, request: RunRequest, plan: Plan, state: RunState, t0: float
           ) -> RunInfo:
    """run.json as the run ends: when, how long, whether it was interrupted, what early
    stop saved, the targets given up on or throttled, what the judge was asked."""
    # why: the run folder's files; plan or runs load this module without it
    from ..store.runfile import JudgeUse

    sched = state.scheduler
    info = info.replace(
        finished_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        duration_s=round(time.perf_counter() - t0 + (info.duration_s or 0), 3),
        interrupted=state.interrupted)
    if sched is not None:
        info = info.replace(early_stop=sched.saved() if request.early_stop else None,
                            stopped=sched.stop_reason, targets_down=sched.down or None)
    if state.lowest_concurrency:
        info = info.replace(throttled=state.lowest_concurrency)
    if state.judge is not None:
        # why: the judge; plan, run, report, recheck, runs or merge load this module without it
        from ..judge.validation import validation_for

        checked = validation_for(Path(plan.suite_root), plan.judge) if plan.judge else None
        info = info.replace(judge=JudgeUse.of(
            state.judge, request.judge_cache, plan.judge.target.name if plan.judge else None,
            checked.as_json() if checked else None))
    return info


def _result(run_dir: Path, request: RunRequest, state: RunState, finished: Finished,
            kept: list[str]) -> RunResult:
    """What the run did, for the command line: its exit code and the notes for stderr."""
    # why: the summary; plan or runs load this module without it
    from ..results.summarize import exit_code

    summary, comparison = finished.summary, finished.comparison
    sched = state.scheduler
    notes = [f"target '{name}' was given up on: {why}" for name, why in state.down.items()]
    notes.extend(finished.notes)
    notes.extend(kept)
    if sched is not None and sched.stop_reason and sched.stop_reason != "interrupted":
        notes.append(f"Stopped early: {sched.stop_reason}; the summary and report cover the "
                     "attempts that ran.")
    if state.interrupted:
        extra = f" ({state.cancelled} in flight were cancelled)" if state.cancelled else ""
        said = (f"Interrupted{extra}: the summary and report cover the attempts that "
                f"completed. Finish the run with: scenarist run --resume {run_dir}")
        return RunResult(run_dir, summary, comparison, EXIT_INTERRUPTED, tuple(notes), said,
                         finished.certificate)
    code = exit_code(summary)
    if request.fail_on_regression and regressions(summary, comparison):
        code = EXIT_FAILED
    return RunResult(run_dir, summary, comparison, code, tuple(notes),
                     certificate=finished.certificate)


# A smaller plan's plan.json is made in the run's own process, just after its first requests
# went out: forking a run's process costs more than such a plan (bench/README.md: ~8 ms to
# fork, ~13 ms of the child's CPU and the parent's copied pages, against ~9 ms to make the
# plan of 100 scenarios); a larger one is made apart, on the other core.
PLAN_APART_AT = 500


class PlanWriter(BackgroundFile):
    """``plan.json``, made beside the run's first attempts (``background``: a plan of
    10,000 scenarios takes about a second, so the first requests go out meanwhile; a run
    asks for it from :data:`PLAN_APART_AT` scenarios) or at
    once when asked for (:meth:`result`); the first record waits for it
    (:meth:`~dsl.store.background.BackgroundFile.wait`). ``scenarist run`` starts it
    (:meth:`start`) just after its first requests have gone out, so that neither the plan
    nor the fork (~25 ms for a plan of 10,000 scenarios, bench/cases_bench.py) delays them;
    the event loop and the HTTP clients start no thread for an endpoint at an IP address,
    so the run forks (dsl/store/background.py says when it may)."""

    def __init__(self, plan: Plan, background: bool) -> None:
        super().__init__(lambda: _plan_json(plan), background, "scenarist-plan-json")
        self.plan = plan


def _plan_json(plan: Plan) -> dict[str, Any]:
    from ..compiler import plan as planned  # looked up now: a test may stand in for it

    # why: regex, for the run's redaction (plan.json is redacted as every file is)
    from ..compiler.redact import redactor_for

    return planned.kept_plan(planned.plan_json(plan),
                             redactor_for(plan.redact, plan.suite_targets))


def regressions(summary: Summary, comparison: Comparison | None) -> list[Change]:
    """Every regression: against the baseline, and between the targets compared in the run
    (``--fail-on-regression`` exits 1 on any)."""
    # why: the comparison with a baseline; plan or runs load this module without it
    from ..results.baseline import Comparison

    found = list(comparison.regressions) if comparison is not None else []
    for pair in summary.compare:
        found.extend(Comparison.from_json(pair).regressions)
    return found


def _kept(location: Location | None) -> HistoryKept | None:
    """What run.json keeps of the history a run is recorded in (never a password)."""
    # why: the run folder's files; plan or runs load this module without it
    from ..store.runfile import HistoryKept

    return None if location is None else HistoryKept(location.kind, location.shown)


class History:
    """The run's history: read for the report's trend, then written with the run — once
    the run folder is complete. A store that cannot be used is a warning in
    :attr:`notes`, said once; the run folder is never at stake."""

    def __init__(self, location: Location | None) -> None:
        self.location = location
        self.notes: list[str] = []
        self.problem: str | None = None  # why the history could not be used
        self._store: HistoryStore | None = None
        self._failed = False

    def _open(self) -> HistoryStore | None:
        if self._store is None and self.location is not None and not self._failed:
            # why: the history; plan loads this module without it
            from ..history import open_history

            self._store = open_history(self.location)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()

    def unusable(self, problem: str, record: bool) -> None:
        """The history cannot be used at all: nothing is read or written, and one warning
        says so."""
        self._failed = True
        self.problem = problem
        if record:
            self.notes.append(f"warning: the run was not added to the history: {problem}")

    def _warn(self, run_dir: Path, exc: Exception) -> None:
        self._failed = True
        self.problem = str(exc)
        self.notes.append(f"warning: the run was not added to the history: {exc}. The run "
                          f"folder is complete; add it later with: scenarist history import "
                          f"{run_dir}")

    def trends(self, keys: list[tuple[str, str]], run_dir: Path
               ) -> dict[tuple[str, str], list[TrendPoint]]:
        # why: the history; plan loads this module without it
        from ..history import HistoryError

        try:
            store = self._open()
            if store is None:
                return {}
            return store.trends(keys, exclude_run=run_dir.name)
        except HistoryError as exc:
            self._warn(run_dir, exc)
            return {}

    def record(self, run_dir: Path, summary: Summary, info: RunInfo | None,
               replaces: tuple[str, ...] = ()) -> None:
        # why: the history and more; plan, report or runs load this module without it
        from ..history import HistoryError
        from ..results.entries import entry_from_run

        if self._failed:
            return
        try:
            store = self._open()
            if store is None:
                return
            store.record(entry_from_run(run_dir, summary, info), replaces=replaces)
        except HistoryError as exc:
            self._warn(run_dir, exc)
        finally:
            self.close()


# ---- after the run ------------------------------------------------------------------------

class AfterRun(msgspec.Struct, frozen=True):
    """What the after-run chain (:func:`finish`) does with a run folder whose results are
    in: each command's choices (docs/architecture.md, "After a run")."""

    history: Location | None = None  # where the trend is read and the run recorded: the
    # suite's own or SCENARIST_HISTORY, never one the run folder names (history_here)
    trend: bool = True  # show each row's earlier runs in the report
    record: bool = True  # add the run to the history
    replaces: tuple[str, ...] = ()  # the runs it replaces in the history (merge: its shards)
    baseline: Summary | None = None  # else the one the folder's summary.json was compared with
    report: Path | None = None  # where report.html goes (default: into the run folder)
    then: str = ""  # what to do when the disk is full, in the command's words
    unusable: str | None = None  # why the history chosen cannot be used at all (a
    # SCENARIST_HISTORY of a scheme Scenarist does not know): warned, as a failing store is


class Finished(msgspec.Struct, frozen=True):
    """What the chain made of a run folder."""

    summary: Summary
    comparison: Comparison | None  # against the baseline, when there is one
    report: Path
    certificate: Certificate | None  # a conformance run's, made again with its summary
    notes: tuple[str, ...]  # the history's warnings


def finish(run_dir: Path, after: AfterRun = AfterRun()) -> Finished:
    """The after-run chain, one for ``run``, ``recheck``, ``report`` and ``merge``::

        results.jsonl ──summarize──▶ summary.json ──report──▶ report.html
            ──▶ junit.xml, summary.md ──▶ the history ──▶ conformance.json (a conformance run)

    reading results.jsonl once (the report keeps its transcripts as the summary reads the
    records). RunDirError when the folder cannot be read, or written (with ``after.then``);
    a history that cannot be used is a warning in :attr:`Finished.notes`."""
    # why: the comparison with a baseline and more; plan or runs load this module without it
    from ..results.baseline import kept_baseline, with_comparisons
    from ..results.cioutputs import write_ci_outputs
    from ..results.conformance import refresh_certificate
    from ..results.report import REPORT, Transcripts, build_view, collector_paused, write_report
    from ..results.summarize import summarize_records
    from ..store import latest_records, read_attachment, read_plan, write_summary
    from ..store.runfile import read_run_info_if_any

    plan = read_plan(run_dir)
    run = read_run_info_if_any(run_dir)
    history = History(after.history)
    if after.unusable is not None:
        history.unusable(after.unusable, after.record)
    trends = history.trends(plan.keys(), run_dir) if after.trend else {}
    baseline = after.baseline if after.baseline is not None else kept_baseline(run_dir)

    def summary_and_report() -> tuple[Summary, Comparison | None, Path]:
        # the transcripts and the view (a few hundred thousand objects) die on return,
        # before the collector is back
        transcripts = Transcripts(plan, lambda sha: read_attachment(run_dir, sha))
        summary = summarize_records(plan, transcripts.tap(latest_records(run_dir)), run)
        summary, comparison = with_comparisons(summary, baseline,
                                               run.compare or () if run else ())
        write_summary(run_dir, summary)
        return summary, comparison, write_report(after.report or run_dir / REPORT, build_view(
            plan, transcripts, summary, run, comparison, trends))

    try:
        with collector_paused():
            summary, comparison, path = summary_and_report()
        write_ci_outputs(run_dir, summary, comparison)
        if after.record:
            history.record(run_dir, summary, run, after.replaces)
        certificate = refresh_certificate(run_dir, summary, comparison)
    except OSError as exc:
        where = exc.filename2 or exc.filename or f"into {run_dir}"  # (2: where it was going)
        raise RunDirError(f"cannot write {where}: {exc.strerror or exc}. {after.then}".rstrip()
                          ) from None
    finally:
        history.close()
    notes = history.notes if after.record else (
        [f"warning: the report has no trend: {history.problem}"] if history.problem else [])
    return Finished(summary, comparison, path, certificate, tuple(notes))


RUNS = "runs"  # the folder that receives the run folders, beside scenarist.yaml


def runs_folder(out: Path | None, suite_root: Path | None) -> Path:
    """Where new run folders go: ``--out`` when given; else ``runs/`` in the suite's
    folder (where ``scenarist.yaml`` is), wherever the command was started; else, with no
    suite, ``runs/`` in the current folder. Relative to the current folder when it is
    inside it, as every message that names the run folder then shows it."""
    if out is not None:
        return out
    if suite_root is None:
        return Path(RUNS)
    folder = suite_root / RUNS
    try:
        return folder.relative_to(Path.cwd())
    except (ValueError, OSError):  # elsewhere (or the current folder is gone): whole
        return folder


def suite_root_here(cwd: Path | None = None) -> Path | None:
    """The folder of the ``scenarist.yaml`` of ``cwd`` (the current folder) or its nearest
    parent; None when there is none."""
    found = find_suite_file(cwd or Path.cwd())
    return found.parent if found is not None else None


def history_here(cwd: Path | None = None) -> tuple[Location | None, str | None]:
    """The history the commands that read run folders use (``report``, ``merge``, ``runs``,
    ``history import``): ``SCENARIST_HISTORY``; else ``history:`` in the scenarist.yaml of
    ``cwd`` (the current folder) or its parents; else that suite's default — never one a
    run folder names (run.json keeps where a run was recorded; a tampered folder must not
    choose what is connected to). (None, why in words) when there is none."""
    # why: the history; plan loads this module without it
    from ..history import HISTORY_ENV, location_for, setting_problem

    if os.environ.get(HISTORY_ENV, "").strip():
        try:
            location = location_for(None)
        except NotReady as exc:  # a scheme Scenarist does not know: never a file's path
            return None, str(exc)
    else:
        suite = find_suite_file(cwd or Path.cwd())
        if suite is None:
            return None, (f"no scenarist.yaml here or in a parent folder, so no history; run "
                          f"this from the suite's folder, or set {HISTORY_ENV}")
        from ..source.load import read_file  # (only when there is a suite to read)

        doc = read_file(suite, str(suite))
        setting = doc.data.get("history") if isinstance(doc.data, dict) else None
        problem = setting_problem(setting)
        if problem is not None:
            return None, f"{suite}: {problem}"
        location = location_for(suite.parent.resolve(), setting)
    if location is None:
        return None, f"the history is off (history: false, or {HISTORY_ENV}=off)"
    return location, None


def _unusable(location: Location | None, problem: str | None) -> str | None:
    """For the commands that go on without a history (report, merge): the problem of a
    SCENARIST_HISTORY that names no history Scenarist can use (not one that is off)."""
    # why: the history; plan loads this module without it
    from ..history import HISTORY_ENV
    from ..history.locate import OFF

    value = os.environ.get(HISTORY_ENV, "").strip()
    return problem if location is None and value and value.lower() not in OFF else None


def report_run(run_dir: Path, output: Path | None = None, baseline: Summary | None = None
               ) -> Finished:
    """``scenarist report RUNDIR``: its summary, report, CI files and certificate made again
    from its stored results, the report's trend from the history of the suite here; the run
    is not recorded again (``scenarist history import`` does that)."""
    location, problem = history_here()
    return finish(run_dir, AfterRun(
        location, record=False, unusable=_unusable(location, problem), baseline=baseline,
        report=output,
        then=f"The results are kept; make room, then try again: scenarist report {run_dir}"))


def recheck_run(run_dir: Path, out: Path | None = None, ask_judge: bool = False,
                suite: Path | None = None) -> RunResult:
    """``scenarist recheck RUNDIR``: the current checks on the stored transcripts, into a new
    run folder in ``out`` (default: the folder that holds RUNDIR), then the after-run chain
    with the history of the suite the scenarios are in. ``suite`` (``--suite DIR``): the
    suite to read, instead of the one the run names. The result's ``suite`` is the folder
    read. Raises InputError (the scenario files), NotReady (nothing can be rechecked) or
    RunDirError."""
    # why: the history and more; plan, run, report, runs or merge load this module without it
    from ..history import location_for
    from ..results.summarize import exit_code
    from .recheck import prepare, run_recheck

    prepared = prepare(run_dir, suite)
    notes = [f"refused {r.scenario}: {r.why}; run it again with scenarist run"
             for r in prepared.refused]
    if not prepared.plan.scenarios:
        raise NotReady(f"nothing to recheck in {run_dir}: "
                       + ("; ".join(notes) if notes else "it ran no scenario"))
    if prepared.not_in_run:
        notes.append("not in the run, so not rechecked: " + ", ".join(prepared.not_in_run))
    location = location_for(Path(prepared.plan.suite_root), prepared.plan.history)
    folder = _write(lambda: run_recheck(prepared, run_dir, out or run_dir.parent, ask_judge,
                                        _kept(location)), out or run_dir.parent)
    finished = finish(folder, AfterRun(
        location, then=f"The results are kept; make room, then: scenarist report {folder}"))
    judge = finished_judge(folder)
    if judge:
        notes.append(f"{judge} judge question{'s were' if judge != 1 else ' was'} "
                     "not in the judge's cache: those attempts have no verdict; ask them "
                     f"with: scenarist recheck {run_dir} --judge")
    notes.extend(finished.notes)
    return RunResult(folder, finished.summary, finished.comparison,
                     exit_code(finished.summary), tuple(notes), suite=prepared.suite)


def finished_judge(run_dir: Path) -> int:
    """The judge questions a recheck left unasked (not in the cache, no ``--judge``)."""
    # why: the run folder's files; plan or runs load this module without it
    from ..store import read_run_info

    info = read_run_info(run_dir)
    return (info.judge.not_cached or 0) if info.judge else 0


class Merged(msgspec.Struct, frozen=True):
    """``scenarist merge``: the merged run, and what is missing from it."""

    run: RunResult
    missing: tuple[MissingShard, ...]  # shards it was not given: their scenarios not run


def merge_shards(run_dirs: list[Path], out: Path | None = None,
                 allow_missing: bool = False) -> Merged:
    """``scenarist merge``: the shards' run folders into one new run folder (in ``out``;
    by default ``runs/`` beside the scenarist.yaml of the current folder), then the
    after-run chain — the merged run replaces its shards in the history of the suite here
    (its report has no trend: the shards would be its earlier runs). RunDirError when they
    cannot be merged. A shard that is missing is merged without: every file names its
    scenarios as not run, and the exit code is EXIT_NO_VERDICT (a failure still says
    EXIT_FAILED) unless ``allow_missing``."""
    # why: the summary and more; plan or runs load this module without it
    from ..results.summarize import exit_code
    from ..store import merge_runs, read_run_info

    merged, missing = merge_runs(run_dirs, runs_folder(out, suite_root_here()))
    shards = []
    for d in run_dirs:
        try:
            shards.append(read_run_info(d).run_id or d.name)
        except RunDirError:
            continue
    location, problem = history_here()
    finished = finish(merged, AfterRun(
        location, trend=False, unusable=_unusable(location, problem), replaces=tuple(shards),
        then=f"The results are kept; make room, then: scenarist report {merged}"))
    code = exit_code(finished.summary)
    if missing and not allow_missing and code == EXIT_OK:
        code = EXIT_NO_VERDICT  # the missing shards' scenarios have no verdict
    return Merged(RunResult(merged, finished.summary, finished.comparison, code,
                            finished.notes), missing)


# ---- conformance -------------------------------------------------------------------------

class ConformanceResult(msgspec.Struct, frozen=True):
    """A conformance run: the run itself and its certificate."""

    run: RunResult
    certificate: Certificate

    @property
    def exit_code(self) -> int:
        """The run's: 0 every behaviour certified, 1 one not certified, 3 one inconclusive
        and none failed, 130 interrupted (dsl/exits.py)."""
        return self.run.exit_code


def run_conformance(request: ConformanceRequest, hooks: Hooks | None = None
                    ) -> ConformanceResult:
    """``scenarist conformance --target NAME``: the cases (dsl.results.conformance) as a
    normal run (results, summary, report, junit.xml), then the certificate, kept in the run
    folder as conformance.json. Raises InputError, NotReady or RunDirError before anything
    is sent."""
    # why: the conformance certificate and more; plan or runs load this module without it
    from ..results.conformance import CONFORMANCE, builtin_cases, cases_of, certify, earlier_run
    from ..store import write_json
    from ..targets.kinds import describe

    suite_file, files = cases_of(request)
    run = RunRequest(paths=(suite_file,), extra_files=files, targets=(request.target,),
                     runs=request.runs, concurrency=request.concurrency, out=request.out,
                     record=request.record, early_stop=False, argv=request.argv)
    plan = plan_for(run)  # the files and the target, checked before anything is sent
    if request.baseline is not None:
        run = msgspec.structs.replace(run, baseline=earlier_run(request.baseline, request.target))
    result = run_suite(run, hooks or Hooks())
    builtin_files = {p.resolve() for p in builtin_cases()}
    builtin = {s.id for s in plan.scenarios if Path(s.file).resolve() in builtin_files}
    cert = certify(result.run_dir, result.summary, result.comparison,
                   describe(plan.targets[0]), builtin)
    write_json(result.run_dir / CONFORMANCE, cert.as_json())
    return ConformanceResult(result, cert)


class Imported(msgspec.Struct, frozen=True):
    run_dir: Path
    run_id: str | None
    problem: str | None  # why it was not imported


def import_runs(run_dirs: list[Path], location: Location) -> list[Imported]:
    """``scenarist history import``: each run folder into the history (its summary.json, or
    a summary made from its results); a folder that cannot be read is reported, the others
    are imported. HistoryError when the history itself cannot be written."""
    # why: the history and more; plan, report or runs load this module without it
    from ..history import open_history
    from ..results.baseline import load_summary
    from ..results.entries import entry_from_run
    from ..store.runfile import read_run_info_if_any

    out = []
    with open_history(location) as store:
        for d in run_dirs:
            try:
                summary = load_summary(d)
                info = read_run_info_if_any(d)
            except RunDirError as exc:
                out.append(Imported(d, None, str(exc)))
                continue
            entry = entry_from_run(d, summary, info)
            store.record(entry)
            out.append(Imported(d, entry.run_id, None))
    return out
