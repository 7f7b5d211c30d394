"""Which attempt runs next, and when to stop.

The scheduler hands out (scenario, target, run index) attempts in a fair order — run 1 of
every scenario, then run 2, ... — and skips what need not run:

* **early stop**: a scenario × target whose verdict can no longer change (passes ≥
  min_pass, or min_pass out of reach even if every remaining run passed, or one attempt
  broke a check marked ``always: true``) gets no more attempts; the runs and model calls
  saved are counted and reported;
* **resume**: attempts already in the run folder are not run again;
* **a target that is down** (too many connection failures in a row) gets no more attempts;
* **budgets** (`--max-calls`, `--max-tokens`) and **Ctrl-C** stop handing out attempts;
  what is in flight finishes.

Early stop asks :class:`~dsl.verdict.Tally` — the one home of the verdict rule — whether a
scenario × target is settled, so a verdict reached early is, by construction, the verdict
the whole run would have reached (see dsl/verdict.py).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable, Iterator

import msgspec

from ..model import Plan, Scenario, Target
from ..store import AttemptRecord
from ..store.runfile import EarlyStop, SavedRuns
from ..verdict import Tally

Key = tuple[str, str, int]  # scenario id, target name, run index


class Meter(msgspec.Struct):
    """Model calls and tokens spent so far (counted as replies arrive, in-flight included)."""

    calls: int = 0
    tokens: int = 0


class AdaptiveLimit:
    """A target's concurrency: halves on HTTP 429 — at most once per ``COOLDOWN_S``, so a
    burst of 429s from requests already in flight counts once — and grows back by one
    after every ``limit / 4`` successful replies (additive increase, multiplicative
    decrease, as TCP does)."""

    COOLDOWN_S = 1.0

    def __init__(self, maximum: int) -> None:
        self.maximum = maximum
        self.limit = maximum
        self.active = 0
        self._streak = 0
        self._cond = asyncio.Condition()
        self.lowest = maximum
        self._last_cut = -1e9

    async def __aenter__(self) -> None:
        async with self._cond:
            await self._cond.wait_for(lambda: self.active < self.limit)
            self.active += 1

    async def __aexit__(self, *exc: object) -> None:
        async with self._cond:
            self.active -= 1
            self._cond.notify_all()

    def throttled(self) -> None:
        now = time.monotonic()
        if now - self._last_cut < self.COOLDOWN_S:
            return
        self._last_cut = now
        self.limit = max(1, self.limit // 2)
        self.lowest = min(self.lowest, self.limit)
        self._streak = 0

    def succeeded(self) -> None:
        if self.limit >= self.maximum:
            return
        self._streak += 1
        if self._streak >= max(1, self.limit // 4):
            self._streak = 0
            self.limit += 1
            # wake waiters: there is room now (notify needs the lock: do it soon)
            asyncio.get_running_loop().create_task(self._wake())

    async def _wake(self) -> None:
        async with self._cond:
            self._cond.notify_all()


class Scheduler(msgspec.Struct):
    plan: Plan
    early_stop: bool = True
    done: frozenset[Key] = frozenset()
    max_calls: int | None = None
    max_tokens: int | None = None
    meter: Meter = msgspec.field(default_factory=Meter)
    tallies: dict[tuple[str, str], Tally] = msgspec.field(default_factory=dict)
    saved_runs: dict[tuple[str, str], int] = msgspec.field(default_factory=dict)
    down: dict[str, str] = msgspec.field(default_factory=dict)
    stop_reason: str | None = None
    _jobs: Iterator[tuple[Scenario, Target, int]] | None = None
    _scenarios: dict[str, Scenario] = msgspec.field(default_factory=dict)

    def prime(self, records: Iterable[AttemptRecord]) -> None:
        """Count attempts that are already in the run folder (resume)."""
        for r in records:
            self.record(r)

    def tally(self, scenario: Scenario, target: str) -> Tally:
        key = (scenario.id, target)
        t = self.tallies.get(key)
        if t is None:
            t = self.tallies[key] = Tally(scenario.runs, scenario.min_pass, scenario.always)
        return t

    def record(self, rec: AttemptRecord) -> None:
        if not self._scenarios:
            self._scenarios = {s.id: s for s in self.plan.scenarios}
        scenario = self._scenarios.get(rec.scenario)
        if scenario is not None:
            self.tally(scenario, rec.target).add(rec.status, rec.steps, rec.broke_always)

    def stop(self, reason: str) -> None:
        if self.stop_reason is None:
            self.stop_reason = reason

    def _over_budget(self) -> str | None:
        if self.max_calls is not None and self.meter.calls >= self.max_calls:
            return f"the budget of {self.max_calls:,} model calls was reached"
        if self.max_tokens is not None and self.meter.tokens >= self.max_tokens:
            return f"the budget of {self.max_tokens:,} tokens was reached"
        return None

    def _all(self) -> Iterator[tuple[Scenario, Target, int]]:
        most = max((s.runs for s in self.plan.scenarios), default=0)
        for run in range(1, most + 1):
            for s in self.plan.scenarios:
                if run <= s.runs:
                    for t in self.plan.targets:
                        if s.runs_on(t.name):  # targets: skip the others
                            yield s, t, run

    def next(self) -> tuple[Scenario, Target, int] | None:
        """The next attempt to run, or None when there is nothing more to do."""
        if self._jobs is None:
            self._jobs = self._all()
        while True:
            if self.stop_reason is not None:
                return None
            budget = self._over_budget()
            if budget is not None:
                self.stop(budget)
                return None
            job = next(self._jobs, None)
            if job is None:
                return None
            s, t, run = job
            if (s.id, t.name, run) in self.done:
                continue
            if t.name in self.down:  # counted as "not run" by the summary
                continue
            key = (s.id, t.name)
            tally = self.tallies.get(key)
            if self.early_stop and tally is not None and tally.settled:
                self.saved_runs[key] = self.saved_runs.get(key, 0) + 1
                continue
            return job

    def saved(self) -> EarlyStop:
        """Runs not run because their verdict was already decided, and the model calls that
        saved (estimated from the mean steps of the attempts that did run)."""
        runs = sum(self.saved_runs.values())
        calls = 0.0
        for key, n in self.saved_runs.items():
            t = self.tallies.get(key)
            if t and t.finished:
                calls += n * t.steps / t.finished
        by_scenario = tuple(SavedRuns(k[0], k[1], n) for k, n in sorted(self.saved_runs.items()))
        return EarlyStop(runs, round(calls), by_scenario)
