"""Run: execute a Plan — every (scenario, target, run index) attempt — and stream each
finished attempt to ``results.jsonl``.

A fixed pool of workers (``concurrency``) pulls attempts from a generator, so memory stays
flat however large the plan. Only this stage and the targets touch the network.
"""

from __future__ import annotations

import asyncio
import datetime as dt
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from . import __version__
from .errors import EndpointError, InputError, RunDirError
from .loop import LoopEndpointError, run_loop
from .model import SCHEMA_VERSION, AttemptData, Outcome, Plan, Scenario, Target
from .store import ResultsWriter, target_json
from .targets.base import ChatModel

# After this many endpoint failures in a row (connection or timeout) with no success in
# between, a target is considered down and its remaining attempts are not run.
BREAKER_THRESHOLD = 5


@dataclass(frozen=True, slots=True)
class RunOptions:
    concurrency: int
    record: Path | None = None


@dataclass(slots=True)
class Totals:
    attempts: int = 0
    passed: int = 0
    failed: int = 0
    unsure: int = 0
    errors: int = 0
    skipped: int = 0
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
        self.tokens += record["tokens"]["total"]
        self.model_calls += record["steps"]


@dataclass(slots=True)
class TargetState:
    model: ChatModel
    failures_in_row: int = 0
    down: str | None = None  # why the target was given up on


@dataclass(slots=True)
class RunState:
    totals: Totals = field(default_factory=Totals)
    down: dict[str, str] = field(default_factory=dict)


def open_model(target: Target, concurrency: int) -> ChatModel:
    """The endpoint client for a target (may raise InputError for a bad cassette)."""
    if target.kind == "openai":
        from .targets.openai import OpenAIModel

        return OpenAIModel(target, max_connections=concurrency)
    if target.kind == "replay":
        from .targets.cassette import ReplayModel

        try:
            return ReplayModel(Path(target.cassette))
        except (RunDirError, FileNotFoundError) as exc:
            from .errors import Diagnostic

            msg = str(exc) if isinstance(exc, RunDirError) else \
                f"the cassette {target.cassette} does not exist"
            raise InputError([Diagnostic(target.span, "E206",
                                         f"the replay target '{target.name}' cannot be used: "
                                         f"{msg}",
                                         "record one with scenarist run --target <live> "
                                         "--record FILE")]) from None
    raise InputError([])  # python targets are not model endpoints


def evaluate(scenario: Scenario, data: AttemptData) -> list[dict[str, Any]]:
    out = []
    for c in scenario.checks:
        try:
            o = c.run(data)
        except Exception as exc:  # a bug in a check must not end the run
            o = Outcome("error", f"the check could not be evaluated: {type(exc).__name__}: "
                                 f"{exc}")
        out.append({"check": c.name, "label": c.label, "status": o.status,
                    "score": o.score, "reason": o.reason})
    return out


def attempt_status(data: AttemptData, checks: list[dict[str, Any]]) -> tuple[str, str]:
    if data.failure:
        return "fail", data.failure
    failing = [c for c in checks if c["status"] in ("fail", "error")]
    if failing:
        return "fail", f"{len(failing)} of {len(checks)} checks failed: " + "; ".join(
            c["label"] for c in failing)
    if any(c["status"] == "unsure" for c in checks):
        return "unsure", "the judge was unsure"
    return "pass", f"all {len(checks)} checks passed"


def make_record(scenario: Scenario, target: Target, run: int, started: dt.datetime,
                data: AttemptData | None, error: EndpointError | None,
                checks: list[dict[str, Any]], status: str, reason: str,
                extra: dict[str, Any]) -> dict[str, Any]:
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
        )
    rec["checks"] = checks
    rec["error"] = ({"kind": error.kind, "message": error.message, "status": error.status}
                    if error else None)
    rec.update(extra)
    return rec


async def run_one(model: ChatModel, scenario: Scenario, target: Target,
                  run: int) -> dict[str, Any]:
    started = dt.datetime.now(dt.UTC)
    try:
        data = await run_loop(model, scenario, run)
    except LoopEndpointError as exc:
        p = exc.progress
        rec = make_record(scenario, target, run, started, None, exc, [], "error",
                          f"{exc.kind}: {exc.message}", {})
        rec.update(answer="", calls=[c.as_dict() for c in p.calls], messages=p.messages,
                   steps=p.steps, latency_ms=None, tokens=p.tokens.as_dict(),
                   retries=p.retries, model_calls=p.model_calls)
        return rec
    checks = evaluate(scenario, data)
    status, reason = attempt_status(data, checks)
    return make_record(scenario, target, run, started, data, None, checks, status, reason,
                       {"retries": data.retries, "model_calls": list(data.model_calls)})


def jobs(plan: Plan) -> Iterator[tuple[Scenario, Target, int]]:
    """Attempts in a fair order: run 1 of every scenario, then run 2, ..."""
    most = max((s.runs for s in plan.scenarios), default=0)
    for run in range(1, most + 1):
        for s in plan.scenarios:
            if run <= s.runs:
                for t in plan.targets:
                    yield s, t, run


async def execute(
    plan: Plan,
    run_dir: Path,
    options: RunOptions,
    on_attempt: Callable[[dict[str, Any], Totals], None] | None = None,
) -> RunState:
    """Run every attempt of the plan, writing each record as it ends."""
    state = RunState()
    models: dict[str, TargetState] = {}
    try:
        for t in plan.targets:
            model = open_model(t, t.concurrency or options.concurrency)
            if options.record is not None:
                from .targets.cassette import Recorder

                model = Recorder(model, options.record, t.name)
            models[t.name] = TargetState(model)
        writer = ResultsWriter(run_dir)
        try:
            queue = jobs(plan)
            limits = {t.name: asyncio.Semaphore(t.concurrency) for t in plan.targets
                      if t.concurrency}

            async def worker() -> None:
                for scenario, target, run in queue:
                    ts = models[target.name]
                    if ts.down is not None:
                        state.totals.skipped += 1
                        continue
                    sem = limits.get(target.name)
                    if sem is not None:
                        async with sem:
                            rec = await run_one(ts.model, scenario, target, run)
                    else:
                        rec = await run_one(ts.model, scenario, target, run)
                    _breaker(ts, rec, state, target.name)
                    writer.write(rec)
                    state.totals.add(rec)
                    if on_attempt is not None:
                        on_attempt(rec, state.totals)

            n = max(1, min(options.concurrency, plan.attempts))
            await asyncio.gather(*(worker() for _ in range(n)))
        finally:
            writer.close()
    finally:
        for ts in models.values():
            await ts.model.aclose()
    return state


def _breaker(ts: TargetState, rec: dict[str, Any], state: RunState, name: str) -> None:
    err = rec.get("error")
    if err and err["kind"] in ("connection", "timeout"):
        ts.failures_in_row += 1
        if ts.failures_in_row >= BREAKER_THRESHOLD and ts.down is None:
            ts.down = (f"{ts.failures_in_row} attempts in a row could not reach the endpoint "
                       f"({err['message']})")
            state.down[name] = ts.down
    else:
        ts.failures_in_row = 0


def run_info(plan: Plan, run_id: str, started: dt.datetime, argv: list[str]) -> dict[str, Any]:
    return {
        "schema_version": SCHEMA_VERSION,
        "run_id": run_id,
        "scenarist": __version__,
        "suite": plan.suite_file,
        "started_at": started.isoformat(timespec="seconds"),
        "targets": [target_json(t) for t in plan.targets],
        "argv": argv,
    }
