"""Recheck: the scenarios' current checks, applied again to a run's stored transcripts —
no model is called.

::

    RUNDIR (plan.json, run.json, results.jsonl) + the current scenario files
        ──refuse──▶ scenarios whose given or when changed (by name)
        ──evaluate──▶ each stored attempt's checks again (judge checks from the judge cache)
        ──▶ a new run folder, marked as a recheck of RUNDIR (run.json: recheck_of)

A transcript answers the question its scenario asked when it ran. A scenario whose
``given`` (the moment, the system prompt, the tools) or ``when`` changed since asks another
question: it is refused by name, never re-checked silently (plan.json's ``given_when``
fingerprint says; older run folders are compared field by field). An attempt that ended in
an endpoint error has no transcript to check and is kept as it was.

Judge checks are answered from the judge's cache; a question the cache does not hold is
asked only with ``ask_judge`` (``--judge``) — without it, that attempt has no verdict (an
error of kind ``judge`` that says so), never a guess.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from .. import __version__
from ..compiler.compile import build_plan
from ..compiler.plan import kept_plan, plan_file, planned_scenario
from ..errors import NotReady, RunDirError
from ..execution.run import (
    attempt_status,
    evaluate,
    kept_record,
    known_secrets,
    loop_failure,
    redactor_of,
    restored_record,
)
from ..model import AttemptData, Plan, Scenario, Tokens, WorldRun
from ..source.suitefile import SUITE_FILE
from ..store import (
    AttemptError,
    AttemptRecord,
    ResultsWriter,
    copy_attachments,
    create_run_dir,
    latest_records,
)
from ..store.planfile import PlanFile, PlannedScenario, plan_json, read_plan, write_plan
from ..store.records import failure_kind, not_evaluated
from ..store.runfile import (
    HistoryKept,
    JudgeStats,
    JudgeUse,
    Refused,
    RunInfo,
    RunSettings,
    read_run_info,
    write_run_info,
)

if TYPE_CHECKING:
    from ..compiler.redact import Redactor
    from ..judge import Judge
    from ..targets.base import ChatModel

# plan.json fields that are the scenario's given and when (older plans, without given_when)
GIVEN_WHEN_FIELDS = ("at", "system", "message", "tools")
# and those that only some scenarios have, by the words that name them
GIVEN_WHEN_PARTS = (("turns", "the turns"), ("attachments", "the attachments"),
                    ("history", "the history"), ("user", "the simulated user"))


@dataclass(frozen=True, slots=True)
class Refusal:
    scenario: str
    why: str  # "its given or when changed since the run (message)"


@dataclass(frozen=True, slots=True)
class RecheckPlan:
    """What can be rechecked: the current plan of the scenarios that still ask the same
    question, and those refused."""

    plan: Plan
    old_plan: PlanFile
    old_run: RunInfo
    refused: tuple[Refusal, ...]
    not_in_run: tuple[str, ...]  # current scenarios the run did not have
    suite: Path  # the suite's folder it read (--suite, or the one the run names)
    settings: RunSettings  # the run's settings, its paths in ``suite``


def changed_fields(old: PlannedScenario, new: PlannedScenario) -> list[str]:
    """Which of given and when differ between two plan.json scenarios ([]: the same)."""
    if old.given_when and old.given_when == new.given_when:
        return []
    fields = [f for f in GIVEN_WHEN_FIELDS if getattr(old, f) != getattr(new, f)]
    # a case's values reach what the tools answer, so they are part of the question
    was = dict(old.case.values) if old.case else {}
    now = dict(new.case.values) if new.case else {}
    if (old.case is None) != (new.case is None) or was != now:
        fields.append("the case's values: " + ", ".join(
            sorted(k for k in {*was, *now} if was.get(k) != now.get(k))))
    for key, words in GIVEN_WHEN_PARTS:
        if getattr(old, key) != getattr(new, key):
            fields.append(words)
    if old.world or new.world:  # a world: its tables and the tools, in its words
        fields += _world_changes(old, new)
    if not fields and old.given_when and new.given_when:
        fields = ["the tools' input_schema or returns"]
    return fields


def _world_changes(old: PlannedScenario, new: PlannedScenario) -> list[str]:
    """What changed of a scenario's world, in its words: a table added or removed, a
    table's rows; and the tools (what they are and do to the world)."""
    if not old.tools_given:  # no world then, or a plan of a Scenarist that kept none
        return ["the world's tables or the tools (the run's plan.json does not say which)"]
    if not new.tools_given:
        return ["the world (the scenario has none now)"]
    was, now = dict(old.world), dict(new.world)
    out = [f"the world's table '{name}' ({'added' if name not in was else 'removed'})"
           for name in sorted(was.keys() ^ now.keys())]
    out += [f"the rows of the world's table '{name}'" for name in sorted(was.keys() & now.keys())
            if was[name] != now[name]]
    if old.tools_given != new.tools_given:
        out.append("the tools (their input_schema, returns or what they do to the world)")
    return out


