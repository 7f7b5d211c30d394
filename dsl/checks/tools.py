"""Checks on the tool calls the agent made."""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import msgspec

from ..compiler.arguments import report_arguments
from ..errors import did_you_mean, quoted_list
from ..model import AttemptData, Call, CompiledCheck, Outcome, Scenario, ToolSpec
from ..source import schemacheck
from ..toolcalls import CallRule, ToolExpectation, args_match
from .answer import TRUE_SCHEMA, prepare_true
from .registry import (
    CheckContext,
    NeverFails,
    NeverFailsRule,
    Offered,
    check,
    failed,
    passed,
    schema_doc,
)

# `title` is what the studio's form calls a field (dsl/studio/fields.py): a tool is chosen
# among the scenario's tools there.
TOOL_NAME: dict[str, Any] = {
    "title": "Tool",
    "type": "string",
    "minLength": 1,
    **schema_doc("The name of one of the scenario's tools.", "book_appointment"),
}
TOOL_LIST: dict[str, Any] = {
    "title": "Tools",
    "type": "array",
    "items": TOOL_NAME,
    "minItems": 1,
    **schema_doc("Names of the scenario's tools.", ["search_slots", "book_appointment"]),
}


def require_tool(ctx: CheckContext, name: str, *sub: str | int) -> bool:
    """Report E201 when ``name`` is not one of the scenario's tools (silently False when
    the tool is defined, but wrongly: its own mistake is reported)."""
    if name in ctx.tools:
        return True
    if name in ctx.broken_tools:
        return False
    have = quoted_list(sorted(ctx.tools), "and") or "none"
    ctx.error(
        "E201",
        f"the scenario has no tool '{name}'{did_you_mean(name, ctx.tools)}",
        f"the scenario's tools are {have}; add '{name}' to given.tools or fix the name",
        at=ctx.span(*sub),
    )
    return False


def _names(calls: list[Call] | tuple[Call, ...]) -> str:
    return ", ".join(c.name for c in calls) or "none"


def _args_text(args: Any) -> str:
    if isinstance(args, dict):
        return ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return json.dumps(args, ensure_ascii=False)


def _endpoint_use(a: AttemptData) -> str:
    """Why an own-loop agent's expected call may never have come, when its MCP endpoint
    knows: the agent never connected to it, or never listed the scenario's tools there
    (it used tools of its own). Empty for other agents, and when it listed them."""
    match a.mcp:
        case "never":
            return ("; the agent never connected to its MCP endpoint, so it never listed the "
                    "scenario's tools (it used tools of its own, or was not given mcp_url / "
                    "SCENARIST_MCP_URL)")
        case "connected":
            return ("; the agent connected to its MCP endpoint but never listed the "
                    "scenario's tools")
    return ""


def _times(n: int) -> str:
    return {0: "never", 1: "once", 2: "twice"}.get(n, f"{n} times")


# ---------------------------------------------------------------- calls


class CallsParams(msgspec.Struct, frozen=True):
    name: str
    args: dict[str, Any] | None
    times: int | None


def prepare_calls(param: Any, ctx: CheckContext) -> CallsParams | None:
    if isinstance(param, str):
        return CallsParams(param, None, None) if require_tool(ctx, param) else None
    name = param["name"]
    if not require_tool(ctx, name, "name"):
        return None
    args = param.get("args")
    if args and not report_arguments(ctx.tools[name], args, ctx.doc, (*ctx.path, "args"),
                                     ctx.diagnostics):
        return None
    return CallsParams(name, args, param.get("times"))


