"""The ``same_world_as`` check: the world ends as the right actions would leave it.

``- same_world_as: [{name: cancel_pending_order, args: {order_id: "#W1", reason: "no
longer needed"}}]`` — the calls the right agent would make, in order. Scenarist makes them
through the scenario's own tools on a fresh copy of the world the attempt started from
(:func:`replay`: each checked, refused or applied by the same rules as
an agent's call), and the attempt's world must end equal to that one: every table, row and
column (lists in order, numbers by value). The author says *what was right to do*; the
tools work out the rows (a refund, a sorted list, a balance).

Lint checks each call's tool and arguments against its ``input_schema``, and makes the
calls on the scenario's world: one that is refused or matches no row is an error at its
place (E247). When lint cannot tell (a scenario with cases), the check ends as *error*,
naming the call — never a silent pass.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from ..compiler.arguments import call_problem, report_arguments
from ..errors import Span
from ..model import AttemptData, Outcome, ToolSpec, WorldTable
from .registry import CheckContext, check, errored, failed, passed, schema_doc
from .tools import TOOL_NAME, require_tool

CALL: dict[str, Any] = {
    "required": ["name"],
    "additionalProperties": False,
    "properties": {
        "name": TOOL_NAME,
        "args": {
            "title": "Arguments",  # what the studio's form calls it
            "type": "object",
            **schema_doc("The call's arguments, all of them, as the right agent sends them.",
                         {"order_id": "#W2378156", "reason": "no longer needed"}),
        },
    },
}

SCHEMA: dict[str, Any] = {
    "type": "array",
    "items": {
        "type": ["string", "object"],
        "minLength": 1,
        **schema_doc("A call: `{name: TOOL, args: {...}}`, or a tool's name alone (a call "
                     "without arguments).",
                     {"name": "cancel_pending_order",
                      "args": {"order_id": "#W2378156", "reason": "no longer needed"}}),
        "if": {"type": "object"},
        "then": CALL,
    },
    **schema_doc(
        "The calls the right agent would make, in order. The attempt's world must end as "
        "they leave a fresh copy of the starting world, made through the scenario's own "
        "tools; `[]`: the world must not change.",
        [{"name": "cancel_pending_order",
          "args": {"order_id": "#W2378156", "reason": "no longer needed"}}]),
}


def replay(before: Mapping[str, tuple[Mapping[str, Any], ...]], tools: Sequence[ToolSpec],
           calls: Sequence[tuple[str, Any]], at: dt.datetime
           ) -> tuple[Mapping[str, tuple[Mapping[str, Any], ...]], tuple[int, str, str] | None]:
    """The world the calls ``(tool, args)`` make of ``before`` through ``tools``, as an
    agent's calls would (each checked, refused or applied by the same rules): the tables
    after them, and the first call that did not apply — its index (0-based), the text the
    agent would get and the error kind — or None. Calls to tools without ``table:`` change
    nothing and are not made."""
    # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
    from ..compiler.faketools import answer
    from ..compiler.world import World

    tables = [WorldTable(name, tuple(rows), _NOWHERE,
                         {c: _NOWHERE for r in rows for c in r})
              for name, rows in before.items()]
    world = World(tables)
    by_name = {t.name: t for t in tools}
    for i, (name, args) in enumerate(calls):
        tool = by_name.get(name)
        if tool is None:
            return world.run().after, (i, f"there is no tool named '{name}'", "unknown-tool")
        if tool.table is None:
            continue
        result = answer(tool, args, at, world)
        if result.error is not None:
            return world.run().after, (i, result.output, result.error)
    return world.run().after, None


_NOWHERE = Span("<replay>", 1, 1)


class Reference(msgspec.Struct, frozen=True):
    calls: tuple[tuple[str, dict[str, Any]], ...]


def _said(name: str, args: Any) -> str:
    if not args:
        return name
    shown = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
    return f"{name} with {shown}"


def prepare_same_world(param: Any, ctx: CheckContext) -> Reference | None:
    calls: list[tuple[str, dict[str, Any]]] = []
    ok = True
    for i, item in enumerate(param):
        name = item if isinstance(item, str) else str(item["name"])
        args = {} if isinstance(item, str) else dict(item.get("args") or {})
        where: tuple[str | int, ...] = (i,) if isinstance(item, str) else (i, "name")
        if not require_tool(ctx, name, *where):
            ok = False
            continue
        tool = ctx.tools[name]
        if args and not report_arguments(tool, args, ctx.doc, (*ctx.path, i, "args"),
                                         ctx.diagnostics):
            ok = False
            continue
        problem = call_problem(tool, args)
        if problem is not None and tool.table is not None:
            at = (i, "args") if not isinstance(item, str) and "args" in item else where
            ctx.error("E248", f"the reference call {i + 1} to '{name}' does not fit its "
                              f"input_schema: {problem}",
                      "give the call every argument the tool requires, with the values the "
                      "right agent would send", at=ctx.span(*at))
            ok = False
            continue
        calls.append((name, args))
    if not ok:
        return None
    world: dict[str, WorldTable] = dict(ctx.extra.get("world") or {})
    if not world:
        ctx.error("E240", "same_world_as compares the world, and this scenario has none",
                  "give the suite a world: (or the scenario a given.world:) with the tables "
                  "its tools act on")
        return None
    if ctx.extra.get("case") is None:
        _dry_run(param, calls, world, ctx)
    return Reference(tuple(calls))


def _dry_run(param: Any, calls: list[tuple[str, dict[str, Any]]],
             world: dict[str, WorldTable], ctx: CheckContext) -> None:
    """Make the calls on the scenario's world, as the check will: report the first one
    the tools refuse (E247), where it is written."""
    # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
    from ..compiler.rules import BROKEN

    at = ctx.extra.get("at")
    moment = at if isinstance(at, dt.datetime) else dt.datetime(2000, 1, 1, tzinfo=dt.UTC)
    _, stopped = replay({n: t.rows for n, t in world.items()}, list(ctx.tools.values()),
                        calls, moment)
    if stopped is None or stopped[2] == BROKEN:
        return  # (a rule with a mistake is reported where it is written)
    index, text, kind = stopped
    item = param[index]
    where: tuple[str | int, ...] = (index,) if isinstance(item, str) else (index, "name")
    name, args = calls[index]
    what = {"no-row": "matches no row", "row-exists": "creates a row whose id the table "
            "already has"}.get(kind, "is refused")
    ctx.error("E247", f"the reference call {index + 1} ({_said(name, args)}) {what}: {text}",
              "the right actions must be calls the tools accept on the scenario's world: "
              "check the call's arguments and the rows it acts on (and the calls before it)",
              at=ctx.span(*where))


@check(
    "same_world_as",
    doc="The world ends as the right actions leave it: the calls given, made through the "
    "scenario's tools on a fresh copy of the starting world.",
    schema=SCHEMA,
    examples=(
        "same_world_as: [{name: cancel_pending_order, args: {order_id: '#W2378156', "
        "reason: no longer needed}}]",
        "same_world_as: []",
    ),
    prepare=prepare_same_world,
    group="tools",
    details="Write what the right agent would do, in order, as `{name, args}` calls (the "
    "shape `not_calls` takes); Scenarist makes them through the scenario's own tools — "
    "their rules, computed columns and effects — on a fresh copy of the world the attempt "
    "started from, and requires the attempt's world to end equal to that one: every table, "
    "row and column (lists in order, numbers by value: `135.20` is 135.2). Calls held for "
    "confirmation count only once confirmed (a held call changed nothing). `[]` means the "
    "world must not change. The failure names each row and column that differs, found vs "
    "expected. A reference call that the tools refuse or that matches no row is a lint "
    "error (E247) where lint can tell, and otherwise makes the check end as *error*, naming "
    "the call. See \"Business rules\" in docs/scenarios.md.",
)
def same_world_as(p: Reference, a: AttemptData) -> Outcome:
    if a.world is None:
        return errored("the attempt has no world to look at (the scenario has no world:)")
    # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
    from ..compiler.world import MAX_DIFFERENCES, differences

    expected, stopped = replay(a.world.before, a.tools, p.calls, a.at)
    if stopped is not None:
        index, text, kind = stopped
        name, args = p.calls[index]
        what = {"no-row": "matched no row", "row-exists": "created a row whose id the table "
                "already had"}.get(kind, "was refused")
        return errored(f"the reference call {index + 1} ({_said(name, args)}) {what}: {text}; "
                       "the right actions must be calls the tools accept")
    wrong = differences(a.world.after, expected, a.world.before)
    if wrong:
        more = len(wrong) - MAX_DIFFERENCES
        listed = "; ".join(wrong[:MAX_DIFFERENCES]) + (f"; and {more} more" if more > 0
                                                       else "")
        return failed(f"the world differs from what the right actions make: {listed}")
    if not p.calls:
        return passed("the world is as it was at the start, as the right actions (none) "
                      "leave it")
    names = ", ".join(n for n, _ in p.calls)
    return passed(f"the world is as the right actions leave it ({names})")