def prepare(run_dir: Path, suite: Path | None = None) -> RecheckPlan:
    """Compile the scenarios the run folder ran, as they are now, and decide which can be
    rechecked: from the suite in ``suite`` (``--suite DIR``: a copy, a moved folder), else
    from the one the run names. NotReady when the folder cannot be rechecked at all."""
    try:
        old_plan = read_plan(run_dir)
        old_run = read_run_info(run_dir)
    except RunDirError as exc:
        raise NotReady(f"cannot recheck: {exc}") from None
    saved = old_run.settings
    if saved is None or not saved.paths:
        raise NotReady(f"cannot recheck {run_dir}: its run.json does not say which files it "
                       "ran")
    settings = _in_suite(run_dir, saved, suite) if suite is not None else \
        _named_suite(run_dir, saved)
    plan, _ = build_plan(tuple(Path(p) for p in settings.paths),
                         targets=old_plan.target_names, runs=settings.runs,
                         judge_target=settings.judge,
                         extra_files=tuple(Path(p) for p in settings.extra_files))
    old = {s.id: s for s in old_plan.scenarios}
    keep: list[Scenario] = []
    refused: list[Refusal] = []
    for s in plan.scenarios:
        before = old.get(s.id)
        if before is None:
            continue
        fields = changed_fields(before, planned_scenario(s))
        if fields:
            refused.append(Refusal(s.id, "its given or when changed since the run ("
                                   + ", ".join(fields) + "): its transcripts answer a "
                                   "different question"))
        else:
            keep.append(s)
    current = {s.id for s in plan.scenarios}
    refused += [Refusal(sid, "it is no longer in the scenario files") for sid in sorted(old)
                if sid not in current]
    not_in_run = tuple(sorted(current - old.keys()))
    return RecheckPlan(msgspec.structs.replace(plan, scenarios=tuple(keep)), old_plan, old_run,
                       tuple(sorted(refused, key=lambda r: r.scenario)), not_in_run,
                       Path(settings.root), settings)


def _named_suite(run_dir: Path, saved: RunSettings) -> RunSettings:
    """The run's settings as they are, when every file it ran is still where it was; its
    suite's folder known (a run written before run.json kept it: the folder above its
    first file that holds a scenarist.yaml)."""
    root = saved.root or _root_above(Path(saved.paths[0]))
    if root and not Path(root).is_dir():
        raise NotReady(f"cannot recheck {run_dir}: the suite it ran, {root}, is no longer "
                       "there; name the suite's folder with --suite DIR (a copy, or where "
                       "it was moved)")
    missing = [p for p in (*saved.paths, *saved.extra_files) if not Path(p).exists()]
    if missing:
        raise NotReady(f"cannot recheck {run_dir}: {missing[0]} (which it ran) no longer "
                       "exists; name the suite's folder with --suite DIR (a copy, or where "
                       "it was moved)")
    if not root:
        raise NotReady(f"cannot recheck {run_dir}: no scenarist.yaml above "
                       f"{saved.paths[0]} (which it ran); name the suite's folder with "
                       "--suite DIR")
    return msgspec.structs.replace(saved, root=root)


def _root_above(path: Path) -> str:
    for folder in (path, *path.parents):
        if (folder / SUITE_FILE).is_file():
            return str(folder)
    return ""