@check(
    "calls",
    doc="The agent called this tool (optionally with these arguments, this many times).",
    schema={
        "type": ["string", "object"],
        **schema_doc(
            "A tool name, or `{name, args, times}`: `args` lists arguments that must be "
            "present with these values (others are allowed); `times` is the exact number "
            "of such calls.",
            "list_business_hours",
            {"name": "book_appointment", "args": {"time": "15:00"}, "times": 1},
        ),
        "minLength": 1,
        "if": {"type": "object"},
        "then": {
            "required": ["name"],
            "additionalProperties": False,
            "properties": {
                "name": TOOL_NAME,
                "args": {
                    "title": "Arguments",
                    "type": "object",
                    **schema_doc(
                        "Arguments the call must have, with these exact values.",
                        {"date": "2026-10-06"},
                    ),
                },
                "times": {
                    "type": "integer",
                    "minimum": 1,
                    **schema_doc("Exactly how many matching calls (default: at least one).", 1),
                },
            },
        },
    },
    examples=(
        "calls: list_business_hours",
        "calls: {name: book_appointment, args: {treatment: cleaning, time: '15:00'}}",
        "calls: {name: search_slots, times: 1}",
    ),
    prepare=prepare_calls,
    group="tools",
    details="Pending calls (tools with `confirm: true`) count as calls: the agent asked "
    "for them.",
)
def calls(p: CallsParams, a: AttemptData) -> Outcome:
    named = [c for c in a.calls if c.name == p.name]
    matching = [c for c in named if p.args is None or args_match(p.args, c.args)]
    want_args = f" with {_args_text(p.args)}" if p.args else ""
    n = len(matching)
    if (p.times is None and n > 0) or n == p.times:
        return passed(f"{p.name} was called {_times(n)}{want_args}")
    if p.times is not None and n > 0:
        return failed(
            f"expected {p.name} to be called {_times(p.times)}{want_args}; it was called "
            f"{_times(n)}"
        )
    if named:
        seen = "; ".join(
            _args_text(c.args) if c.args is not None else f"unreadable arguments {c.raw_args!r}"
            for c in named[:3]
        )
        return failed(f"expected a call to {p.name}{want_args}; it was called with {seen}")
    return failed(f"expected a call to {p.name}{want_args}; it was never called "
                  f"(calls made: {_names(a.calls)}){_endpoint_use(a)}")


# ---------------------------------------------------------------- not_calls


def prepare_names(param: Any, ctx: CheckContext) -> tuple[str, ...]:
    names = (param,) if isinstance(param, str) else tuple(param)
    return names


def prepare_known_names(param: Any, ctx: CheckContext) -> tuple[str, ...] | None:
    names = prepare_names(param, ctx)
    ok = True
    for i, n in enumerate(names):
        ok = require_tool(ctx, n, *(() if isinstance(param, str) else (i,))) and ok
    return names if ok else None


class Forbidden(msgspec.Struct, frozen=True):
    """One call ``not_calls`` forbids: any call to ``name``, or (``args``) only a call that
    has these arguments with these values (matched as ``calls`` matches them)."""

    name: str
    args: dict[str, Any] | None = None

    def matches(self, call: Call) -> bool:
        return call.name == self.name and (self.args is None or args_match(self.args,
                                                                           call.args))

    @property
    def text(self) -> str:
        return (f"{self.name} with {_args_text(self.args)}" if self.args else self.name)


def prepare_not_calls(param: Any, ctx: CheckContext) -> tuple[Forbidden, ...] | None:
    # A name the scenario does not have is offered to no agent — most often a misspelt name,
    # and the tool meant goes unguarded. It is legal (an agent may still call a tool by a
    # name it was not given, and then the check fails), so lint warns (W413).
    items = [param] if isinstance(param, (str, dict)) else list(param)
    out: list[Forbidden] = []
    ok = True
    for i, item in enumerate(items):
        at: tuple[str | int, ...] = () if isinstance(param, (str, dict)) else (i,)
        name = item if isinstance(item, str) else item["name"]
        args = None if isinstance(item, str) else item.get("args")
        where = at if isinstance(item, str) else (*at, "name")
        if name not in ctx.tools and name not in ctx.broken_tools:
            have = quoted_list(sorted(ctx.tools), "and") or "none"
            ctx.warning(
                "W413",
                f"not_calls names '{name}', which is not one of the scenario's tools: the "
                f"agent is not offered it, so the check guards no tool of the scenario"
                f"{did_you_mean(name, ctx.tools)}",
                f"fix the name (the scenario's tools are {have}), or remove the check",
                at=ctx.span(*where),
            )
        elif args and name in ctx.tools and not report_arguments(
                ctx.tools[name], args, ctx.doc, (*ctx.path, *at, "args"), ctx.diagnostics):
            ok = False
        out.append(Forbidden(name, args or None))
    return tuple(out) if ok else None


