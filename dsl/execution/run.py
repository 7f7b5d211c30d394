"""Run: execute a Plan — every (scenario, target, run index) attempt — and stream each
finished attempt to ``results.jsonl``.

A fixed pool of workers (``concurrency``) asks the
:class:`~dsl.execution.schedule.Scheduler` for the next attempt, so memory stays flat
however large the plan. Each target has its own adaptive concurrency limit (halved on HTTP
429). Only this stage and the targets touch the network. Ctrl-C stops handing out attempts
and lets those in flight finish; a second Ctrl-C cancels them.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import re
import signal
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec.structs import replace

from ..compiler.redact import Known, Redactor, redactor_for, restore
from ..errors import EndpointError
from ..model import (
    FAILS_FOR_GOOD,
    AttemptData,
    CompiledCheck,
    Outcome,
    Plan,
    Scenario,
    Target,
    WorldRun,
    ended_by,
    stands,
    undecided,
)
from ..store import (
    AttemptError,
    AttemptRecord,
    CheckResult,
    ModelCallStat,
    ResultsWriter,
)
from ..store.records import failure_kind, not_evaluated, record_from_json
from ..store.runfile import JudgeStats
from ..store.typed import builtins
from ..targets.base import ATTEMPT_SECRETS, Agent, AgentContext, Clients, Reply
from ..targets.cassette import Recorder
from ..verdict import AttemptStatus
from .loop import LoopEndpointError, LoopState
from .schedule import AdaptiveLimit, Key, Scheduler

if TYPE_CHECKING:
    from ..judge import Judge

# After this many endpoint failures in a row (connection or timeout) with no success in
# between, a target is considered down and its remaining attempts are not run.
BREAKER_THRESHOLD = 5


# How long after the first attempts start the pipeline begins making plan.json: by then a
# local endpoint has their first requests (bench/cases_bench.py); a record written sooner
# makes it at once (RunOptions.before_results)
PLAN_AFTER_S = 0.05


class RunOptions(msgspec.Struct, frozen=True):
    concurrency: int
    record: Path | None = None
    early_stop: bool = True
    max_calls: int | None = None
    max_tokens: int | None = None
    done: frozenset[Key] = frozenset()  # resume: attempts already recorded
    prior: tuple[AttemptRecord, ...] = ()  # resume: their records (for early stop)
    handle_signals: bool = False  # install the Ctrl-C handler (the CLI does)
    judge_cache: bool = True  # --no-judge-cache turns the judge's cache off
    record_judge: Path | None = None  # a cassette of the judge's questions and replies
    # called once before the first record is written: plan.json is then on disk (the
    # pipeline writes it while the first attempts run; OSError stops the run)
    before_results: Callable[[], None] | None = None
    # called once the first attempts have sent their first requests (PLAN_AFTER_S after
    # they start): the pipeline begins making plan.json then, off their way
    start_plan: Callable[[], None] | None = None


class Totals(msgspec.Struct):
    """Attempts run so far, by status (the progress line)."""

    attempts: int = 0
    passed: int = 0
    failed: int = 0
    unsure: int = 0
    errors: int = 0
    tokens: int = 0
    model_calls: int = 0

    def add(self, record: AttemptRecord) -> None:
        self.attempts += 1
        status = record.status
        if status == "pass":
            self.passed += 1
        elif status == "fail":
            self.failed += 1
        elif status == "unsure":
            self.unsure += 1
        else:
            self.errors += 1
        self.tokens += record.tokens.total if record.tokens is not None else 0
        self.model_calls += record.steps


class RunState(msgspec.Struct):
    """What the run did, besides the records it wrote."""

    totals: Totals = msgspec.field(default_factory=Totals)
    scheduler: Scheduler | None = None
    interrupted: bool = False
    cancelled: int = 0  # attempts in flight when a second Ctrl-C cancelled them
    lowest_concurrency: dict[str, int] = msgspec.field(default_factory=dict)
    judge: JudgeStats | None = None  # questions asked, cache hits, tokens
    write_error: str | None = None  # results.jsonl could not be written (a full disk)

    @property
    def down(self) -> dict[str, str]:
        return self.scheduler.down if self.scheduler else {}


async def evaluate(scenario: Scenario, data: AttemptData,
                   judge: Judge | None = None) -> tuple[tuple[CheckResult, ...], str | None]:
    """Every check of the scenario on one attempt (a conversation's: each turn's checks on
    what that turn produced, then the scenario's own on the whole conversation), and the
    judge's endpoint failure if there was one. Judge checks are asked concurrently."""
    checks = scenario.all_checks
    views = _views(scenario, data) if scenario.turns or data.failure else None

    async def one(c: CompiledCheck, d: AttemptData | Outcome | _Undecided) -> Outcome:
        if isinstance(d, Outcome):
            return d
        if isinstance(d, _Undecided):
            seen = d.data
            return _stands_or_not(c, d, lambda: _sync(c, seen))
        if not (c.judge and c.evaluate_async is not None):
            return _sync(c, d)
        try:
            outcome: Outcome = await c.evaluate_async(c.params, d, judge)
            return outcome
        except Exception as exc:  # a bug in a check must not end the run
            return Outcome("error", f"the check could not be evaluated: "
                                    f"{type(exc).__name__}: {exc}")

    if views is None and not (judge is not None and any(c.judge for c in checks)):
        # no question for the judge: no need for a task per check
        outcomes = [_sync(c, data) for c in checks]
    else:
        seen = views or [data] * len(checks)
        outcomes = list(await asyncio.gather(*(one(c, d) for c, d in zip(checks, seen,
                                                                          strict=True))))
    out = []
    judge_failure = None
    for c, o in zip(checks, outcomes, strict=True):
        out.append(CheckResult(c.name, c.label, o.status, o.reason, o.score, o.items,
                               o.evidence, c.turn, c.always))
        if o.judge_error and judge_failure is None:
            judge_failure = o.reason
    return tuple(out), judge_failure


def _views(scenario: Scenario, data: AttemptData
           ) -> list[AttemptData | Outcome | _Undecided]:
    """What each check looks at: in a scripted conversation, its turn's view; the whole
    attempt for the scenario's own checks. A check whose part of the attempt failed before
    the checks could decide, or whose turn was never reached, gets the outcome that says
    so — *not evaluated* (:func:`dsl.model.undecided`): never a pass or a fail read off an
    answer that never came. Such checks count neither way."""
    out: list[AttemptData | Outcome | _Undecided] = []
    for n, spec in enumerate(scenario.turns):
        if not spec.checks:
            continue
        why = undecided(n + 1, data.failure, data.turns)
        view: AttemptData | Outcome | _Undecided
        if why is None:
            view = data.turn(n)
        elif n < len(data.turns) and data.turns[n].steps:  # it failed after the agent acted
            view = _Undecided(data.turn(n), why)
        else:  # never reached, or the agent was never asked: nothing can stand
            view = Outcome("not_evaluated", why)
        out.extend([view] * len(spec.checks))
    why = undecided(None, data.failure, data.turns)
    out.extend([data if why is None else _Undecided(data, why)] * len(scenario.checks))
    return out


class _Undecided(msgspec.Struct, frozen=True):
    """A check's view of a part that failed before the checks could decide: the check is
    evaluated only if its failure would stand (dsl.model.stands), else *not evaluated*."""

    data: AttemptData
    why: str


def _stands_or_not(c: CompiledCheck, view: _Undecided, run: Callable[[], Outcome]
                   ) -> Outcome:
    """The check's outcome on a part that failed first: its failure when it stands (what
    the agent did: a forbidden call), else *not evaluated* with why."""
    if c.name in FAILS_FOR_GOOD:
        outcome = run()
        if stands(c.name, outcome.status):
            return outcome
    return Outcome("not_evaluated", view.why)


def _sync(c: CompiledCheck, data: AttemptData) -> Outcome:
    try:
        return c.run(data)
    except Exception as exc:  # a bug in a check must not end the run
        return Outcome("error", f"the check could not be evaluated: {type(exc).__name__}: "
                                f"{exc}")


def attempt_status(data: AttemptData, checks: tuple[CheckResult, ...]
                   ) -> tuple[AttemptStatus, str]:
    """An attempt passes when all its checks pass; unsure when none failed but the judge
    could not tell."""
    if data.failure:
        return "fail", data.failure
    failing = [c for c in checks if c.status in ("fail", "error")]
    if failing:
        return "fail", f"{len(failing)} of {len(checks)} checks failed: " + "; ".join(
            c.label for c in failing)
    if any(c.status == "unsure" for c in checks):
        return "unsure", "no check failed, but the judge was unsure"
    return "pass", f"all {len(checks)} checks passed"


# The reasons attempt_status gives from the checks (any other reason of a failed attempt
# is the loop's failure): loop_failure reads them back from records older than `failure`.
_CHECKS_REASON = re.compile(r"\d+ of \d+ checks failed: |all \d+ checks passed$"
                            r"|no check failed, but the judge was unsure$")


def loop_failure(record: AttemptRecord) -> str | None:
    """Why the agent loop failed a stored attempt (max_steps), whatever its checks say:
    the record's ``failure``; in a record written before it was kept, the reason
    :func:`attempt_status` gave that is not about the checks."""
    if record.failure:
        return record.failure
    if record.status == "fail" and record.reason and not _CHECKS_REASON.match(record.reason):
        return record.reason
    return None


def make_record(scenario: Scenario, target: Target, run: int, started: dt.datetime,
                status: AttemptStatus, reason: str, *, data: AttemptData | None = None,
                error: EndpointError | None = None,
                checks: tuple[CheckResult, ...] = (),
                partial: LoopState | None = None, redact: Any = None) -> AttemptRecord:
    """The record of one finished attempt: from what the agent produced (``data``), or
    what it had done when the endpoint failed half-way (``partial``), or nothing.
    ``redact`` (the run's Redactor): the world's changes say where a row is when its id
    will be kept redacted."""
    common: dict[str, Any] = {
        "scenario": scenario.id, "target": target.name, "run": run, "status": status,
        "reason": reason, "started_at": started.isoformat(timespec="milliseconds"),
        "checks": checks,
        "error": AttemptError(error.kind, error.message, error.status) if error else None}
    if data is not None:
        return AttemptRecord(
            **common, answer=data.answer, calls=data.calls, messages=data.messages,
            steps=data.steps, latency_ms=round(data.latency_ms, 1),
            tokens=data.tokens if data.tokens_known else None,
            retries=data.retries, model_calls=tuple(_stat(m) for m in data.model_calls),
            failure=data.failure,
            failure_kind=(data.failure_kind or failure_kind(data.failure)) if data.failure
            else None,
            turns=data.turns, history=data.history_messages, goal_reached=data.goal_reached,
            stderr=data.stderr, world=_world_changes(data, redact), mcp=data.mcp,
            world_turns=_turn_changes(data, redact), user_messages=data.user_messages,
            ended_by=ended_by(data.calls, scenario.tools), retried=data.retried)
    if partial is not None:  # an endpoint failed half-way: keep what happened
        return AttemptRecord(
            **common, calls=tuple(partial.calls), messages=tuple(partial.messages),
            steps=partial.steps, tokens=partial.tokens if partial.tokens_known else None,
            retries=partial.retries,
            model_calls=tuple(_stat(m) for m in partial.model_calls),
            turns=tuple(partial.turns), history=len(scenario.history), stderr=partial.stderr,
            user_messages=tuple(partial.user_messages), retried=tuple(partial.retried))
    return AttemptRecord(**common)


def _world_changes(data: AttemptData, redact: Any) -> tuple[dict[str, Any], ...] | None:
    if data.world is None:
        return None
    # why: the world, only for a suite with one; run or recheck load this module without it
    from ..compiler.world import changes

    return tuple(changes(data.world, _hides(redact)))


def _hides(redact: Any) -> Any:
    return redact.value if redact is not None and redact.patterns else None


def _turn_changes(data: AttemptData, redact: Any) -> tuple[tuple[dict[str, Any], ...], ...]:
    if data.world is None or not data.world.turns or not data.turns:
        return ()
    # why: the world, only for a suite with one; run or recheck load this module without it
    from ..compiler.world import changes

    run = data.world
    return tuple(tuple(changes(WorldRun(run.before, t), _hides(redact))) for t in run.turns)


def _stat(m: Any) -> ModelCallStat:
    return ModelCallStat(m.get("latency_ms"), m.get("finish_reason"), m.get("tokens") or 0,
                         m.get("retries") or 0)


# A record's fields written as they are: who, when, how long, how many (the counts and the
# timings are no secret, and a pattern over digits must not turn them into text)
RECORD_KEPT = frozenset({"schema_version", "scenario", "target", "run", "seed", "status",
                         "started_at", "steps", "latency_ms", "tokens", "retries",
                         "model_calls", "history", "mcp", "ended_by", "redacted"})
# where a number may be a secret (a PIN the agent passed, a row's card number)
RECORD_NUMBERS = frozenset({"args", "world", "world_turns", "discarded"})

_KNOWN: dict[tuple[int, int], tuple[Redactor, Scenario, Known]] = {}


def known_secrets(redact: Redactor, scenario: Scenario) -> Known:
    """The secrets ``scenario`` itself holds (what the person says, the system prompt, the
    tools, the world's rows, the case's values — never its checks) and the redacted
    variables' values: what a record's ``[REDACTED:NAME]`` marks may be restored to. Kept
    per scenario while the run lasts (the last few hundred)."""
    key = (id(redact), id(scenario))
    kept = _KNOWN.get(key)
    if kept is not None and kept[0] is redact and kept[1] is scenario:
        return kept[2]
    known = redact.known(scenario)
    if len(_KNOWN) >= 256:
        _KNOWN.clear()
    _KNOWN[key] = (redact, scenario, known)
    return known


def kept_record(rec: AttemptRecord, redact: Redactor | None,
                known: Known | None = None, verdict_only: bool = False) -> AttemptRecord:
    """The record as results.jsonl keeps it and everything after the run shows it: every
    secret replaced by its ``[REDACTED:NAME]`` mark, and ``redacted`` saying which of the
    scenario's own secrets (``known``) each mark stands for (:func:`restored_record`).
    ``verdict_only``: the rest of the record was found to hold no secret (the attempt's
    own texts, by :func:`checked_data`): only the reason, the checks and the error are
    searched first."""
    if redact is None or not redact.patterns:
        return rec
    if verdict_only:
        _red, found = redact.traced({"reason": rec.reason, "checks": builtins(rec.checks),
                                     "error": builtins(rec.error)}, known or Known({}))
        if not found:
            return rec
    red, hints = redact.traced(builtins(replace(rec, redacted=())), known or Known({}),
                               RECORD_KEPT, RECORD_NUMBERS)
    if not hints:
        return rec
    red["redacted"] = hints
    return record_from_json(red)


def restored_record(rec: AttemptRecord, known: Known) -> AttemptRecord:
    """A record as the attempt had it: each mark its ``redacted`` names put back (recheck
    reads what results.jsonl keeps; the live checks see the same)."""
    if not rec.redacted:
        return rec
    data = builtins(rec)
    hints = data.pop("redacted")
    back = restore(data, list(hints), known)
    if back is data:
        return rec
    return record_from_json(back)


def _exact(hints: Any) -> bool:
    """Every mark of a record can be put back (it stood for a secret the scenario holds)."""
    return all(_exact(h[1]) if isinstance(h, list) else isinstance(h, int) for h in hints)


def checked_data(data: AttemptData, rec: AttemptRecord, redact: Redactor | None,
                 known: Known | None) -> tuple[AttemptData, bool]:
    """The attempt as its checks see it, live, on replay and on recheck alike: the true
    values, each secret put back from the record results.jsonl keeps (``rec``: the
    attempt's record before its checks). A secret the scenario does not hold (the agent
    made it up, or read it elsewhere) stays its ``[REDACTED:NAME]`` mark here as on
    recheck; ``no_secrets`` looks for both. And whether the record held no secret at all."""
    if redact is None or not redact.patterns:
        return data, True
    kept = kept_record(rec, redact, known)
    if _exact(kept.redacted):
        return replace(data, secrets=redact), not kept.redacted
    back = restored_record(kept, known or Known({}))
    return replace(data, answer=back.answer, calls=back.calls, messages=back.messages,
                   turns=back.turns, user_messages=back.user_messages,
                   failure=back.failure, stderr=back.stderr, secrets=redact), False


async def run_one(agent: Agent, scenario: Scenario, target: Target, run: int,
                  judge: Judge | None = None, redact: Any = None) -> AttemptRecord:
    """One attempt, start to finish, as a record. Never raises for endpoint trouble.
    ``redact`` (the run's Redactor): the checks see the true values; the record is kept
    redacted (:func:`kept_record`)."""
    started = dt.datetime.now(dt.UTC)
    timeout = target.attempt_timeout_ms / 1000 if target.attempt_timeout_ms else None
    known = known_secrets(redact, scenario) if redact is not None and redact.patterns \
        else None
    ATTEMPT_SECRETS.set(known)  # (this task's: each attempt runs in a task of its own)
    try:
        coro = agent.run(scenario, run)
        data = await asyncio.wait_for(coro, timeout) if timeout else await coro
    except LoopEndpointError as exc:
        return kept_record(make_record(scenario, target, run, started, "error",
                                       f"{exc.kind}: {exc.message}", error=exc,
                                       partial=exc.progress), redact)
    except EndpointError as exc:
        return kept_record(make_record(scenario, target, run, started, "error",
                                       f"{exc.kind}: {exc.message}", error=exc), redact)
    except TimeoutError:
        err = EndpointError("timeout", f"the attempt took longer than {timeout:g} s "
                                       "(attempt_timeout_ms)")
        return kept_record(make_record(scenario, target, run, started, "error",
                                       f"timeout: {err.message}", error=err), redact)
    # the checks see the true values, as a replay and a recheck restore them
    seen, clean = checked_data(data, make_record(scenario, target, run, started, "pass", "",
                                                 data=data, redact=redact), redact, known)
    checks, judge_failure = await evaluate(scenario, seen, judge)
    if judge_failure is not None:  # the judge could not be asked: no verdict, not a failure
        err = EndpointError("judge", judge_failure)
        return kept_record(make_record(scenario, target, run, started, "error",
                                       f"judge: {judge_failure}", data=data, error=err,
                                       checks=not_evaluated(checks, f"judge: {judge_failure}"),
                                       redact=redact), redact, known, clean)
    status, reason = attempt_status(seen, checks)
    return kept_record(make_record(scenario, target, run, started, status, reason,
                                   data=data, checks=checks, redact=redact),
                       redact, known, clean)


async def execute(
    plan: Plan,
    run_dir: Path,
    options: RunOptions,
    on_attempt: Callable[[AttemptRecord, Totals], None] | None = None,
    *,
    clients: Clients,
    notify: Callable[[str], None] | None = None,
) -> RunState:
    """Run the plan's attempts (those the scheduler hands out), writing each record as
    it ends. Returns when everything ran, a budget was reached, or Ctrl-C was pressed.
    ``clients`` opens the targets (the pipeline gives ``dsl.clients.open.CLIENTS``)."""
    scheduler = Scheduler(plan, options.early_stop, options.done, options.max_calls,
                          options.max_tokens)
    scheduler.prime(options.prior)
    state = RunState(scheduler=scheduler)
    limits: dict[str, AdaptiveLimit] = {}
    agents: dict[str, Agent] = {}
    failures_in_row: dict[str, int] = {}
    redactor = redactor_of(plan)
    judge = None
    try:
        if plan.judge is not None and any(c.judge for s in plan.scenarios
                                          for c in s.all_checks):
            # why: the judge; run or recheck load this module without it
            from ..judge import Judge

            jt = plan.judge.target
            jmodel: Any = clients.open_model(jt, max(4, options.concurrency))
            if options.record_judge is not None:
                jmodel = Recorder(jmodel, options.record_judge, jt.name, redactor.value)
            judge = Judge(plan.judge, jmodel, redactor, use_cache=options.judge_cache)
        for t in plan.targets:
            cap = min(t.concurrency or options.concurrency, options.concurrency)
            limit = limits[t.name] = AdaptiveLimit(cap)
            agents[t.name] = clients.open_agent(t, AgentContext(
                max_connections=cap, suite_root=Path(plan.suite_root),
                suite_targets=plan.suite_targets, on_reply=_metering(scheduler, limit),
                on_throttle=limit.throttled, record=options.record, redact=redactor.value,
                redactor=redactor,
                secret_env=redactor.env))
        writer = ResultsWriter(run_dir)  # records come redacted (kept_record)
        tasks: list[asyncio.Task[None]] = []
        in_flight = 0
        waiting = [options.before_results] if options.before_results else []

        async def worker() -> None:
            nonlocal in_flight
            while True:
                job = scheduler.next()
                if job is None:
                    return
                scenario, target, run = job
                async with limits[target.name]:
                    in_flight += 1
                    try:
                        rec = await run_one(agents[target.name], scenario, target, run,
                                            judge, redactor)
                    finally:
                        in_flight -= 1
                _breaker(rec, target.name, failures_in_row, scheduler, redactor)
                try:
                    while waiting:  # once, before the first record: plan.json is written
                        waiting.pop()()
                    writer.write(rec)
                except OSError as exc:  # a full disk: stop, keep what was written
                    if state.write_error is None:
                        state.write_error = (f"cannot write {writer.path}: "
                                             f"{exc.strerror or exc}")
                        scheduler.stop(state.write_error)
                    return
                scheduler.record(rec)
                state.totals.add(rec)
                if on_attempt is not None:
                    on_attempt(rec, state.totals)

        def interrupt() -> None:
            if not state.interrupted:
                state.interrupted = True
                scheduler.stop("interrupted")
                if notify:
                    notify(f"Interrupted: finishing {in_flight} attempt(s) in flight; press "
                           "Ctrl-C again to cancel them.")
            else:
                state.cancelled = in_flight
                for task in tasks:
                    task.cancel()

        loop = asyncio.get_running_loop()
        if options.handle_signals:
            loop.add_signal_handler(signal.SIGINT, interrupt)
        try:
            n = max(1, min(options.concurrency, plan.attempts))
            tasks.extend(asyncio.ensure_future(worker()) for _ in range(n))
            if options.start_plan is not None:
                loop.call_later(PLAN_AFTER_S, options.start_plan)
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*tasks)
        finally:
            if options.handle_signals:
                loop.remove_signal_handler(signal.SIGINT)
            writer.close()
    finally:
        for a in agents.values():
            await a.aclose()
        if judge is not None:
            state.judge = judge.stats()
            await judge.model.aclose()
    state.lowest_concurrency = {n: lim.lowest for n, lim in limits.items()
                                if lim.lowest < lim.maximum}
    return state


def _metering(scheduler: Scheduler, limit: AdaptiveLimit) -> Any:
    meter = scheduler.meter

    def on_reply(reply: Reply) -> None:
        meter.calls += 1
        meter.tokens += reply.tokens.total
        limit.succeeded()

    return on_reply


def redactor_of(plan: Plan) -> Redactor:
    """What the run redacts before anything reaches the judge or a file."""
    return redactor_for(plan.redact, plan.suite_targets)


def _breaker(rec: AttemptRecord, target: str, in_row: dict[str, int],
             scheduler: Scheduler, redact: Callable[[str], str]) -> None:
    err = rec.error
    if err and err.kind in ("connection", "timeout"):
        in_row[target] = in_row.get(target, 0) + 1
        if in_row[target] >= BREAKER_THRESHOLD and target not in scheduler.down:
            # the endpoint's own words may echo a key: shown and kept only redacted
            scheduler.down[target] = redact(f"{in_row[target]} attempts in a row could not "
                                            f"reach the endpoint ({err.message})")
    else:
        in_row[target] = 0
