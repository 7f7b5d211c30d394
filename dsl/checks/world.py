"""The ``world`` check: the final state of some rows of the scenario's world.

``- world: {cards: {C-2: {status: blocked}, C-1: {status: active}}}`` — by table, then by
the row's ``id``: the columns listed must have those values at the end of the attempt
(the others are free); ``ID: absent`` says the row must not exist. Lint checks each table,
id and column against the world the scenario starts from (dsl/compiler/world.py).
"""

from __future__ import annotations

from typing import Any

import msgspec

from ..errors import did_you_mean, quoted_list
from ..model import AttemptData, Outcome, WorldTable
from .registry import CheckContext, check, errored, failed, passed, schema_doc

ABSENT = "absent"

WORLD_SCHEMA: dict[str, Any] = {
    "type": "object",
    "minProperties": 1,
    "additionalProperties": {
        "type": "object",
        "minProperties": 1,
        "additionalProperties": {
            "if": {"type": "string"},
            "then": {"const": ABSENT},
            "else": {"type": "object"},
            **schema_doc("The columns this row must have at the end, with their values; or "
                         "`absent`: the row must not exist.", {"status": "blocked"}, ABSENT),
        },
        **schema_doc("A table: its rows by id.", {"C-2": {"status": "blocked"}}),
    },
    **schema_doc("The rows that must end as given, by table and id.",
                 {"cards": {"C-2": {"status": "blocked"}, "C-1": {"status": "active"}}}),
}


class Expected(msgspec.Struct, frozen=True):
    table: str
    id: str
    columns: tuple[tuple[str, Any], ...] | None  # None: the row must be absent


def prepare_world(param: Any, ctx: CheckContext) -> tuple[Expected, ...] | None:
    tables: dict[str, WorldTable] = dict(ctx.extra.get("world") or {})
    out: list[Expected] = []
    ok = True
    for name, rows in param.items():
        table = tables.get(name)
        if table is None:
            have = quoted_list(sorted(tables), "and")
            ctx.error("E240", f"the world check names the table '{name}', which no world "
                              f"defines{did_you_mean(str(name), tables)}",
                      f"the tables are {have}" if have else
                      f"no world defines a table here: define '{name}' under world: in "
                      "scenarist.yaml (once the suite file has no errors, its tables count) "
                      "or under given.world: in the scenario",
                      at=ctx.doc.key_span((*ctx.path, name)))
            ok = False
            continue
        if table.rows and "id" not in table.columns:
            where = f" ({table.file})" if table.file else ""
            ctx.error("E242", f"the table '{name}'{where} has no id column, so the world "
                              "check cannot find its rows",
                      "give every row an id (a column named id)",
                      at=ctx.doc.key_span((*ctx.path, name)))
            ok = False
            continue
        # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
        from ..compiler.world import columns_hint, find, unknown_column

        for key, want in rows.items():
            rid = str(key)
            if table.rows and find(table.rows, rid) is None:
                ctx.warning("W420", f"the table '{name}' has no row with id = {rid} at the "
                                    "start; the check passes only if the agent creates it"
                                    f"{did_you_mean(rid, [_id(r) for r in table.rows])}",
                            "check the id, or leave it if the agent is to create that row",
                            at=ctx.doc.key_span((*ctx.path, name, key)))
            if want == ABSENT:
                out.append(Expected(str(name), rid, None))
                continue
            for column in want:
                if table.columns and column not in table.columns:
                    ctx.error("E241", unknown_column(table, str(column),
                                                     "the world check names"),
                              columns_hint(table),
                              at=ctx.doc.key_span((*ctx.path, name, key, column)))
                    ok = False
            out.append(Expected(str(name), rid, tuple((str(c), v) for c, v in want.items())))
    return tuple(out) if ok else None


def _id(row: Any) -> str:
    # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
    from ..compiler.world import _text

    return _text(row.get("id"))


@check(
    "world",
    doc="Rows of the world end as given: by table and id, the columns listed have these "
        "values; `ID: absent`, the row does not exist.",
    schema=WORLD_SCHEMA,
    examples=("world: {cards: {C-2: {status: blocked}, C-1: {status: active}}}",
              "world: {replacements: {R-1: absent}}"),
    prepare=prepare_world,
    group="tools",
    details="Looks at the world as the attempt left it: every change its table tools made "
    "(`table:` on a fake tool), confirmed calls included, held or cancelled ones not. A "
    "row's columns that are not listed may have any value. A value matches as a `where` "
    "does: `7` and `'7'` are the same. The failure names the table, the row and the "
    "column, with the value found and the value expected. See \"A world with state\" in "
    "docs/scenarios.md.",
)
def world(p: tuple[Expected, ...], a: AttemptData) -> Outcome:
    if a.world is None:
        return errored("the attempt has no world to look at (the scenario has no world:)")
    # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
    from ..compiler.world import find, same, shown

    wrong: list[str] = []
    for e in p:
        row = find(a.world.after.get(e.table, ()), e.id)
        if e.columns is None:
            if row is not None:
                wrong.append(f"{e.table} {e.id}: expected absent, but the row exists")
            continue
        if row is None:
            was = find(a.world.before.get(e.table, ()), e.id) is not None
            wrong.append(f"{e.table} {e.id}: no such row" + (" (it was deleted)" if was
                                                              else ""))
            continue
        for column, want in e.columns:
            have = row.get(column)
            if column not in row or not same(have, want):
                wrong.append(f"{e.table} {e.id}: {column} is {shown(have)}, expected "
                             f"{shown(want)}")
    if wrong:
        return failed("the world differs: " + "; ".join(wrong))
    rows = ", ".join(f"{e.table} {e.id}" for e in p)
    return passed(f"the world is as expected ({rows})")