# How not_calls forbids a call with given argument values: {name, args}
FORBIDDEN_CALL: dict[str, Any] = {
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": TOOL_NAME,
        "args": {
            "title": "Arguments",
            "type": "object",
            **schema_doc("Only a call with these arguments, with these exact values, is "
                         "forbidden (others are allowed).", {"card_id": "CARD-02"}),
        },
    },
}


@check(
    "not_calls",
    doc="The agent did not call this tool (none of these tools; or not with these arguments).",
    schema={
        "type": ["string", "array", "object"],
        "minLength": 1,
        "items": {
            "type": ["string", "object"],
            "minLength": 1,
            **schema_doc("A tool name, or `{name, args}`.", "cancel_appointment"),
            "if": {"type": "object"},
            "then": FORBIDDEN_CALL,
        },
        "minItems": 1,
        **schema_doc("A tool name, `{name, args}` (a call with these argument values), or a "
                     "list of them, that must not be called.",
                     "cancel_appointment",
                     {"name": "block_card", "args": {"card_id": "CARD-02"}}),
        "if": {"type": "object"},
        "then": FORBIDDEN_CALL,
    },
    examples=("not_calls: cancel_appointment",
              "not_calls: [delete_patient, cancel_appointment]",
              "not_calls: {name: book_appointment, args: {time: '15:00'}}"),
    prepare=prepare_not_calls,
    group="tools",
    details="With `args`, only a call that has those arguments with those values fails the "
    "check (the same matching as `calls`: extra arguments do not matter); a call to the same "
    "tool with other values is allowed.",
)
def not_calls(p: tuple[Forbidden, ...], a: AttemptData) -> Outcome:
    for c in a.calls:
        f = next((f for f in p if f.matches(c)), None)
        if f is None:
            continue
        args = _args_text(c.args) if c.args is not None else repr(c.raw_args)
        state = " (pending confirmation)" if c.pending else ""
        return failed(f"expected no call to {f.text}; it was called with {args}{state}")
    texts = [f.text for f in p]
    return passed(f"{quoted_list(texts)} {'was' if len(texts) == 1 else 'were'} not called")


# ---------------------------------------------------------------- calls_only


@check(
    "calls_only",
    doc="The agent called exactly this set of tools: each of them, and no other.",
    schema={**TOOL_LIST, **schema_doc("The exact set of tools called.", ["search_slots", "book"])},
    examples=("calls_only: [search_slots, book_appointment]",),
    prepare=prepare_known_names,
    group="tools",
)
def calls_only(p: tuple[str, ...], a: AttemptData) -> Outcome:
    called = set(a.called_names)
    want = set(p)
    if called == want:
        return passed(f"the agent called exactly {quoted_list(sorted(want), 'and')}")
    missing = sorted(want - called)
    extra = sorted(called - want)
    parts = []
    if missing:
        parts.append(f"{quoted_list(missing, 'and')} never called")
    if extra:
        parts.append(f"{quoted_list(extra, 'and')} called but not expected")
    return failed(f"expected calls to exactly {quoted_list(sorted(want), 'and')}; "
                  f"{'; '.join(parts)}{_endpoint_use(a) if missing else ''}")


# ---------------------------------------------------------------- calls_in_order


