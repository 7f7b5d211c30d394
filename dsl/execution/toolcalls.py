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
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

Outcome = Literal["tp", "fp", "fn", "tn"]


@dataclass(frozen=True, slots=True)
class ToolExpectation:
    """The tool calls a scenario expects (see the module's docstring)."""

    expected: tuple[str, ...] = ()
    forbidden: tuple[str, ...] = ()
    only: bool = False  # calls_only: no tool outside ``expected``
    none: bool = False  # no tool may be called at all

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
        return {"expected": list(self.expected), "forbidden": list(self.forbidden),
                "only": self.only, "none": self.none}

    @classmethod
    def from_json(cls, data: Any) -> ToolExpectation | None:
        """From plan.json's ``tool_expectation`` (None: the scenario expects nothing)."""
        if not isinstance(data, Mapping):
            return None
        return cls(tuple(str(x) for x in data.get("expected") or ()),
                   tuple(str(x) for x in data.get("forbidden") or ()),
                   bool(data.get("only")), bool(data.get("none")))


def expectation_of(spec: Mapping[str, Any]) -> ToolExpectation | None:
    """A plan.json scenario's expectation; older plans kept only ``expected_tools``."""
    if "tool_expectation" in spec:
        return ToolExpectation.from_json(spec["tool_expectation"])
    expected = spec.get("expected_tools")
    return ToolExpectation(tuple(expected)) if expected else None
