"""Run: execute a Plan — every (scenario, target, run index) attempt — and stream each
finished attempt to ``results.jsonl``.

A fixed pool of workers (``concurrency``) asks the :class:`~dsl.schedule.Scheduler` for the
next attempt, so memory stays flat however large the plan. Each target has its own
adaptive concurrency limit (halved on HTTP 429). Only this stage and the targets touch the
network. Ctrl-C stops handing out attempts and lets those in flight finish; a second
Ctrl-C cancels them.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .errors import Diagnostic, EndpointError, InputError, RunDirError
from .loop import LoopEndpointError, run_loop
from .model import SCHEMA_VERSION, AttemptData, Outcome, Plan, Scenario, Target
from .schedule import AdaptiveLimit, Key, Meter, Scheduler
from .store import ResultsWriter, target_json
from .targets.base import ChatModel, Reply

# After this many endpoint failures in a row (connection or timeout) with no success in
# between, a target is considered down and its remaining attempts are not run.
BREAKER_THRESHOLD = 5


@dataclass(frozen=True, slots=True)
class RunOptions:
    concurrency: int
    record: Path | None = None
    early_stop: bool = True
    max_calls: int | None = None
    max_tokens: int | None = None
    done: frozenset[Key] = frozenset()  # resume: attempts already recorded
    prior: tuple[dict[str, Any], ...] = ()  # resume: their records (for early stop)
    handle_signals: bool = False  # install the Ctrl-C handler (the CLI does)
    judge_cache: bool = True  # --no-judge-cache turns the judge's cache off
    record_judge: Path | None = None  # a cassette of the judge's questions and replies


@dataclass(slots=True)
class Totals:
    attempts: int = 0
    passed: int = 0
    failed: int = 0
    unsure: int = 0
    errors: int = 0
    tokens: int = 0
    model_calls: int = 0

    def add(self, record: dict[str, Any]) -> None:
        self.attempts += 1
        status = record["status"]
        if status == "pass":
            self.passed += 1
        elif status == "fail":
            self.failed += 1
        elif status == "unsure":
            self.unsure += 1
        else:
            self.errors += 1
        self.tokens += (record.get("tokens") or {}).get("total", 0)
        self.model_calls += record.get("steps") or 0


@dataclass(slots=True)
class RunState:
    """What the run did, besides the records it wrote."""

    totals: Totals = field(default_factory=Totals)
    scheduler: Scheduler | None = None
    interrupted: bool = False
    cancelled: int = 0  # attempts in flight when a second Ctrl-C cancelled them
    lowest_concurrency: dict[str, int] = field(default_factory=dict)
    judge: dict[str, int] | None = None  # questions asked, cache hits, tokens

    @property
    def down(self) -> dict[str, str]:
        return self.scheduler.down if self.scheduler else {}


class Metered:
    """Wraps a model: counts calls and tokens (budgets) and feeds the adaptive limit."""

    def __init__(self, inner: ChatModel, meter: Meter, limit: AdaptiveLimit) -> None:
        self.inner = inner
        self.settings = inner.settings
        self.meter = meter
        self.limit = limit

    async def complete(self, body: dict[str, Any]) -> Reply:
        reply = await self.inner.complete(body)
        self.meter.calls += 1
        self.meter.tokens += reply.tokens.total
        self.limit.succeeded()
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()


def open_model(target: Target, concurrency: int, on_throttle: Any = None) -> ChatModel:
    """The endpoint client for a model target (InputError for a missing cassette)."""
    if target.kind == "openai":
        from .targets.openai import OpenAIModel

        return OpenAIModel(target, max_connections=concurrency, on_throttle=on_throttle)
    if target.kind == "replay":
        from .targets.cassette import ReplayModel

        try:
            return ReplayModel(Path(target.cassette))
        except (RunDirError, FileNotFoundError) as exc:
            msg = str(exc) if isinstance(exc, RunDirError) else \
                f"the cassette {target.cassette} does not exist"
            raise InputError([Diagnostic(target.span, "E206",
                                         f"the replay target '{target.name}' cannot be used: "
                                         f"{msg}",
                                         "record one with scenarist run --target <live> "
                                         "--record FILE")]) from None
    raise ValueError(f"{target.kind} targets are not model endpoints")


async def evaluate(scenario: Scenario, data: AttemptData,
                   judge: Any = None) -> tuple[list[dict[str, Any]], str | None]:
    """Every check of the scenario on one attempt, and the judge's endpoint failure if
    there was one. Judge checks are asked concurrently."""

    async def one(c: Any) -> Outcome:
        if not (c.judge and c.evaluate_async is not None):
            return _sync(c, data)
        try:
            outcome: Outcome = await c.evaluate_async(c.params, data, judge)
            return outcome
        except Exception as exc:  # a bug in a check must not end the run
            return Outcome("error", f"the check could not be evaluated: "
                                    f"{type(exc).__name__}: {exc}")

    if judge is not None and any(c.judge for c in scenario.checks):
        outcomes = await asyncio.gather(*(one(c) for c in scenario.checks))
    else:  # no question for the judge: no need for a task per check
        outcomes = [_sync(c, data) for c in scenario.checks]
    out = []
    judge_failure = None
    for c, o in zip(scenario.checks, outcomes, strict=True):
        item: dict[str, Any] = {"check": c.name, "label": c.label, "status": o.status,
                                "score": o.score, "reason": o.reason}
        if o.items:
            item["items"] = [{k: v for k, v in i.items() if k != "evidence"} for i in o.items]
        if o.evidence is not None:
            item["evidence"] = dict(o.evidence)
        if o.judge_error and judge_failure is None:
            judge_failure = o.reason
        out.append(item)
    return out, judge_failure


def _sync(c: Any, data: AttemptData) -> Outcome:
    try:
        return c.run(data)  # type: ignore[no-any-return]
    except Exception as exc:  # a bug in a check must not end the run
        return Outcome("error", f"the check could not be evaluated: {type(exc).__name__}: "
                                f"{exc}")


def attempt_status(data: AttemptData, checks: list[dict[str, Any]]) -> tuple[str, str]:
    if data.failure:
        return "fail", data.failure
    failing = [c for c in checks if c["status"] in ("fail", "error")]
    if failing:
        return "fail", f"{len(failing)} of {len(checks)} checks failed: " + "; ".join(
            c["label"] for c in failing)
    if any(c["status"] == "unsure" for c in checks):
        return "unsure", "no check failed, but the judge was unsure"
    return "pass", f"all {len(checks)} checks passed"


def make_record(scenario: Scenario, target: Target, run: int, started: dt.datetime,
                status: str, reason: str, *, data: AttemptData | None = None,
                error: EndpointError | None = None,
                checks: list[dict[str, Any]] | None = None,
                partial: Any = None) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "scenario": scenario.id,
        "target": target.name,
        "run": run,
        "seed": run,
        "status": status,
        "reason": reason,
        "started_at": started.isoformat(timespec="milliseconds"),
    }
    if data is not None:
        rec.update(
            answer=data.answer,
            calls=[c.as_dict() for c in data.calls],
            messages=list(data.messages),
            steps=data.steps,
            latency_ms=round(data.latency_ms, 1),
            tokens=data.tokens.as_dict(),
            retries=data.retries,
            model_calls=list(data.model_calls),
        )
    elif partial is not None:  # an endpoint failed half-way: keep what happened
        rec.update(answer="", calls=[c.as_dict() for c in partial.calls],
                   messages=list(partial.messages), steps=partial.steps, latency_ms=None,
                   tokens=partial.tokens.as_dict(), retries=partial.retries,
                   model_calls=list(partial.model_calls))
    else:
        rec.update(answer="", calls=[], messages=[], steps=0, latency_ms=None,
                   tokens={"prompt": 0, "completion": 0, "total": 0}, retries=0,
                   model_calls=[])
    rec["checks"] = checks or []
    rec["error"] = ({"kind": error.kind, "message": error.message, "status": error.status}
                    if error else None)
    return rec


async def run_one(model: Any, scenario: Scenario, target: Target, run: int,
                  judge: Any = None) -> dict[str, Any]:
    """One attempt, start to finish, as a record. Never raises for endpoint trouble."""
    started = dt.datetime.now(dt.UTC)
    timeout = target.attempt_timeout_ms / 1000 if target.attempt_timeout_ms else None
    try:
        if target.kind == "python":
            coro = model.run(scenario, run)
        else:
            coro = run_loop(model, scenario, run)
        data = await asyncio.wait_for(coro, timeout) if timeout else await coro
    except LoopEndpointError as exc:
        return make_record(scenario, target, run, started, "error",
                           f"{exc.kind}: {exc.message}", error=exc, partial=exc.progress)
    except EndpointError as exc:
        return make_record(scenario, target, run, started, "error",
                           f"{exc.kind}: {exc.message}", error=exc)
    except TimeoutError:
        err = EndpointError("timeout", f"the attempt took longer than {timeout:g} s "
                                       "(attempt_timeout_ms)")
        return make_record(scenario, target, run, started, "error",
                           f"timeout: {err.message}", error=err)
    checks, judge_failure = await evaluate(scenario, data, judge)
    if judge_failure is not None:  # the judge could not be asked: no verdict, not a failure
        err = EndpointError("judge", judge_failure)
        return make_record(scenario, target, run, started, "error", f"judge: {judge_failure}",
                           data=data, error=err, checks=checks)
    status, reason = attempt_status(data, checks)
    return make_record(scenario, target, run, started, status, reason, data=data,
                       checks=checks)


async def execute(
    plan: Plan,
    run_dir: Path,
    options: RunOptions,
    on_attempt: Callable[[dict[str, Any], Totals], None] | None = None,
    *,
    notify: Callable[[str], None] | None = None,
) -> RunState:
    """Run the plan's attempts (those the scheduler hands out), writing each record as
    it ends. Returns when everything ran, a budget was reached, or Ctrl-C was pressed."""
    scheduler = Scheduler(plan, options.early_stop, options.done, options.max_calls,
                          options.max_tokens)
    scheduler.prime(options.prior)
    state = RunState(scheduler=scheduler)
    limits: dict[str, AdaptiveLimit] = {}
    models: dict[str, Any] = {}
    failures_in_row: dict[str, int] = {}
    redactor = plan.redact.redactor(plan.suite_targets) if plan.redact is not None else \
        _default_redactor(plan)
    judge = None
    try:
        if plan.judge is not None and any(c.judge for s in plan.scenarios for c in s.checks):
            from .judge import Judge

            jt = plan.judge.target
            jmodel: Any = open_model(jt, max(4, options.concurrency))
            if options.record_judge is not None:
                from .targets.cassette import Recorder

                jmodel = Recorder(jmodel, options.record_judge, jt.name, redactor)
            judge = Judge(plan.judge, jmodel, redactor, use_cache=options.judge_cache)
        for t in plan.targets:
            cap = min(t.concurrency or options.concurrency, options.concurrency)
            limit = limits[t.name] = AdaptiveLimit(cap)
            if t.kind == "python":
                from .targets.python import PythonAgent

                models[t.name] = PythonAgent(t, plan, scheduler.meter)
                continue
            model = open_model(t, cap, on_throttle=limit.throttled)
            if options.record is not None:
                from .targets.cassette import Recorder

                model = Recorder(model, options.record, t.name, redactor)
            models[t.name] = Metered(model, scheduler.meter, limit)
        writer = ResultsWriter(run_dir, redactor)
        tasks: list[asyncio.Task[None]] = []
        in_flight = 0

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
                        rec = await run_one(models[target.name], scenario, target, run,
                                            judge)
                    finally:
                        in_flight -= 1
                _breaker(rec, target.name, failures_in_row, scheduler)
                writer.write(rec)
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
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(*tasks)
        finally:
            if options.handle_signals:
                loop.remove_signal_handler(signal.SIGINT)
            writer.close()
    finally:
        for m in models.values():
            await m.aclose()
        if judge is not None:
            state.judge = judge.stats()
            await judge.model.aclose()
    state.lowest_concurrency = {n: lim.lowest for n, lim in limits.items()
                                if lim.lowest < lim.maximum}
    return state


def _default_redactor(plan: Plan) -> Any:
    from .redact import build

    return build({t.api_key_env for t in plan.suite_targets if t.api_key_env})


def _breaker(rec: dict[str, Any], target: str, in_row: dict[str, int],
             scheduler: Scheduler) -> None:
    err = rec.get("error")
    if err and err["kind"] in ("connection", "timeout"):
        in_row[target] = in_row.get(target, 0) + 1
        if in_row[target] >= BREAKER_THRESHOLD and target not in scheduler.down:
            scheduler.down[target] = (f"{in_row[target]} attempts in a row could not reach "
                                      f"the endpoint ({err['message']})")
    else:
        in_row[target] = 0


def run_info(plan: Plan, run_id: str, started: dt.datetime, argv: list[str]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "scenarist": __version__,
        "python": sys.version.split()[0],
        "suite": plan.suite_file,
        "started_at": started.isoformat(timespec="seconds"),
        "targets": [target_json(t) for t in plan.targets],
        "argv": argv,
    }