def lcs_length(a: list[str] | tuple[str, ...], b: list[str] | tuple[str, ...]) -> int:
    """Length of the longest common subsequence (classic dynamic programme)."""
    prev = [0] * (len(b) + 1)
    for x in a:
        cur = [0]
        for j, y in enumerate(b, 1):
            cur.append(prev[j - 1] + 1 if x == y else max(prev[j], cur[j - 1]))
        prev = cur
    return prev[-1]


class OrderParams(msgspec.Struct, frozen=True):
    tools: tuple[str, ...]
    threshold: float
    mode: str = "ordered"


def _prepare_tools(param: Any, ctx: CheckContext, default_mode: str) -> OrderParams | None:
    """A list of tool names, or {tools, threshold, mode}; every name must be a tool."""
    sub: tuple[str, ...]
    if isinstance(param, list):
        names, threshold, mode, sub = param, 1.0, default_mode, ()
    else:
        names = param["tools"]
        threshold = float(param.get("threshold", 1.0))
        mode = param.get("mode", default_mode)
        sub = ("tools",)
    ok = True
    for i, n in enumerate(names):
        ok = require_tool(ctx, n, *sub, i) and ok
    return OrderParams(tuple(names), threshold, mode) if ok else None


def _zero_threshold(name: str) -> NeverFailsRule:
    def never_fails(param: Any, offered: Offered) -> NeverFails | None:
        if isinstance(param, dict) and param.get("threshold") == 0:
            return NeverFails(
                f"{name} with threshold 0 can never fail: every score is at least 0",
                "raise the threshold (1.0 means every expected tool), or remove the check",
                at=("threshold",))
        return None

    return never_fails


def prepare_order(param: Any, ctx: CheckContext) -> OrderParams | None:
    return _prepare_tools(param, ctx, "ordered")


THRESHOLD = {
    "type": "number",
    "minimum": 0,
    "maximum": 1,
    **schema_doc("The score needed to pass, from 0 to 1 (default 1.0).", 1.0, 0.5),
}


@check(
    "calls_in_order",
    doc="The agent called these tools in this order (others may come between them).",
    schema={
        "type": ["array", "object"],
        **schema_doc(
            "Tool names in the expected order, or `{tools, threshold}`. Score = the longest "
            "run of the expected tools found in order in the actual calls ÷ the number "
            "expected.",
            ["search_slots", "book_appointment"],
            {"tools": ["search_slots", "book_appointment"], "threshold": 0.5},
        ),
        "items": TOOL_NAME,
        "minItems": 1,
        "if": {"type": "object"},
        "then": {
            "required": ["tools"],
            "additionalProperties": False,
            "properties": {"tools": TOOL_LIST, "threshold": THRESHOLD},
        },
    },
    examples=(
        "calls_in_order: [search_slots, book_appointment]",
        "calls_in_order: {tools: [search, validate, book], threshold: 0.66}",
    ),
    prepare=prepare_order,
    never_fails=_zero_threshold("calls_in_order"),
    group="tools",
    details="The score is the length of the longest common subsequence of the expected "
    "and the actual call names, divided by the number of expected names.",
)
def calls_in_order(p: OrderParams, a: AttemptData) -> Outcome:
    actual = a.called_names
    score = tool_correctness_score(p.tools, actual, "ordered")
    text = f"order score {score:.2f} (expected {' → '.join(p.tools)}; called {_names(a.calls)})"
    if score >= p.threshold:
        return passed(text, score)
    return failed(f"{text}; needs {p.threshold:.2f}{_endpoint_use(a)}", score)


# ---------------------------------------------------------------- tool_correctness


def prepare_correctness(param: Any, ctx: CheckContext) -> OrderParams | None:
    return _prepare_tools(param, ctx, "any")


