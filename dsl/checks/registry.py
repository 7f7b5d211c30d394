"""The check registry: one plain dict, filled one visible way.

A check type is registered with its name, the JSON Schema of its parameter, a one-line doc,
an example, whether it needs the LLM judge, a ``prepare`` function (parameter → prepared
value, reporting located diagnostics for what the schema cannot see) and an ``evaluate``
function (prepared value, attempt → :class:`~dsl.model.Outcome`). Built-in checks register
exactly the way an extension would. The scenario JSON Schema's list of checks, the check
reference in docs/checks.md and the plan's count of judge calls are all derived from here.

``evaluate`` never raises because a model answered badly: a failure is an Outcome with
status ``fail`` and a reason that says what was expected and what was seen; ``error`` means
the check could not be evaluated on this attempt.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import msgspec

from ..errors import Collector, Span
from ..model import AttemptData, Outcome, ToolSpec
from ..source.load import DataPath, Document
from ..source.schemawords import CHECK_MODIFIERS
from ..source.schemawords import (
    schema_doc as schema_doc,  # the checks declare their schemas with it
)

Prepare = Callable[[Any, "CheckContext"], Any]
Evaluate = Callable[[Any, AttemptData], Outcome]


class NeverFails(msgspec.Struct, frozen=True):
    """Why no attempt of a scenario can fail a check (lint's warning W404), and where to
    say it: ``at`` is a place under the check's parameter (``("threshold",)``), or empty
    for the check's name."""

    message: str
    hint: str
    at: tuple[str | int, ...] = ()


class Offered(msgspec.Struct, frozen=True):
    """What lint knows, before any run, of what an attempt of a scenario can do: the tools
    it offers the agent, and whether an agent it may run on holds calls for the person's
    confirmation itself (an own-loop agent's ``pending``: dsl.targets.kinds.holds_calls),
    whatever the tools say."""

    tools: Sequence[ToolSpec]
    agents_hold: bool = False


# The check's parameter as written and what the scenario offers -> NeverFails, or None when
# some attempt could fail the check.
NeverFailsRule = Callable[[Any, Offered], NeverFails | None]


class CheckType(msgspec.Struct, frozen=True):
    name: str
    doc: str  # one line, for the reference table
    schema: Mapping[str, Any]  # JSON Schema of the parameter
    examples: tuple[str, ...]  # YAML lines as an author writes them in `then`
    prepare: Prepare
    evaluate: Evaluate
    judge: bool = False
    group: str = "answer"  # answer | tools | conversation | judge | expression, for the docs
    details: str = ""  # longer explanation for the docs (markdown)
    # judge checks: ask the judge (prepared value, attempt, judge) -> Outcome
    evaluate_async: Callable[[Any, AttemptData, Any], Awaitable[Outcome]] | None = None
    judge_calls: Callable[[Any], int] | None = None  # questions per attempt
    describe: Callable[[Any], str] | None = None  # how people see it; default: label()
    never_fails: NeverFailsRule | None = None  # lint's W404, for checks that can be vacuous


REGISTRY: dict[str, CheckType] = {}

# What a check item may hold beside its check (any check, in any ``then`` list):
#   - {not_calls: create_refill_request, always: true, name: never refills an empty one}
# The schema of each, for the scenario schema and the docs.
MODIFIERS: dict[str, Mapping[str, Any]] = {
    "always": {
        "type": "boolean",
        **schema_doc(
            "`true`: this check must pass in every attempt. One attempt that fails it fails "
            "the scenario, whatever min_pass says — for rules that must never break.",
            True,
        ),
    },
    "name": {
        "type": "string",
        "minLength": 1,
        "maxLength": 200,
        **schema_doc(
            "A readable name for the check, shown instead of the check itself in the "
            "terminal, the report, junit.xml and summary.md.",
            "never refills an empty prescription",
        ),
    },
    "allow": {
        "type": "object",
        "minProperties": 1,
        "propertyNames": {"enum": ["W414"]},
        "additionalProperties": {"type": "string", "minLength": 1, "maxLength": 500},
        **schema_doc(
            "A warning of lint this check is meant to have, and why: `W414` for an "
            "expression that reads `latency_ms`, which only a live attempt measures.",
            {"W414": "a latency budget: replay reports the latency the cassette recorded"},
        ),
    },
}
if tuple(MODIFIERS) != CHECK_MODIFIERS:  # one list of modifiers, in one order
    raise RuntimeError("dsl.checks.registry.MODIFIERS and schemawords.CHECK_MODIFIERS differ")


def register(check: CheckType) -> CheckType:
    if check.name in REGISTRY:
        raise ValueError(f"check {check.name!r} is registered twice")
    REGISTRY[check.name] = check
    return check


def check(
    name: str,
    *,
    doc: str,
    schema: Mapping[str, Any],
    examples: tuple[str, ...],
    prepare: Prepare,
    group: str,
    judge: bool = False,
    details: str = "",
    describe: Callable[[Any], str] | None = None,
    never_fails: NeverFailsRule | None = None,
) -> Callable[[Evaluate], Evaluate]:
    """Decorator form of :func:`register` for an ``evaluate`` function."""

    def deco(evaluate: Evaluate) -> Evaluate:
        register(
            CheckType(name, doc, schema, examples, prepare, evaluate, judge, group, details,
                      describe=describe, never_fails=never_fails)
        )
        return evaluate

    return deco


class CheckContext(msgspec.Struct):
    """What ``prepare`` may look at: the scenario's tools, the suite's named checks, and
    where the check's parameter sits in the file (for located diagnostics)."""

    doc: Document
    path: DataPath  # of the parameter value: ("then", 3, "calls")
    tools: Mapping[str, ToolSpec]
    diagnostics: Collector
    named_checks: Mapping[str, Any] = msgspec.field(default_factory=dict)
    extra: Mapping[str, Any] = msgspec.field(default_factory=dict)
    # tools the scenario defines wrongly (their mistake is reported where they are): a
    # check that names one is neither an error nor a warning about that name
    broken_tools: frozenset[str] = frozenset()
    # the warnings the check item is marked for (``allow: {W414: why}``): not reported
    allowed: frozenset[str] = frozenset()

    def span(self, *sub: str | int) -> Span:
        return self.doc.span((*self.path, *sub))

    def error(self, code: str, message: str, hint: str = "", at: Span | None = None) -> None:
        self.diagnostics.error(at or self.span(), code, message, hint)

    def warning(self, code: str, message: str, hint: str = "", at: Span | None = None) -> None:
        if code not in self.allowed:
            self.diagnostics.warning(at or self.span(), code, message, hint)


# one encoder for every label: json.dumps with options builds a new one on each call, and
# lint labels every check of every file
_LABEL_JSON = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode


def label(name: str, params: Any, title: str = "") -> str:
    """How a check is shown to people: its readable name when the author gave one
    (``name: never refills an empty prescription``), else the check as written, shortened:
    ``contains: "18:00"``. Every surface (terminal, report, junit.xml, summary.md) shows
    this text, which the plan and each attempt's record keep."""
    if title:
        return title
    ctype = REGISTRY.get(name)
    if ctype is not None and ctype.describe is not None:
        return ctype.describe(params)
    if params is True:
        return name
    text = _LABEL_JSON(params)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{name}: {text}"


def show(text: str, limit: int = 160) -> str:
    """Quote a piece of model output for a reason, shortened."""
    t = " ".join(text.split())
    if len(t) > limit:
        t = t[: limit - 1] + "…"
    return json.dumps(t, ensure_ascii=False)


def passed(reason: str, score: float | None = 1.0) -> Outcome:
    return Outcome("pass", reason, score)


def failed(reason: str, score: float | None = 0.0) -> Outcome:
    return Outcome("fail", reason, score)


def errored(reason: str) -> Outcome:
    return Outcome("error", reason, None)
