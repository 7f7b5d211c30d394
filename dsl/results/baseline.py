"""Compare: two sets of summary rows, scenario × target by scenario × target — a run
against a baseline run (``scenarist diff``, ``run --baseline``), or one target against
another within a run (``run --compare old:new``).

Each scenario × target gets a :class:`Change`:

* ``regressed`` — it passed before and fails now, and the drop in pass rate is real: the
  95% interval of the difference lies below zero;
* ``improved`` — it failed before and passes now, and the rise is real (interval above 0);
* ``unchanged`` — the same verdict on both sides;
* ``inconclusive`` — either side has no verdict (endpoint errors decided it), or the verdict
  flipped but the interval of the difference contains zero: with this few attempts the
  flip may be chance, so it is reported as such rather than as a regression;
* ``new`` — only the new side has it;
* ``removed`` — only the old side has it.

The difference is ``now − before`` of the pass rates (passes ÷ decided attempts), with
Newcombe's hybrid score interval (:func:`dsl.results.stats.newcombe`).

:func:`diff` is ``scenarist diff`` as a function: two run folders (or summary.json files)
in, a :class:`Comparison` out. :meth:`Comparison.as_json` is what ``diff --format json``
prints and what summary.json keeps under ``baseline`` and ``compare``;
:meth:`Comparison.from_json` reads it back.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..errors import RunDirError
from ..store.summaryfile import SUMMARY, Summary, SummaryRow, kept_comparison, read_summary
from ..verdict import words
from .stats import Interval, newcombe

ChangeStatus = Literal["regressed", "improved", "unchanged", "inconclusive", "new", "removed"]
# The order every list of changes is shown in: what needs a look first.
CHANGE_STATUSES: tuple[ChangeStatus, ...] = (
    "regressed", "improved", "inconclusive", "new", "removed", "unchanged")
ComparisonKind = Literal["baseline", "targets"]

__all__ = ["CHANGE_STATUSES", "Change", "ChangeStatus", "Comparison", "Interval", "Side",
           "compare", "compare_row", "compare_targets", "describe_delta", "diff",
           "kept_baseline", "load_summary", "newcombe", "pts", "with_comparisons"]


class Side(msgspec.Struct, frozen=True):
    """One side of a change: what that run (or target) counted."""

    verdict: str
    passes: int
    decided: int

    @property
    def rate(self) -> float | None:
        return self.passes / self.decided if self.decided else None

    @classmethod
    def of(cls, row: SummaryRow) -> Side:
        return cls(row.verdict, row.passes, row.decided)


class Change(msgspec.Struct, frozen=True):
    """How one scenario × target moved from the old side to the new."""

    scenario: str
    target: str  # the new side's target (for target against target: the new target)
    status: ChangeStatus
    before: Side | None  # None: new
    now: Side | None  # None: removed
    delta: float | None  # rate now − rate before, when both sides decided something
    interval: Interval | None  # its 95% interval
    note: str  # the status in plain words
    target_before: str = ""  # the old side's target ("" : the same as target)

    @property
    def verdict_before(self) -> str | None:
        return self.before.verdict if self.before else None

    @property
    def verdict_now(self) -> str | None:
        return self.now.verdict if self.now else None

    @property
    def rate_before(self) -> float | None:
        return self.before.rate if self.before else None

    @property
    def rate_now(self) -> float | None:
        return self.now.rate if self.now else None

    def as_json(self) -> dict[str, Any]:
        def side(s: Side | None) -> dict[str, Any] | None:
            return None if s is None else {"verdict": s.verdict, "passes": s.passes,
                                           "decided": s.decided, "pass_rate": s.rate}

        return {"scenario": self.scenario, "target": self.target,
                "target_before": self.target_before or self.target, "status": self.status,
                "before": side(self.before), "now": side(self.now), "delta": self.delta,
                "ci_low": self.interval.low if self.interval else None,
                "ci_high": self.interval.high if self.interval else None, "note": self.note}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Change:
        def side(s: Any) -> Side | None:
            return None if not isinstance(s, Mapping) else Side(
                str(s["verdict"]), int(s["passes"]), int(s["decided"]))

        interval = (Interval(float(d["ci_low"]), float(d["ci_high"]))
                    if d.get("ci_low") is not None and d.get("ci_high") is not None else None)
        target = str(d["target"])
        before_target = str(d.get("target_before") or target)
        return cls(str(d["scenario"]), target, d["status"], side(d.get("before")),
                   side(d.get("now")), d.get("delta"), interval, str(d.get("note") or ""),
                   "" if before_target == target else before_target)


class Comparison(msgspec.Struct, frozen=True):
    """The new side against the old: a run against its baseline, or a target against
    another target of the same run."""

    kind: ComparisonKind
    before: str  # the baseline's run id, or the old target's name
    after: str  # this run's id, or the new target's name
    changes: tuple[Change, ...]  # in the new side's order, then those removed
    before_started_at: str | None = None

    # -- the older names, kept for the callers that read them
    @property
    def baseline_run_id(self) -> str | None:
        return self.before or None

    @property
    def baseline_started_at(self) -> str | None:
        return self.before_started_at

    @property
    def removed(self) -> tuple[tuple[str, str], ...]:
        return tuple((c.scenario, c.target) for c in self.changes if c.status == "removed")

    @property
    def regressions(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.status == "regressed")

    def get(self, scenario: str, target: str) -> Change | None:
        for c in self.changes:
            if c.scenario == scenario and c.target == target:
                return c
        return None

    def by_key(self) -> dict[tuple[str, str], Change]:
        """The changes of the rows the new side has, by (scenario, target)."""
        return {(c.scenario, c.target): c for c in self.changes if c.status != "removed"}

    def by_scenario(self) -> dict[str, Change]:
        return {c.scenario: c for c in self.changes}

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = dict.fromkeys(CHANGE_STATUSES, 0)
        for c in self.changes:
            out[c.status] += 1
        return out

    def ordered(self) -> list[Change]:
        """What needs a look first: regressions, improvements, … unchanged last."""
        rank = {s: i for i, s in enumerate(CHANGE_STATUSES)}
        return sorted(self.changes, key=lambda c: (rank[c.status], c.scenario, c.target))

    def before_summary(self) -> Summary:
        """The old side's counts as a summary that :func:`compare` takes again (each row's
        verdict and counts only)."""
        rows = tuple(SummaryRow(scenario=c.scenario, target=c.target_before or c.target,
                                verdict=c.before.verdict, passes=c.before.passes,
                                decided=c.before.decided)
                     for c in self.changes if c.before is not None)
        return Summary(scenarios=rows, run_id=self.before, started_at=self.before_started_at)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "before": self.before, "after": self.after,
                "before_started_at": self.before_started_at, "counts": self.counts(),
                "changes": [c.as_json() for c in self.changes]}

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> Comparison:
        return cls(d.get("kind", "baseline"), str(d.get("before") or ""),
                   str(d.get("after") or ""),
                   tuple(Change.from_json(c) for c in d.get("changes") or ()),
                   d.get("before_started_at"))


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


def compare_row(now: SummaryRow | None, before: SummaryRow | None, *,
                before_name: str = "before", now_name: str = "now") -> Change:
    """The change of one summary row against the old side's row (None: that side does not
    have it). ``before_name`` and ``now_name`` are how the note calls the two sides."""
    if now is None and before is None:
        raise ValueError("a change needs at least one side")
    if now is None:
        assert before is not None  # for the type checker: checked just above
        return Change(before.scenario, before.target, "removed", Side.of(before), None,
                      None, None, f"not in {_side_words(now_name)}")
    scenario, target = now.scenario, now.target
    s_now = Side.of(now)
    if before is None:
        return Change(scenario, target, "new", None, s_now, None, None,
                      f"not in {_side_words(before_name)}")
    s_before = Side.of(before)
    target_before = "" if before.target == target else before.target
    delta: float | None = None
    interval: Interval | None = None
    if s_now.decided and s_before.decided:
        delta, interval = newcombe(s_now.passes, s_now.decided,
                                   s_before.passes, s_before.decided)
    diff_text = describe_delta(delta, interval)
    v_now, v_before = s_now.verdict, s_before.verdict
    was, now_w = _when_words(before_name), _when_words(now_name)
    status: ChangeStatus
    if "inconclusive" in (v_now, v_before):
        side = _side_words(now_name) if v_now == "inconclusive" else _side_words(before_name)
        if v_now == v_before == "inconclusive":
            side = "both runs" if now_name == "now" else f"both {before_name} and {now_name}"
        status, note = "inconclusive", f"no verdict in {side}; {diff_text}"
    elif v_now == v_before:
        status, note = "unchanged", f"{words(v_now).past} {was} and {now_w}; {diff_text}"
    elif interval is None or not interval.excludes_zero():
        flip = (f"passed {was}, fails {now_w}" if v_before == "pass"
                else f"failed {was}, passes {now_w}")
        status, note = "inconclusive", f"{flip}, but the difference may be chance: {diff_text}"
    elif v_before == "pass":
        status, note = "regressed", f"passed {was}, fails {now_w}: {diff_text}"
    else:
        status, note = "improved", f"failed {was}, passes {now_w}: {diff_text}"
    return Change(scenario, target, status, s_before, s_now, delta, interval, note,
                  target_before)


def _when_words(name: str) -> str:
    return {"before": "before", "now": "now"}.get(name, f"on {name}")


def _side_words(name: str) -> str:
    return {"before": "the baseline", "now": "this run"}.get(name, name)


def compare(now: Summary, before: Summary) -> Comparison:
    """Compare two summaries: ``now`` against its baseline."""
    old = {r.key: r for r in before.scenarios}
    current = {r.key for r in now.scenarios}
    changes = [compare_row(r, old.get(r.key)) for r in now.scenarios]
    changes += [compare_row(None, r) for k, r in old.items() if k not in current]
    return Comparison("baseline", before.run_id or "", now.run_id or "", tuple(changes),
                      before.started_at)


def compare_targets(rows: Sequence[SummaryRow], old: str, new: str) -> Comparison:
    """Within one run: target ``new`` against target ``old``, scenario by scenario."""
    before = {r.scenario: r for r in rows if r.target == old}
    after = {r.scenario: r for r in rows if r.target == new}
    changes = [compare_row(r, before.get(sid), before_name=old, now_name=new)
               for sid, r in after.items()]
    changes += [compare_row(None, r, before_name=old, now_name=new)
                for sid, r in before.items() if sid not in after]
    return Comparison("targets", old, new, tuple(changes))


def with_comparisons(summary: Summary, baseline: Summary | None,
                     pairs: Sequence[tuple[str, str]] = ()) -> tuple[Summary, Comparison | None]:
    """The summary with what it is compared with: ``baseline`` (a summary, when given) under
    ``baseline``, and each pair of its targets (run.json's ``compare``) under ``compare``;
    and the comparison with the baseline."""
    comparison = compare(summary, baseline) if baseline is not None else None
    return summary.replace(
        baseline=comparison.as_json() if comparison is not None else None,
        compare=tuple(compare_targets(summary.scenarios, old, new).as_json()
                      for old, new in pairs)), comparison


def kept_baseline(run_dir: Path) -> Summary | None:
    """The baseline that the run folder's summary.json was compared with (``run
    --baseline``, ``report --baseline``), as its counts, so that a summary made again —
    after a resume too — compares with the same baseline."""
    try:
        kept = kept_comparison(run_dir / SUMMARY)
    except RunDirError:
        return None
    try:
        return Comparison.from_json(kept).before_summary() if kept is not None else None
    except (KeyError, TypeError, ValueError):
        return None


def load_summary(path: Path) -> Summary:
    """A run's summary: a run folder (its summary.json, or summarized from its stored
    results when there is none) or a summary.json file itself."""
    if path.is_dir():
        stored = path / SUMMARY
        if stored.exists():
            return read_summary(stored)
        # why: the summary; diff loads this module without it
        from .summarize import summarize_dir

        return summarize_dir(path)
    if path.is_file():
        return read_summary(path)
    raise RunDirError(f"{path} does not exist; give a run folder or its summary.json")


def diff(base: Path | Summary, new: Path | Summary) -> Comparison:
    """``scenarist diff BASE NEW``: each a run folder, a summary.json file, or a summary
    already read. RunDirError when one is neither."""
    before = load_summary(base) if isinstance(base, Path) else base
    after = load_summary(new) if isinstance(new, Path) else new
    return compare(after, before)