def _in_suite(run_dir: Path, saved: RunSettings, suite: Path) -> RunSettings:
    """The run's settings with each file it ran found in ``suite`` (--suite DIR) at its
    place in the suite it ran (a run written before run.json kept the suite's folder: at
    the nearest place that exists)."""
    new = suite.resolve()
    if not (new / SUITE_FILE).is_file():
        raise NotReady(f"cannot recheck {run_dir} with --suite {suite}: it has no "
                       f"{SUITE_FILE}; name the folder that holds the suite's {SUITE_FILE}")
    old = Path(saved.root) if saved.root else None

    def moved(p: str) -> str:
        path = Path(p)
        if old is not None:
            try:
                place = path.relative_to(old)
            except ValueError:
                place = None
        else:
            place = next((path.relative_to(a) for a in (path, *path.parents)
                          if (new / path.relative_to(a)).exists()), None)
        if place is None:
            raise NotReady(f"cannot recheck {run_dir}: {p} (which it ran) is outside the "
                           f"suite it ran, {old}, so it has no place in {suite}")
        there = new / place
        if not there.exists():
            raise NotReady(f"cannot recheck {run_dir}: {place.as_posix()} (which it ran) is "
                           f"not in {suite}")
        return str(there)

    return msgspec.structs.replace(saved, paths=tuple(map(moved, saved.paths)),
                                   extra_files=tuple(map(moved, saved.extra_files)),
                                   root=str(new))


def attempt_data(record: AttemptRecord, scenario: Scenario,
                 known: Callable[[Any], Any] | None = None) -> AttemptData:
    """What a stored attempt produced, as the checks see it (the scenario gives what the
    record does not keep: the message, the moment and the tools, unchanged since).
    ``known``: the true value of a world value results.jsonl keeps redacted
    (:func:`known_values`)."""
    failure = loop_failure(record)
    return AttemptData(
        message=scenario.message, answer=record.answer, calls=record.calls, at=scenario.at,
        tools=scenario.tools, steps=record.steps, latency_ms=record.latency_ms or 0.0,
        tokens=record.tokens or Tokens(), tokens_known=record.tokens is not None,
        messages=record.messages, failure=failure,
        failure_kind=(record.failure_kind or failure_kind(failure)) if failure else None,
        retries=record.retries,
        model_calls=tuple({"latency_ms": m.latency_ms, "finish_reason": m.finish_reason,
                           "tokens": m.tokens, "retries": m.retries}
                          for m in record.model_calls),
        turns=record.turns, history=scenario.history_calls,
        history_messages=record.history, goal_reached=record.goal_reached,
        user_messages=record.user_messages,
        attachments=scenario.all_attachments,  # the same files: given_when says so
        world=_world_of(scenario, record, known), mcp=record.mcp)


def _world_of(scenario: Scenario, record: AttemptRecord, known: Callable[[Any], Any] | None
              ) -> WorldRun | None:
    """The attempt's world, rebuilt: the scenario's tables at the start (the same as in
    the run: given_when says so) and the changes the record kept, with their redacted
    values known again where the scenario says them (the world a live run's checks saw)."""
    if not scenario.world:
        return None
    # why: the world, only for a suite with one; recheck loads this module without it
    from ..compiler.world import apply

    before = {t.name: t.rows for t in scenario.world}
    turns = tuple(apply(before, made, known).after for made in record.world_turns)
    return msgspec.structs.replace(apply(before, record.world or (), known), turns=turns)


def known_values(scenario: Scenario, redact: Redactor) -> Callable[[Any], Any]:
    """What gives back the true value of a world value results.jsonl keeps redacted: the
    one value of the scenario's world, or the one secret its texts (what the person says,
    the system prompt, the checks as written, the case's values) hold, that redacts to
    it. A value none or several could be stays as it is kept."""
    found: dict[str, set[Any]] = {}

    def add(value: Any, column: str = "") -> None:
        if isinstance(value, str | int | float) and not isinstance(value, bool):
            # as a row's column is kept: "pin: 1234" may read as a secret where 1234 does not
            shown = redact.value({column: value})[column] if column else redact.value(value)
            if shown != value:
                found.setdefault(str(shown), set()).add(value)

    for table in scenario.world:
        for row in table.rows:
            for column, value in row.items():
                add(value, str(column))
    texts = [scenario.message, scenario.system, *(t.text for t in scenario.turns),
             *(c.label for c in scenario.all_checks),
             *(str(v) for v in (scenario.case.values.values() if scenario.case else ()))]
    for text in texts:
        for pattern, _ in redact.patterns:
            for match in pattern.finditer(text):
                add(match.group(0))

    def known(value: Any) -> Any:
        if not isinstance(value, str) or "[REDACTED" not in value:
            return value
        options = found.get(value, ())
        return next(iter(options)) if len(options) == 1 else value

    return known


def has_transcript(record: AttemptRecord) -> bool:
    """An attempt the checks can read again: not one the endpoint failed (a judge error is
    an attempt whose transcript is whole)."""
    return record.status != "error" or (record.error is not None
                                        and record.error.kind == "judge")