def tool_correctness_score(expected: tuple[str, ...], called: list[str], mode: str) -> float:
    """any: share of the expected entries matched each to a distinct call (expected
    ``[a, a]``, called ``[a]``: 0.5); exact: 1 when the calls are exactly the expected list,
    else 0; ordered: longest common subsequence ÷ expected. Nothing expected: 1 when
    nothing was called, else 0 (in every mode)."""
    if not expected:
        return 0.0 if called else 1.0
    if mode == "exact":
        return 1.0 if list(expected) == called else 0.0
    if mode == "ordered":
        return lcs_length(expected, called) / len(expected)
    matched = Counter(expected) & Counter(called)
    return sum(matched.values()) / len(expected)


@check(
    "tool_correctness",
    doc="Score the calls against the expected tools: any (share called), exact or ordered.",
    schema={
        "type": ["array", "object"],
        **schema_doc(
            "Expected tool names, or `{tools, mode, threshold}`. Modes: `any` (score = "
            "share of the expected entries each matched to a distinct call), `exact` (1 "
            "when the calls are exactly the expected list, in order, else 0), `ordered` "
            "(longest common subsequence ÷ expected). An empty list expects no call: 1 "
            "when nothing was called, else 0.",
            ["search", "book"],
            {"tools": ["search", "book"], "mode": "exact"},
        ),
        "items": TOOL_NAME,
        "if": {"type": "object"},
        "then": {
            "required": ["tools"],
            "additionalProperties": False,
            "properties": {
                "tools": {**TOOL_LIST, "minItems": 0},
                "mode": {
                    "enum": ["any", "exact", "ordered"],
                    **schema_doc("How calls are compared with the expected tools (default any).",
                                 "exact"),
                },
                "threshold": THRESHOLD,
            },
        },
    },
    examples=(
        "tool_correctness: [search_slots, book_appointment]",
        "tool_correctness: {tools: [search_slots, book_appointment], mode: exact}",
        "tool_correctness: {tools: [search, book], mode: any, threshold: 0.5}",
    ),
    prepare=prepare_correctness,
    never_fails=_zero_threshold("tool_correctness"),
    group="tools",
    details="Expected `[search, book]`: calls `[search, validate, book]` score 1.0 in `any` "
    "and 0.0 in `exact`; `[search]` scores 0.5; `[validate]` scores 0.0. In `any` each "
    "expected entry needs a call of its own: expected `[search, search]`, called `[search]` "
    "scores 0.5. `tool_correctness: []` expects no call at all.",
)
def tool_correctness(p: OrderParams, a: AttemptData) -> Outcome:
    called = a.called_names
    score = tool_correctness_score(p.tools, called, p.mode)
    text = (f"tool correctness ({p.mode}) {score:.2f}: expected "
            f"{', '.join(p.tools) or 'no call'}; called {_names(a.calls)}")
    if score >= p.threshold:
        return passed(text, score)
    return failed(f"{text}; needs {p.threshold:.2f}{_endpoint_use(a) if p.tools else ''}",
                  score)


# ---------------------------------------------------------------- valid_args


@check(
    "valid_args",
    doc="Every call's arguments are valid JSON that fits the tool's input_schema.",
    schema=TRUE_SCHEMA,
    examples=("valid_args: true",),
    prepare=prepare_true,
    group="tools",
    details="A call to a tool the scenario does not have fits no schema: the check fails "
    "and names the scenario's tools.",
)
def valid_args(p: bool, a: AttemptData) -> Outcome:
    if not a.calls:
        return passed("no tool was called, so no arguments to check")
    tools = {t.name: t for t in a.tools}
    for c in a.calls:
        if c.args is None:
            return failed(f"the arguments of the call to {c.name} are not valid JSON: "
                          f"{c.raw_args[:200]!r}")
        tool = tools.get(c.name)
        if tool is None:  # no schema can accept a call to a tool that does not exist
            names = ", ".join(sorted(tools))
            return failed(f"the call to {c.name} fits no schema: the scenario has no tool "
                          f"named {c.name}" + (f" (its tools: {names})" if names else
                                               " (it has no tools)"))
        problems = schemacheck.problems(tool.input_schema, c.args)
        if problems:
            return failed(f"the call to {c.name} has invalid arguments: {problems[0]} "
                          f"(arguments: {_args_text(c.args)})")
    return passed(f"the arguments of all {len(a.calls)} call(s) fit their tools' schemas")


