"""What a scenario expects of the agent's tool calls, and how one attempt's calls are
counted for tool-call precision, recall and F1 (the sums: :class:`dsl.results.stats.PRF`).

The expectation comes from the scenario's tool checks (``dsl/checks/tools.py`` builds it
with :func:`dsl.checks.tools.tool_expectation`): the tools that ``calls``, ``calls_only``,
``calls_in_order`` and ``tool_correctness`` name are *expected*; ``calls_only`` also says
no other tool may be called; ``not_calls`` names tools that must not be called, and when it
names every tool of the scenario (or ``tool_correctness: []``), *none is expected*.

Each attempt counts once, as one of:

* **TP** — a tool was expected and the right one was called: every expected tool (with the
  arguments ``calls`` gives, when it gives some), no call that ``not_calls`` forbids (any
  call to the tool, or, with ``args``, a call with those values) and, with ``calls_only``,
  no other tool;
* **FP** — a tool was called when none was expected, or the calls were not the right ones
  though some expected call was among them (one expected tool missing, a call that
  ``not_calls`` forbids or one outside ``calls_only`` beside the expected ones);
* **wrong** — a tool was expected, and the agent called tools, but none of the expected
  calls: the wrong tool *instead*. It is an FP (a call that was not wanted) *and* an FN (the
  expected call is missing): it lowers precision and recall alike, so an agent that always
  calls the wrong tool has recall 0, never 1;
* **FN** — a tool was expected and none was called;
* **TN** — none was expected and none was called (it plays no part in the figures).

:data:`COUNTS` says which of the sums (TP, FP, FN, TN) each outcome adds one to.

A scenario whose checks say nothing about tools has no expectation: its attempts are not
counted. Calls held for confirmation count as calls (the agent asked for them).

In a conversation, a turn's own tool checks apply to that turn's calls only (a turn that
says ``not_calls: X`` says nothing of the turn after it, which may expect X), and the
scenario's own ``then`` to every call of the conversation. Each part is counted as above
and the attempt still counts once: wrong when a part is; else FP when a part is, or when one
part is FN while another called the right tool (an expected tool missing); else FN when a
part is; else TP when a part is; else TN.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

import msgspec

from .model import Call, Turn, turn_calls

Outcome = Literal["tp", "fp", "fn", "tn", "wrong"]

# which of the sums each outcome adds one to (the tool-call figures: dsl.results.stats.PRF)
COUNTS: dict[Outcome, tuple[str, ...]] = {
    "tp": ("tp",), "fp": ("fp",), "fn": ("fn",), "tn": ("tn",), "wrong": ("fp", "fn")}


def args_match(expected: Mapping[str, Any], actual: Any) -> bool:
    """Each expected key is present with an equal value; extra arguments are allowed."""
    if not isinstance(actual, dict):
        return False
    return all(k in actual and actual[k] == v for k, v in expected.items())


class CallRule(msgspec.Struct, frozen=True):
    """A call to ``name`` that has these arguments with these values (extra arguments do
    not matter): one a ``calls`` check expects, or one ``not_calls`` forbids."""

    name: str
    args: Mapping[str, Any]

    def matches(self, call: Call) -> bool:
        return call.name == self.name and args_match(self.args, call.args)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "args": dict(self.args)}

    @classmethod
    def from_json(cls, data: Any) -> CallRule | None:
        if (isinstance(data, Mapping) and isinstance(data.get("name"), str)
                and isinstance(data.get("args"), Mapping)):
            return cls(data["name"], dict(data["args"]))
        return None


def _rules(data: Any) -> tuple[CallRule, ...]:
    rules = (CallRule.from_json(x) for x in data) if isinstance(data, list) else ()
    return tuple(r for r in rules if r is not None)


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
    # calls with args: an expected tool counts as called only by a call with these values
    expected_calls: tuple[CallRule, ...] = ()
    # not_calls with args: a call with these values is unwanted (the tool itself is not)
    forbidden_calls: tuple[CallRule, ...] = ()

    @property
    def expects_any(self) -> bool:
        """A tool call is expected somewhere: by the scenario's checks or a turn's."""
        return ((self.whole and bool(self.expected) and not self.none)
                or any(e.expects_any for _, e in self.turns))

    @property
    def all_expected(self) -> tuple[str, ...]:
        """Every tool expected somewhere: by the scenario's checks, then by its turns'."""
        names = [*self.expected, *(n for _, e in self.turns for n in e.expected)]
        return tuple(dict.fromkeys(names))

    def classify_attempt(self, calls: Sequence[Call], turns: Sequence[Turn]) -> Outcome:
        """One attempt as TP, FP, FN, wrong or TN: each turn's expectation on that turn's
        calls, the scenario's on all of them (see the module's docstring)."""
        parts = [self.classify(calls)] if self.whole else []
        for index, expectation in self.turns:
            mine = turn_calls(tuple(calls), tuple(turns), index) if index < len(turns) else ()
            parts.append(expectation.classify(mine))
        if "wrong" in parts:
            return "wrong"
        if "fp" in parts or ("fn" in parts and "tp" in parts):
            return "fp"
        if "fn" in parts:
            return "fn"
        return "tp" if "tp" in parts else "tn"

    def classify(self, calls: Sequence[Call]) -> Outcome:
        """One attempt's calls (in any order) as TP, FP, FN, wrong or TN."""
        made = {c.name for c in calls}
        if self.none or not self.expected:
            return "fp" if made else "tn"
        if not made:
            return "fn"
        rules = {r.name: r for r in self.expected_calls}
        met = [n for n in self.expected if n in made and (
            n not in rules or any(rules[n].matches(c) for c in calls))]
        if not met:
            return "wrong"  # tools were called, none of them the expected call
        right = (len(met) == len(self.expected)
                 and all(any(rule.matches(c) for c in calls) for rule in self.expected_calls)
                 and made.isdisjoint(self.forbidden)
                 and not (self.only and not made.issubset(self.expected))
                 and not any(rule.matches(c) for rule in self.forbidden_calls for c in calls))
        return "tp" if right else "fp"

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"expected": list(self.expected),
                               "forbidden": list(self.forbidden),
                               "only": self.only, "none": self.none}
        if self.expected_calls:
            out["expected_calls"] = [r.as_json() for r in self.expected_calls]
        if self.forbidden_calls:
            out["forbidden_calls"] = [r.as_json() for r in self.forbidden_calls]
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
                   data.get("whole") is not False, _rules(data.get("expected_calls")),
                   _rules(data.get("forbidden_calls")))


def expectation_of(spec: Mapping[str, Any]) -> ToolExpectation | None:
    """A plan.json scenario's expectation; older plans kept only ``expected_tools``."""
    if "tool_expectation" in spec:
        return ToolExpectation.from_json(spec["tool_expectation"])
    expected = spec.get("expected_tools")
    return ToolExpectation(tuple(expected)) if expected else None