async def recheck_records(plan: Plan, records: list[AttemptRecord], ask_judge: bool
                          ) -> tuple[list[AttemptRecord], JudgeStats | None]:
    """Each record with the current checks' results; the judge's figures when it judged."""
    scenarios = {s.id: s for s in plan.scenarios}
    redactor = redactor_of(plan)
    judge: Judge | None = None
    model: ChatModel | None = None
    if plan.judge is not None and any(c.judge for s in plan.scenarios for c in s.all_checks):
        # why: the clients and more; recheck loads this module without it
        from ..clients.open import open_model
        from ..judge import Judge

        model = open_model(plan.judge.target, 4)
        judge = Judge(plan.judge, model, redactor, ask_missing=ask_judge)
    out: list[AttemptRecord] = []
    knowns: dict[str, Callable[[Any], Any]] = {}
    try:
        for rec in records:
            scenario = scenarios[rec.scenario]
            if not has_transcript(rec):
                out.append(rec)
                continue
            # the true values, as the live checks saw them: each [REDACTED:NAME] the record
            # says stood for one of the scenario's own secrets put back
            secrets = known_secrets(redactor, scenario)
            rec = restored_record(rec, secrets)
            known = None  # (and, in a record written before it said so, the world's ids)
            if scenario.world and redactor.patterns:  # once per scenario: its world's values
                known = knowns.get(scenario.id)
                if known is None:
                    known = knowns[scenario.id] = known_values(scenario, redactor)
            data = msgspec.structs.replace(attempt_data(rec, scenario, known),
                                           secrets=redactor if redactor.patterns else None)
            checks, judge_failure = await evaluate(scenario, data, judge)
            if judge_failure is not None:
                out.append(kept_record(msgspec.structs.replace(
                    rec, status="error", reason=f"judge: {judge_failure}",
                    checks=not_evaluated(checks, f"judge: {judge_failure}"),
                    error=AttemptError("judge", judge_failure), failure=data.failure,
                    failure_kind=data.failure_kind, redacted=()), redactor, secrets))
                continue
            status, reason = attempt_status(data, checks)
            out.append(kept_record(msgspec.structs.replace(
                rec, status=status, reason=reason, checks=checks, error=None,
                failure=data.failure, failure_kind=data.failure_kind, redacted=()),
                redactor, secrets))
    finally:
        if model is not None:
            await model.aclose()
    return out, (judge.stats() if judge is not None else None)


def run_recheck(prepared: RecheckPlan, run_dir: Path, out: Path, ask_judge: bool,
                history: HistoryKept | None = None) -> Path:
    """Write the recheck's run folder into ``out``; returns it. ``history``: the history it
    is to be recorded in (run.json says so; never the old run's, which the folder names)."""
    plan = prepared.plan
    wanted = {s.id for s in plan.scenarios}
    records = [r for r in latest_records(run_dir) if r.scenario in wanted]
    rechecked, judge = asyncio.run(recheck_records(plan, records, ask_judge))
    # the transcripts are the old run's: so are its targets, its shard and its attempts
    targets = prepared.old_plan.targets
    new_plan = plan_file(plan).replace(
        targets=targets, shard=prepared.old_plan.shard,
        attempts=sum(s.runs for s in plan.scenarios) * len(targets))
    started = dt.datetime.now(dt.UTC)
    folder = create_run_dir(out)
    old = prepared.old_run
    info = RunInfo(
        run_id=folder.name, targets=targets, suite=new_plan.suite,
        started_at=old.started_at, scenarist=__version__, settings=prepared.settings,
        compare=old.compare or (), git=old.git, history=history,
        finished_at=old.finished_at, duration_s=old.duration_s,
        interrupted=bool(old.interrupted),
        judge=None if judge is None else JudgeUse.of(
            judge, True, plan.judge.target.name if plan.judge else None,
            old.judge.validation if old.judge else None),
        recheck_of=old.run_id or run_dir.name, rechecked_from=str(run_dir.resolve()),
        rechecked_at=started.isoformat(timespec="seconds"),
        refused=tuple(Refused(r.scenario, r.why) for r in prepared.refused))
    write_plan(folder, kept_plan(plan_json(new_plan), redactor_of(plan)))
    write_run_info(folder, info)
    copy_attachments([run_dir], folder)
    writer = ResultsWriter(folder)  # the records come redacted (kept_record)
    try:
        for rec in rechecked:
            writer.write(rec)
    finally:
        writer.close()
    return folder