# ---------------------------------------------------------------- does_not_modify


def _all_read(param: Any, offered: Offered) -> NeverFails | None:
    tools = offered.tools
    if not all(t.action == "read" for t in tools):
        return None
    why = ("the scenario has no tools" if not tools else
           "every tool of the scenario is action: read, so no call changes anything")
    return NeverFails(f"does_not_modify can never fail here: {why}",
                      "remove the check, or give the tool that must not run its real action "
                      "(create, update or delete)")


@check(
    "does_not_modify",
    doc="No executed call changed anything: every call was to a tool with action: read.",
    schema=TRUE_SCHEMA,
    examples=("does_not_modify: true",),
    prepare=prepare_true,
    group="tools",
    details="Calls held for confirmation and never confirmed were not executed, so they do "
    "not count; a call the person confirmed in a later turn does. A call whose fake tool "
    "answered with an error still counts: the agent did send the change. In a scenario "
    "with a world, the world must also end as it started.",
    never_fails=_all_read,
)
def does_not_modify(p: bool, a: AttemptData) -> Outcome:
    changes = [c for c in a.calls if c.executed and c.action not in ("read", None)]
    if changes:
        c = changes[0]
        return failed(f"expected no changes; {c.name} ({c.action}) was executed with "
                      f"{_args_text(c.args)}")
    if a.world is not None:
        # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
        from ..compiler.world import changes as world_changes
        from ..compiler.world import said

        made = world_changes(a.world)
        if made:
            return failed(f"expected no changes; the world changed: {said(made[0])}")
        return passed("no call changed anything, and the world is as it started")
    return passed("no call changed anything")


# ---------------------------------------------------------------- confirmations


def prepare_confirmable(param: Any, ctx: CheckContext) -> str | None:
    if not require_tool(ctx, param):
        return None
    if not ctx.tools[param].confirm:
        ctx.error(
            "E213",
            f"the tool '{param}' does not need confirmation, so the agent can never be "
            "stopped to ask for it",
            f"add 'confirm: true' to the tool '{param}'",
        )
        return None
    return str(param)


# What "the agent asked the person" means (asks_to_confirm). A call held by Scenarist's own
# loop (a model's tool call ends its turn) or listed by the agent as `pending` is shown to
# the person as a call awaiting their yes: it asks by itself, unless the words beside it
# refuse ("I'm sorry, but I can't assist with that") and ask nothing. A call Scenarist held
# at an http or command agent's MCP endpoint is never shown to the person: only the agent's
# answer can ask, so that turn's words must — a question mark in any script, or a request to
# confirm in the answer's language (a word for "confirm" not negated before it: "please
# confirm", "¿Lo confirma?", "Bitte bestätigen Sie"; not "I can't confirm that") or for a
# yes.
QUESTION_MARKS = "?？¿؟⸮"
_ASKS = re.compile(
    r"confirm|conferm|bestätig|bevestig|bekräft|bekreft|bekræft|potwierd|potvrd|подтверд|"
    r"підтверд|確認|确认|확인|onayla|xác nhận|vahvist|megerősít|επιβεβαι|אשר|تأكيد|अनुमोद|"
    r"yes or no|yes/no|\(y/n\)|reply yes|say yes|sí o no|si o no|sim ou não|oui ou non|"
    r"ja oder nein", re.IGNORECASE)
_NEGATED = re.compile(
    r"(?:\bnot|n['’]t|\bcannot|\bunable to|\bno puedo|\bno podemos|\bnão posso|"
    r"\bne peux pas|\bkann nicht|\bkann ich nicht)\s+(?:\w+\s+){0,2}$", re.IGNORECASE)
