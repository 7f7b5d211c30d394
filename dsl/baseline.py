"""Baseline: compare this run's summary with an earlier one, scenario × target by scenario ×
target.

Each row of the current summary gets a :class:`Change`:

* ``regressed`` — it passed before and fails now, and the drop in pass rate is real: the
  95% interval of the difference lies below zero;
* ``improved`` — it failed before and passes now, and the rise is real (interval above 0);
* ``unchanged`` — the same verdict on both sides;
* ``inconclusive`` — either side has no verdict (endpoint errors decided it), or the verdict
  flipped but the interval of the difference contains zero: with this few attempts the
  flip may be chance, so it is reported as such rather than as a regression;
* ``new`` — the baseline has no such scenario × target.

Rows that only the baseline has are listed in :attr:`Comparison.removed`.

The difference is ``now − before`` of the pass rates (passes ÷ decided attempts), with
Newcombe's hybrid score interval (method 10 in Newcombe, *Statistics in Medicine* 1998),
built from the two 95% Wilson intervals that ``summarize`` reports.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from .errors import RunDirError
from .store import SUMMARY, read_json
from .summarize import summarize_dir, wilson
from .verdict import words

ChangeStatus = Literal["regressed", "improved", "unchanged", "inconclusive", "new"]
CHANGE_STATUSES: tuple[ChangeStatus, ...] = (
    "regressed", "improved", "inconclusive", "new", "unchanged")


@dataclass(frozen=True, slots=True)
class Interval:
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, Interval]:
    """The difference p1 − p2 (p = k ÷ n) and its 95% hybrid score interval."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError("both sides need at least one decided attempt")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, Interval(max(-1.0, low), min(1.0, high))


@dataclass(frozen=True, slots=True)
class Change:
    """How one scenario × target moved against the baseline."""

    scenario: str
    target: str
    status: ChangeStatus
    verdict_before: str | None
    verdict_now: str
    rate_before: float | None
    rate_now: float | None
    delta: float | None  # rate_now − rate_before
    interval: Interval | None  # 95% interval of delta
    note: str  # the status in plain words


@dataclass(frozen=True, slots=True)
class Comparison:
    """This run against a baseline run."""

    baseline_run_id: str | None
    baseline_started_at: str | None
    changes: tuple[Change, ...]
    removed: tuple[tuple[str, str], ...]  # (scenario, target) only the baseline has

    def get(self, scenario: str, target: str) -> Change | None:
        for c in self.changes:
            if c.scenario == scenario and c.target == target:
                return c
        return None

    def by_key(self) -> dict[tuple[str, str], Change]:
        return {(c.scenario, c.target): c for c in self.changes}

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = dict.fromkeys(CHANGE_STATUSES, 0)
        for c in self.changes:
            out[c.status] += 1
        return out


def pts(x: float) -> str:
    """A difference of rates in percentage points, always signed: ``+12``, ``−5``, ``0``."""
    v = round(x * 100)
    if v == 0:
        return "0"
    return f"+{v}" if v > 0 else f"−{-v}"


def describe_delta(delta: float | None, interval: Interval | None) -> str:
    if delta is None or interval is None:
        return "no difference can be computed"
    return (f"{pts(delta)} pts (95% CI {pts(interval.low)} to {pts(interval.high)})")


def compare_row(now: Mapping[str, Any], before: Mapping[str, Any] | None) -> Change:
    """The change of one summary row against the baseline's row (None: not in baseline)."""
    scenario, target, v_now = now["scenario"], now["target"], now["verdict"]
    rate_now = now["passes"] / now["decided"] if now["decided"] else None
    if before is None:
        return Change(scenario, target, "new", None, v_now, None, rate_now, None, None,
                      "not in the baseline")
    v_before = before["verdict"]
    rate_before = before["passes"] / before["decided"] if before["decided"] else None
    delta: float | None = None
    interval: Interval | None = None
    if now["decided"] and before["decided"]:
        delta, interval = newcombe(now["passes"], now["decided"],
                                   before["passes"], before["decided"])
    diff = describe_delta(delta, interval)
    status: ChangeStatus
    if "inconclusive" in (v_now, v_before):
        side = "this run" if v_now == "inconclusive" else "the baseline"
        if v_now == v_before == "inconclusive":
            side = "both runs"
        status, note = "inconclusive", f"no verdict in {side}; {diff}"
    elif v_now == v_before:
        status, note = "unchanged", f"{words(v_now).past} before and now; {diff}"
    elif interval is None or not interval.excludes_zero():
        was = "passed before, fails now" if v_before == "pass" else "failed before, passes now"
        status, note = "inconclusive", f"{was}, but the difference may be chance: {diff}"
    elif v_before == "pass":
        status, note = "regressed", f"passed before, fails now: {diff}"
    else:
        status, note = "improved", f"failed before, passes now: {diff}"
    return Change(scenario, target, status, v_before, v_now, rate_before, rate_now, delta,
                  interval, note)


def compare(now: Mapping[str, Any], before: Mapping[str, Any]) -> Comparison:
    """Compare two summaries (``summary.json`` values)."""
    old = {(r["scenario"], r["target"]): r for r in before["scenarios"]}
    changes = tuple(compare_row(r, old.get((r["scenario"], r["target"])))
                    for r in now["scenarios"])
    current = {(r["scenario"], r["target"]) for r in now["scenarios"]}
    removed = tuple(k for k in old if k not in current)
    return Comparison(before.get("run_id"), before.get("started_at"), changes, removed)


def load_summary(path: Path) -> dict[str, Any]:
    """A baseline's summary: a run folder (its summary.json, or summarized from its stored
    results when there is none) or a summary.json file itself."""
    if path.is_dir():
        stored = path / SUMMARY
        data = read_json(stored) if stored.exists() else summarize_dir(path)
    elif path.is_file():
        data = read_json(path)
    else:
        raise RunDirError(f"the baseline {path} does not exist; give a run folder or its "
                          "summary.json")
    if not isinstance(data.get("scenarios"), list):
        raise RunDirError(f"the baseline {path} is not a run summary (no 'scenarios' list)")
    return dict(data)
