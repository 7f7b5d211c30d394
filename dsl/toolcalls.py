"""What a scenario expects of the agent's tool calls, and how one attempt's calls are
counted for tool-call precision, recall and F1 (the sums: :class:`dsl.results.stats.PRF`).

The expectation comes from the scenario's tool checks (``dsl/checks/tools.py`` builds it
with :func:`dsl.checks.tools.tool_expectation`): the tools that ``calls``, ``calls_only``,
``calls_in_order`` and ``tool_correctness`` name are *expected*; ``calls_only`` also says
no other tool may be called; ``not_calls`` names tools that must not be called, and when it
names every tool of the scenario (or ``tool_correctness: []``), *none is expected*.

Each attempt counts once, as one of:

* **TP** — a tool was expected and the right one was called: every expected tool, none
  that ``not_calls`` forbids (and, with ``calls_only``, none other);
* **FP** — a tool was called when none was expected, or the wrong tool (an expected one
  missing, a forbidden one called);
* **FN** — a tool was expected and none was called;
* **TN** — none was expected and none was called (it plays no part in the figures).

A scenario whose checks say nothing about tools has no expectation: its attempts are not
counted. Calls held for confirmation count as calls (the agent asked for them).

In a conversation, a turn's own tool checks apply to that turn's calls only (a turn that
says ``not_calls: X`` says nothing of the turn after it, which may expect X), and the
scenario's own ``then`` to every call of the conversation. Each part is counted as above
and the attempt still counts once: FP when a part is FP, or when one part is FN while
another called the right tool (an expected tool missing); else FN when a part is; else TP
when a part is; else TN.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal

import msgspec

from .model import Call, Turn, turn_calls

Outcome = Literal["tp", "fp", "fn", "tn"]


class ToolExpectation(msgspec.Struct, frozen=True):
    """The tool calls a scenario expects (see the module's docstring)."""

    expected: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    only: bool = False  # calls_only: no tool outside ``expected``
    none: bool = False  # no tool may be called at all
    # a conversation's turns whose own checks expect something of their calls: (the turn,
    # 0-based; what they expect); ``whole`` False: the fields above say nothing (the
    # scenario's own checks expect nothing of the conversation's calls)
    turns: tuple[tuple[int, ToolExpectation], ...] = ()
    whole: bool = True

    @property
    def all_expected(self) -> tuple[str, ...]:
        """Every tool expected somewhere: by the scenario's checks, then by its turns'."""
        names = [*self.expected, *(n for _, e in self.turns for n in e.expected)]
        return tuple(dict.fromkeys(names))

    def classify_attempt(self, calls: Sequence[Call], turns: Sequence[Turn]) -> Outcome:
        """One attempt as TP, FP, FN or TN: each turn's expectation on that turn's calls,
        the scenario's on all of them (see the module's docstring)."""
        parts = [self.classify(c.name for c in calls)] if self.whole else []
        for index, expectation in self.turns:
            mine = turn_calls(tuple(calls), tuple(turns), index) if index < len(turns) else ()
            parts.append(expectation.classify(c.name for c in mine))
        if "fp" in parts or ("fn" in parts and "tp" in parts):
            return "fp"
        if "fn" in parts:
            return "fn"
        return "tp" if "tp" in parts else "tn"

    def classify(self, called: Iterable[str]) -> Outcome:
        """One attempt's calls (their names, in any order) as TP, FP, FN or TN."""
        made = set(called)
        if self.none or not self.expected:
            return "fp" if made else "tn"
        if not made:
            return "fn"
        right = (made.issuperset(self.expected) and made.isdisjoint(self.forbidden)
                 and (not self.only or made.issubset(self.expected)))
        return "tp" if right else "fp"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"expected": list(self.expected),
                               "forbidden": list(self.forbidden),
                               "only": self.only, "none": self.none}
        if self.turns:  # 1-based, as people count turns
            out["turns"] = [{"turn": i + 1, **e.as_json()} for i, e in self.turns]
        if not self.whole:
            out["whole"] = False
        return out

    @classmethod
    def from_json(cls, data: Any) -> ToolExpectation | None:
        """From plan.json's ``tool_expectation`` (None: the scenario expects nothing)."""
        if not isinstance(data, Mapping):
            return None
        turns = []
        for t in data.get("turns") or ():
            e = cls.from_json(t) if isinstance(t, Mapping) else None
            number = t.get("turn") if isinstance(t, Mapping) else None
            if e is not None and isinstance(number, int) and not isinstance(number, bool) \
                    and number >= 1:
                turns.append((number - 1, e))
        return cls(tuple(str(x) for x in data.get("expected") or ()),
                   tuple(str(x) for x in data.get("forbidden") or ()),
                   bool(data.get("only")), bool(data.get("none")), tuple(turns),
                   data.get("whole") is not False)


def expectation_of(spec: Mapping[str, Any]) -> ToolExpectation | None:
    """A plan.json scenario's expectation; older plans kept only ``expected_tools``."""
    if "tool_expectation" in spec:
        return ToolExpectation.from_json(spec["tool_expectation"])
    expected = spec.get("expected_tools")
    return ToolExpectation(tuple(expected)) if expected else None