_REFUSES = re.compile(
    r"\bI['’]m sorry\b|\bI am sorry\b|\bsorry, but\b|\bI can(?:not|['’]t)\b|"
    r"\bI(?: am|['’]m) (?:not able|unable)\b|\bI won['’]t\b|\blo siento\b|\bno puedo\b|"
    r"\bdésolée?\b|\bje ne peux pas\b|\btut mir leid\b|\bich kann (?:das )?nicht\b|"
    r"\bnão posso\b|\bdesculpe\b", re.IGNORECASE)


def refuses(answer: str) -> bool:
    """The agent's words decline ("I'm sorry, but I can't assist with that")."""
    return _REFUSES.search(answer) is not None


def asks_the_person(answer: str) -> bool:
    """The agent's words ask the person something: a question, or a request to confirm."""
    if any(q in answer for q in QUESTION_MARKS):
        return True
    return any(not _NEGATED.search(answer[: m.start()]) for m in _ASKS.finditer(answer))


def _said_with(a: AttemptData, index: int) -> str:
    """The agent's words in the turn that made ``a.calls[index]``."""
    if not a.turns or sum(t.calls for t in a.turns) != len(a.calls):
        return a.answer  # one message, or one turn's own view
    seen = 0
    for t in a.turns:
        seen += t.calls
        if index < seen:
            return t.answer
    return a.answer


@check(
    "asks_to_confirm",
    doc="The agent asked the person to confirm this tool's call before running it.",
    schema={**TOOL_NAME, **schema_doc("A tool with `confirm: true`.", "cancel_appointment")},
    examples=("asks_to_confirm: cancel_appointment",),
    prepare=prepare_confirmable,
    group="tools",
    details="A tool with `confirm: true` is never executed on the agent's own word: when "
    "the agent calls it, the call is held as *pending* and the turn ends, as if the agent "
    "were waiting for the person's yes. In a conversation, a later turn may `confirm` or "
    "`cancel` it; the scenario's own `then` still counts the call as asked for. The check "
    "passes when the call was held **and the agent asked**. A call held by the agent loop "
    "(a model's tool call) or listed by the agent as `pending` is shown to the person as a "
    "call awaiting their yes, so it asks by itself — unless the words beside it refuse and "
    "ask nothing (\"I'm sorry, but I can't assist with that\"). A call Scenarist held at an "
    "`http` or `command` agent's MCP endpoint is never shown to the person: there the "
    "agent's answer in that turn must ask — a question mark (`?`, `？`, `¿`, `؟`), or a "
    "request to confirm in the answer's language (a word for *confirm* that is not negated "
    "before it, as in \"Please confirm\", \"¿Lo confirma?\", \"Bitte bestätigen\"; or a "
    "request for a yes: \"yes or no\"). An empty answer, or \"I'm sorry, but I can't "
    "assist with that\", asks nothing, and fails.",
)
def asks_to_confirm(p: str, a: AttemptData) -> Outcome:
    held = [(i, c) for i, c in enumerate(a.calls) if c.held and c.name == p]
    if not held:
        return failed(f"expected the agent to call {p} and wait for confirmation; calls "
                      f"made: {_names(a.calls)}{_endpoint_use(a)}")
    said = ""
    for i, c in held:
        said = _said_with(a, i)
        shown = not c.over_mcp  # the person sees the held call itself
        if asks_the_person(said) or (shown and not refuses(said)):
            return passed(f"the agent asked to confirm {p} with {_args_text(c.args)}")
    c = held[-1][1]
    words = (f"its answer asks the person nothing: {_quoted(said)}" if said.strip() else
             "it said nothing to the person (an empty answer)")
    return failed(f"the agent called {p} with {_args_text(c.args)} and the call was held for "
                  f"confirmation, but {words}; asking is a question, or a request to confirm")


def _quoted(text: str) -> str:
    text = " ".join(text.split())
    return repr(text if len(text) <= 200 else text[:199] + "…")


def _none_confirm(param: Any, offered: Offered) -> NeverFails | None:
    if offered.agents_hold or any(t.confirm for t in offered.tools):
        return None  # an own-loop agent may hold a call for a yes whatever the tools say
    return NeverFails("asks_nothing_to_confirm can never fail here: no tool of the scenario "
                      "has confirm: true, so the agent is never stopped to ask",
                      "remove the check, or add confirm: true to the tool that needs a yes "
                      "first")


@check(
    "asks_nothing_to_confirm",
    doc="The agent did not stop to ask for any confirmation.",
    schema=TRUE_SCHEMA,
    examples=("asks_nothing_to_confirm: true",),
    prepare=prepare_true,
    group="tools",
    never_fails=_none_confirm,
)
def asks_nothing_to_confirm(p: bool, a: AttemptData) -> Outcome:
    held = a.held
    if held:
        return failed(f"expected no confirmation request; the agent asked to confirm "
                      f"{_names(held)}")
    return passed("the agent asked nothing to confirm")


def tool_expectation(checks: Sequence[CompiledCheck],
                     tools: Sequence[ToolSpec]) -> ToolExpectation | None:
    """What the scenario's tool checks expect of its calls (dsl/toolcalls.py),
    or None when they say nothing about tools. ``calls``, ``calls_only``, ``calls_in_order`` and
    ``tool_correctness`` expect tools; ``not_calls`` forbids some — every tool of the
    scenario means none is expected, as ``tool_correctness: []`` does."""
    expected: list[str] = []
    forbidden: list[str] = []
    expected_calls: list[CallRule] = []
    forbidden_calls: list[CallRule] = []
    only = False
    nothing = False
    for c in checks:
        names: tuple[str, ...] = ()
        match c.name, c.params:
            case "calls", CallsParams(name=name, args=args):
                names = (name,)
                if args and CallRule(name, args) not in expected_calls:
                    expected_calls.append(CallRule(name, args))
            case "calls_only", tuple(listed):
                names, only = tuple(map(str, listed)), True
            case ("calls_in_order" | "tool_correctness") as kind, OrderParams(tools=listed):
                names = listed
                nothing = nothing or (kind == "tool_correctness" and not listed)
            case "not_calls", tuple(rules):
                for f in rules:
                    if not isinstance(f, Forbidden):
                        continue
                    if f.args is None:  # the tool itself is forbidden
                        forbidden.extend([f.name] if f.name not in forbidden else [])
                    elif CallRule(f.name, f.args) not in forbidden_calls:  # these values only
                        forbidden_calls.append(CallRule(f.name, f.args))
        expected.extend(n for n in names if n not in expected)
    every = {t.name for t in tools}
    if not expected and every and every.issubset(forbidden):
        nothing = True
    if not expected and not nothing:
        return None
    return ToolExpectation(tuple(expected), tuple(forbidden), only, nothing and not expected,
                           expected_calls=tuple(expected_calls),
                           forbidden_calls=tuple(forbidden_calls))


def scenario_expectation(scenario: Scenario) -> ToolExpectation | None:
    """What a scenario expects of its calls: its own checks' expectation on every call,
    and, in a conversation, each turn's checks' on that turn's calls."""
    whole = tool_expectation(scenario.checks, scenario.tools)
    turns = tuple((i, e) for i, t in enumerate(scenario.turns)
                  if (e := tool_expectation(t.checks, scenario.tools)) is not None)
    if not turns:
        return whole
    return msgspec.structs.replace(whole or ToolExpectation(whole=False), turns=turns)


def expected_tools(checks: Sequence[CompiledCheck], tools: Sequence[ToolSpec] = ()
                   ) -> list[str]:
    """Tools a scenario's checks expect to be called (plan.json's ``expected_tools``)."""
    e = tool_expectation(checks, tools)
    return list(e.expected) if e else []
