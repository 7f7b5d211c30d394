"""A table tool's business rules: what it refuses (``require``), what it works out
(``compute``, ``append``) and what else the same call does (``effects``), all or nothing.

::

    a table tool's require / compute / append / effects
        ──compile_steps──▶ Rule, RuleExpr, TableStep (on its TableAction)
    check_rules(tool, world) ──▶ lint: each expression typed against the tool's args (its
        input_schema), the step's row (its table's columns) and world (every table); a
        table no world defines; a column a table does not have; append on a column that
        is not a list; a key the step's action does not take
    run_call(tables, tool, args, at) ──▶ the rows the tool's own step touched, on a copy
        of the tables that replaces them only when every step succeeded — or Refused:
        the text the agent gets and the error kind the call is recorded with (refused,
        no-row, row-exists, tool-error), and nothing changed

A call is applied step by step, the tool's own first, then each effect in order. A step:

1. finds the rows its ``where`` matches in the tables as the earlier steps left them (a
   ``where`` that matches nothing is refused for update, delete and a read with ``one``);
2. keeps those for which its ``if`` is true (an effect's; with no row, ``if`` is asked
   once with ``row`` null, and the step is skipped when it is not true);
3. asks each ``require`` rule, in order, of each row: the first that is false refuses the
   call with its ``else`` text;
4. changes each row: ``set`` (templates), ``compute`` (expressions), ``append`` (a value
   added to a list column).

Templates (``set``, ``row``, ``append``, ``else``) and expressions (``require``,
``compute``, ``if``) read ``args`` (the call's arguments), ``row`` (the row the step
matched, as it was before the call; for a create, the row ``row:`` makes) and ``world``
(every table as the earlier steps left it). An effect's ``where`` reads ``args``,
``world`` and, as ``row``, the tool's own row (the step has none of its own yet). A
template that is one ``{{ ... }}`` gives its value itself (a number stays a number);
inside mappings and lists too.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import Collector, did_you_mean, quoted_list
from ..model import Action, Located, Rule, RuleExpr, TableStep, ToolSpec, WorldTable
from ..source.load import DataPath, Document
from .moment import say
from .templates import LazyTemplate, check_template, is_template, line_offset

ID = "id"
BROKEN = "broken-rule"  # a rule with a mistake lint reports (a plan never runs one)
FITS: dict[str, tuple[Action, ...]] = {  # a step's key → the actions that take it
    "set": ("update",), "row": ("create",), "compute": ("update", "create"),
    "append": ("update",), "one": ("read",),
}
_BROKEN: Any = object()


# ---- compiling -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StepParts:
    """What one step says, compiled (the tool's own, or an effect's)."""

    where: tuple[tuple[str, Any], ...] = ()
    set: tuple[tuple[str, Any], ...] = ()
    row: tuple[tuple[str, Any], ...] = ()
    compute: tuple[tuple[str, RuleExpr], ...] = ()
    append: tuple[tuple[str, Any], ...] = ()
    require: tuple[Rule, ...] = ()
    when: RuleExpr | None = None
    places: tuple[Located, ...] = ()


def compile_step(doc: Document, path: DataPath, what: str, data: Mapping[str, Any],
                 action: str, diags: Collector, values: dict[str, Any] | None
                 ) -> StepParts | None:
    """The parts of one step at ``path`` (a tool's mapping, or one of its effects):
    ``what`` names it in messages (``the tool 'cancel'``, ``effect 2 of the tool
    'cancel'``). None when a template in it does not compile (reported)."""
    for key, fits in FITS.items():
        if key in data and action not in fits and data[key] is not False:
            kind = "an effect" if what.startswith("effect") else "a tool"
            diags.error(doc.key_span((*path, key)), "E244",
                        f"{what} has {key}, but its action is {action}: {key} is for "
                        f"{kind} with action: {' or '.join(fits)}", fit_hint(key))
    ok = True
    places: list[Located] = []
    parts: dict[str, tuple[tuple[str, Any], ...]] = {}
    for key in ("where", "set", "row", "append"):
        given = data.get(key)
        if not isinstance(given, dict):
            continue
        out = []
        for column, value in given.items():
            places.append(Located(key, str(column), doc.key_span((*path, key, column))))
            made = value_template(doc, (*path, key, column), value, f"{key} of {what}",
                                  diags, values)
            if made is _BROKEN:
                ok = False
                continue
            out.append((str(column), made))
        parts[key] = tuple(out)
    compute: list[tuple[str, RuleExpr]] = []
    given = data.get("compute")
    if isinstance(given, dict):
        for column, source in given.items():
            places.append(Located("compute", str(column),
                                  doc.key_span((*path, "compute", column))))
            if isinstance(source, str):
                compute.append((str(column), rule_expr(doc, (*path, "compute", column),
                                                       source, condition=False)))
    rules: list[Rule] = []
    for i, item in enumerate(data.get("require") or ()):
        if not isinstance(item, dict) or not isinstance(item.get("if"), str):
            continue  # the schema said what is wrong
        otherwise = value_template(doc, (*path, "require", i, "else"), item.get("else", ""),
                                   f"the else of {what}", diags, values)
        if otherwise is _BROKEN:
            ok = False
            continue
        rules.append(Rule(rule_expr(doc, (*path, "require", i, "if"), item["if"]), otherwise,
                          doc.span((*path, "require", i))))
    when = rule_expr(doc, (*path, "if"), data["if"]) if isinstance(data.get("if"), str) \
        else None
    if not ok:
        return None
    return StepParts(parts.get("where", ()), parts.get("set", ()), parts.get("row", ()),
                     tuple(compute), parts.get("append", ()), tuple(rules), when,
                     tuple(places))


def fit_hint(key: str) -> str:
    if key == "set":
        return "set changes the rows where matches: give the tool action: update (or remove set)"
    if key == "row":
        return "row is the row a tool adds: give the tool action: create (or remove row)"
    if key == "compute":
        return "compute works out columns of the rows it changes or adds: use it with " \
               "action: update or create"
    if key == "append":
        return "append adds a value to a list column of the rows it changes: give the tool " \
               "action: update"
    return "one: true answers a single row of a read: remove it, or make the tool action: read"


def compile_effects(doc: Document, path: DataPath, name: str, effects: Any, diags: Collector,
                    values: dict[str, Any] | None) -> tuple[TableStep, ...] | None:
    """A tool's ``effects``: one TableStep each (None when one does not compile)."""
    out: list[TableStep] = []
    ok = True
    for i, eff in enumerate(effects if isinstance(effects, list) else ()):
        if not isinstance(eff, dict) or not isinstance(eff.get("table"), str):
            continue  # the schema said what is wrong
        at = (*path, "effects", i)
        action = str(eff.get("action", "update"))
        what = f"effect {i + 1} of the tool '{name}'"
        parts = compile_step(doc, at, what, eff, action, diags, values)
        if parts is None:
            ok = False
            continue
        if action == "create" and "row" not in eff:
            diags.error(doc.key_span((*at, "table")), "E244",
                        f"{what} creates a row in '{eff['table']}' but has no row",
                        "say what row it adds, e.g. row: {id: \"{{ args.id }}\"}")
        if action == "update" and not any(k in eff for k in ("set", "compute", "append")):
            diags.error(doc.key_span((*at, "table")), "E244",
                        f"{what} updates '{eff['table']}' but has no set, compute or append",
                        "say what it changes, e.g. set: {status: cancelled}")
        out.append(TableStep(eff["table"], action, doc.span((*at, "table")),  # type: ignore[arg-type]
                             parts.where, parts.set, parts.row, parts.compute, parts.append,
                             parts.require, parts.when, parts.places))
    return tuple(out) if ok else None


def rule_expr(doc: Document, path: DataPath, source: str, condition: bool = True) -> RuleExpr:
    """An expression written at ``path``, with what places an offset in it in the file."""
    return RuleExpr(source, doc.span(path), lambda offset: doc.span_in_string(path, offset),
                    condition)


def value_template(doc: Document, path: DataPath, value: Any, what: str, diags: Collector,
                   values: dict[str, Any] | None) -> Any:
    """``value`` (text, or data with text inside) with each template string replaced by
    its LazyTemplate; each that does not compile is reported (E208) and _BROKEN returned."""
    ok = True

    def walk(v: Any, at: DataPath) -> Any:
        nonlocal ok
        if isinstance(v, str):
            if not is_template(v):
                return v
            trouble = check_template(v)
            if trouble is not None:
                ok = False
                diags.error(doc.span_in_string(at, line_offset(v, trouble.line)), "E208",
                            f"the template in {what} {trouble.verb}: {trouble.message}",
                            trouble.hint("templates use {{ args.name }} for an argument; "
                                         "check the braces"))
                return v
            return LazyTemplate(v, values)
        if isinstance(v, dict):
            return {k: walk(x, (*at, k)) for k, x in v.items()}
        if isinstance(v, list):
            return [walk(x, (*at, i)) for i, x in enumerate(v)]
        return v

    made = walk(value, path)
    return made if ok else _BROKEN


def rebound(value: Any, values: dict[str, Any]) -> Any:
    """A compiled value (:func:`value_template`'s) whose templates read ``values``."""
    if isinstance(value, LazyTemplate):
        return LazyTemplate(value.source, values)
    if isinstance(value, dict):
        return {k: rebound(v, values) for k, v in value.items()}
    if isinstance(value, list):
        return [rebound(v, values) for v in value]
    return value


def written(value: Any) -> Any:
    """A compiled value as it was written (templates as their source)."""
    if isinstance(value, LazyTemplate):
        return value.source
    if isinstance(value, dict):
        return {k: written(v) for k, v in value.items()}
    if isinstance(value, list):
        return [written(v) for v in value]
    return value


# ---- lint ------------------------------------------------------------------------------


def steps_of(tool: ToolSpec) -> list[tuple[str, TableStep | None]]:
    """The steps of a table tool, named as messages name them: its own (None: read from
    its TableAction) and each effect."""
    act = tool.table
    assert act is not None
    return [(f"the tool '{tool.name}'", None),
            *((f"effect {i} of the tool '{tool.name}'", s)
              for i, s in enumerate(act.effects, 1))]


def check_rules(tool: ToolSpec, world: Mapping[str, WorldTable], diags: Collector) -> None:
    """Lint a table tool's rules against the scenario's world: its effects' tables and
    columns, append on list columns only, and every expression typed (X301–X305 at its
    place in the file)."""
    act = tool.table
    if act is None:
        return
    types = world_type(world)
    for what, step in steps_of(tool):
        table_name = act.table if step is None else step.table
        table = world.get(table_name)
        if step is not None:
            if table is None:
                have = quoted_list(sorted(world), "and") or "none"
                diags.error(step.span, "E240",
                            f"{what} acts on the table '{table_name}', which no world defines"
                            f"{did_you_mean(table_name, world)}",
                            f"the tables are {have}; define it under world: in scenarist.yaml "
                            "or given.world: in the scenario")
                continue
            for place in step.places:
                if table.columns and place.column not in table.columns:
                    diags.error(place.span, "E241",
                                unknown_column(table, place.column, f"{place.key} of {what} "
                                                                    "names"),
                                columns_hint(table))
        if table is None:
            continue  # reported by check_tools
        places = act.places if step is None else step.places
        for place in places:
            if place.key == "append" and place.column in table.columns:
                kinds = {type(r.get(place.column)) for r in table.rows} - {type(None)}
                if kinds and kinds != {list}:
                    diags.error(place.span, "E246",
                                f"append of {what} adds to the column '{place.column}' of "
                                f"'{table_name}', which is not a list (it holds "
                                f"{_kinds(kinds)})",
                                "append adds a value to a column whose values are lists "
                                "(e.g. payment_history: []); to change the value itself "
                                "use set or compute")
        names = expression_names(tool, table_name, types)
        exprs = [*(r.condition for r in (act.require if step is None else step.require)),
                 *(e for _, e in (act.compute if step is None else step.compute)),
                 *([step.when] if step is not None and step.when is not None else [])]
        for e in exprs:
            report_expression(e, names, diags)


def unknown_column(table: WorldTable, column: str, who: str) -> str:
    return (f"{who} the column '{column}', which the table '{table.name}' does not have"
            f"{did_you_mean(column, table.columns)}")


def columns_hint(table: WorldTable) -> str:
    where = f" ({table.file})" if table.file else ""
    return (f"the columns of '{table.name}'{where} are "
            f"{quoted_list(list(table.columns), 'and') or 'none'}")


def world_type(tables: Mapping[str, WorldTable]) -> Any:
    """``world`` and ``world_before`` as lint types them: each table a list of rows, each
    column typed from the values the table holds (text, number, true/false; a number
    written as text — a CSV cell ``135.20`` — is text that compares and adds as a number;
    JSON when they differ)."""
    # why: the expression language (Lark), only when used
    from ..expr.runtime import number_in
    from ..expr.types import BOOL, JSON, NUMBER, NUMERIC_TEXT, TEXT, Type, world_of

    def kind(v: Any) -> Type | None:
        if v is None or v == "":
            return None  # an empty cell says nothing of its column
        if isinstance(v, bool):
            return BOOL
        if isinstance(v, (int, float)):
            return NUMBER
        if isinstance(v, str):
            return NUMERIC_TEXT if number_in(v) is not None else TEXT
        return JSON

    def join(seen: set[Type]) -> Type:
        if len(seen) == 1:
            return seen.pop()
        if seen and seen <= {NUMBER, NUMERIC_TEXT}:
            return NUMERIC_TEXT
        if seen and seen <= {TEXT, NUMERIC_TEXT}:
            return TEXT
        return JSON

    out: dict[str, dict[str, Type]] = {}
    for name, table in tables.items():
        cols: dict[str, Type] = {}
        for column in table.columns:
            seen = {kind(r.get(column)) for r in table.rows} - {None}
            cols[column] = join(seen)  # type: ignore[arg-type]
        out[name] = cols
    return world_of(out)


def _kinds(kinds: Iterable[type]) -> str:
    words = {str: "text", int: "numbers", float: "numbers", bool: "true/false",
             dict: "mappings", list: "lists"}
    return quoted_list(sorted({words.get(k, "values") for k in kinds}), "and").replace("'", "")


def expression_names(tool: ToolSpec, table: str, world: Any) -> tuple[tuple[str, Any], ...]:
    """What a rule's expression reads, typed: ``args`` (from the tool's input_schema),
    ``row`` (a row of the step's table) and ``world``."""
    # why: the expression language (Lark), only when a rule has one
    from ..expr.types import JSON, fields_of

    tables = fields_of(world) or {}
    rows = tables.get(table)
    row = rows.type.item if rows is not None and rows.type.item is not None else JSON
    return (("args", args_type(tool)), ("row", row), ("world", world))


def args_type(tool: ToolSpec) -> Any:
    """``args`` in a table tool's rules: one field per argument of its input_schema, each
    typed from it (JSON data when the schema says nothing usable)."""
    # why: the expression language (Lark), only when a rule has one
    from ..expr.types import BOOL, JSON, NUMBER, TEXT, args_of, list_of

    schema = tool.input_schema
    props = schema.get("properties") if isinstance(schema, Mapping) else None
    if tool.args_declared is not True or not isinstance(props, Mapping) \
            or schema.get("additionalProperties", False) is not False:
        return JSON

    def typed(p: Any) -> Any:
        kind = p.get("type") if isinstance(p, Mapping) else None
        if kind == "string":
            return TEXT
        if kind in ("number", "integer"):
            return NUMBER
        if kind == "boolean":
            return BOOL
        if kind == "array":
            items = p.get("items")
            return list_of(typed(items) if isinstance(items, Mapping) else JSON)
        return JSON

    return args_of({str(k): typed(v) for k, v in props.items()})


def report_expression(e: RuleExpr, names: tuple[tuple[str, Any], ...],
                      diags: Collector) -> bool:
    """Compile ``e``; report each problem at its place. True when it compiles."""
    # why: the expression language (Lark), only when a rule has one
    from ..expr import ProblemsFound, compile_expression

    try:
        compile_expression(e.source, condition=e.condition, names=names)
    except ProblemsFound as exc:
        for p in exc.problems:
            at = e.locate(p.offset)
            if p.severity == "warning":
                diags.warning(at, p.code, p.message, p.hint)
            else:
                diags.error(at, p.code, p.message, p.hint)
        return False
    return True


# ---- one call --------------------------------------------------------------------------


class Refused(Exception):
    """A call that changes nothing: ``text`` is what the agent gets, ``kind`` the error
    the call is recorded with (``refused``, ``no-row``, ``row-exists``, ``tool-error``)."""

    def __init__(self, text: str, kind: str) -> None:
        super().__init__(text)
        self.text = text
        self.kind = kind


Tables = dict[str, list[dict[str, Any]]]


@dataclass(slots=True)
class Call:
    """One call being applied: its arguments, moment, the tables at its start and the
    working copy each step changes."""

    tool: ToolSpec
    args: dict[str, Any]
    at: dt.datetime
    before: Tables  # the tables when the call began (``row`` reads these)
    work: Tables  # the tables as the steps so far left them
    world_type: Any
    ids: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)


def run_call(tables: Tables, tool: ToolSpec, args: dict[str, Any], at: dt.datetime,
             world_type: Any) -> tuple[list[dict[str, Any]], Tables]:
    """Apply a call of ``tool`` (a table tool) to ``tables``: the rows its own step
    touched (as they are after it) and the tables after every step — a new mapping of new
    lists; ``tables`` itself is left as it was. Raises :class:`Refused`."""
    act = tool.table
    assert act is not None
    work = {name: list(rows) for name, rows in tables.items()}
    call = Call(tool, args, at, tables, work, world_type)
    own = TableStep(act.table, tool.action, act.span, act.where, act.set, act.row,
                    act.compute, act.append, act.require, None, act.places)
    touched, first = _step(call, own, None, one=act.one)
    for step in act.effects:
        _step(call, step, first)
    return touched, work


def _step(call: Call, step: TableStep, tool_row: dict[str, Any] | None, one: bool = False
          ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    """One step: the rows it touched (as they are now) and the row an effect's ``where``
    reads as ``row`` (the first it matched, before the call; for a create, the new row)."""
    rows = call.work.setdefault(step.table, [])
    where_names = {"args": call.args, "world": call.work, "row": tool_row}
    where = [(c, render(v, call, where_names)) for c, v in step.where]
    hit = [i for i, r in enumerate(rows) if all(c in r and same(r[c], v) for c, v in where)]
    if step.action == "create":
        return _create(call, step, rows)
    kept: list[int] = []
    for i in hit:
        if step.when is None or _true(call, step.when, _before(call, step.table, rows[i]),
                                      "if"):
            kept.append(i)
    if not hit and step.when is not None and not _true(call, step.when, None, "if"):
        return [], None
    if step.when is not None and hit and not kept:
        return [], None
    if not kept and (step.action != "read" or one):
        raise Refused(f"error: {no_row(step.table, where)}", "no-row")
    for i in kept:
        _require(call, step, _before(call, step.table, rows[i]))
    first = _before(call, step.table, rows[kept[0]]) if kept else None
    if step.action == "read":
        shown = [rows[i] for i in kept]
        return (shown[:1] if one else shown), first
    if step.action == "delete":
        gone = set(kept)
        shown = [rows[i] for i in kept]
        rows[:] = [r for i, r in enumerate(rows) if i not in gone]
        return shown, first
    changed = []
    for i in kept:
        new = _changes(call, step, rows[i], _before(call, step.table, rows[i]))
        rows[i] = new
        changed.append(new)
    return changed, first


def _create(call: Call, step: TableStep, rows: list[dict[str, Any]]
            ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
    names = {"args": call.args, "world": call.work, "row": None}
    new = {c: render(v, call, names) for c, v in step.row}
    if step.when is not None and not _true(call, step.when, new, "if"):
        return [], None
    _require(call, step, new)
    new = _changes(call, step, new, new)
    if ID in new and any(ID in r and same(r[ID], new[ID]) for r in rows):
        raise Refused(f"error: {step.table} already has a row with id = {text_of(new[ID])}",
                      "row-exists")
    rows.append(new)
    return [new], new


def _before(call: Call, table: str, row: dict[str, Any]) -> dict[str, Any]:
    """``row`` as it was when the call began (a row an earlier step added: as it is)."""
    if ID not in row:
        return row
    by_id = call.ids.get(table)
    if by_id is None:
        by_id = call.ids[table] = {text_of(r[ID]): r for r in call.before.get(table, ())
                                   if ID in r}
    return by_id.get(text_of(row[ID]), row)


def _require(call: Call, step: TableStep, row: dict[str, Any] | None) -> None:
    for rule in step.require:
        if not _true(call, rule.condition, row, "require"):
            names = {"args": call.args, "row": row, "world": call.work}
            text = render(rule.otherwise, call, names)
            raise Refused(error_text(text_of(text) if text != "" else
                                     f"the call breaks the rule {rule.condition.source}"),
                          "refused")


def _changes(call: Call, step: TableStep, current: dict[str, Any],
             row: dict[str, Any] | None) -> dict[str, Any]:
    """``current`` with the step's set, compute and append applied (they read ``row``, the
    row before the call, and the tables as the earlier steps left them)."""
    names = {"args": call.args, "row": row, "world": call.work}
    new = dict(current)
    for c, v in step.set:
        new[c] = render(v, call, names)
    for c, e in step.compute:
        new[c] = storable(_value(call, e, row))
    for c, v in step.append:
        have = current.get(c)
        if have is None:
            have = []
        if not isinstance(have, list):
            raise Refused(f"error: the tool failed: append to {step.table}.{c}, which holds "
                          f"{json.dumps(have, ensure_ascii=False, default=str)}, not a list",
                          "tool-error")
        new[c] = [*have, render(v, call, names)]
    return new


def _true(call: Call, e: RuleExpr, row: dict[str, Any] | None, what: str) -> bool:
    value = _value(call, e, row)
    if value is True or value is False:
        return value
    if value is None and what == "if":
        return False  # an if about a row that is not there
    raise Refused(f"error: the tool failed: the rule {e.source} gave "
                  f"{json.dumps(value, ensure_ascii=False, default=str)}, not true or false",
                  "tool-error")


def _value(call: Call, e: RuleExpr, row: dict[str, Any] | None) -> Any:
    # why: the expression language (Lark), only when a rule has one
    from ..expr import Bindings, EvalError, ProblemsFound, compile_expression

    names = expression_names(call.tool, _table_of(call, e), call.world_type)
    try:
        program = compile_expression(e.source, condition=e.condition, names=names)
    except ProblemsFound as exc:  # lint reports it where it is written; no run has it
        raise Refused(f"error: the tool failed: {e.source}: {exc.problems[0].message}",
                      BROKEN) from None
    try:
        return program.evaluate(Bindings({"args": call.args, "row": row,
                                          "world": call.work}))
    except EvalError as exc:
        raise Refused(f"error: the tool failed: {exc.message}", "tool-error") from None
    except Exception as exc:  # a value the language did not expect: the tool fails, not the run
        raise Refused(f"error: the tool failed: {e.source}: {exc}", "tool-error") from None


def _table_of(call: Call, e: RuleExpr) -> str:
    """The table whose rows ``row`` holds in expression ``e`` (its step's)."""
    act = call.tool.table
    assert act is not None
    for step in act.effects:
        if e is step.when or any(e is r.condition for r in step.require) \
                or any(e is x for _, x in step.compute):
            return step.table
    return act.table


# ---- values ------------------------------------------------------------------------------

# A template that is one {{ ... }} and nothing else: its value is the expression's
_ONE = re.compile(r"\A\{\{-?(?P<expr>(?:(?!\{\{|\}\}|\{%|%\}|\{#).)+?)-?\}\}\Z", re.S)


def render(value: Any, call: Call, names: Mapping[str, Any]) -> Any:
    """A where, set, row, append or else value for this call: fixed data as written; a
    template that is one ``{{ ... }}`` gives the value itself (a number stays a number,
    nothing gives empty text); any other template, text — inside mappings and lists too."""
    if isinstance(value, LazyTemplate):
        return _render_template(value, call, names)
    if isinstance(value, dict):
        return {k: render(v, call, names) for k, v in value.items()}
    if isinstance(value, list):
        return [render(v, call, names) for v in value]
    return value


def _render_template(t: LazyTemplate, call: Call, names: Mapping[str, Any]) -> Any:
    given = {**names, "at": call.at, "now": say(call.at)}
    args = call.args
    m = _ONE.match(t.source.strip())
    try:
        if m is not None:
            inner = m.group("expr").strip()
            simple = _ARG.match(inner)
            if simple is not None:  # {{ args.x }}: the argument itself
                return args.get(simple.group(1), "")
            # why: Jinja, only for a template that is one expression
            from .sandbox import expression_value
            from .templates import environment

            env_values = {**(t.values or {}), **given}
            return storable(expression_value(environment(), inner, env_values))
        return t.render(**given)
    except Refused:
        raise
    except Exception as exc:  # a template over the model's arguments failed
        raise Refused(f"error: the tool failed: {exc}", "tool-error") from None


_ARG = re.compile(r"args\.([A-Za-z_][A-Za-z0-9_]*)\Z")


def storable(value: Any) -> Any:
    """A value as a table keeps it: JSON data (a date or a moment as a template writes it,
    a tuple as a list, nothing as empty text)."""
    # why: Jinja, only when a template gave a value
    from jinja2 import Undefined

    if isinstance(value, Undefined):
        return ""
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, str):
        return str(value)
    if isinstance(value, dt.date):
        return str(value)  # as the template writes it
    if isinstance(value, Mapping):
        return {str(k): storable(v) for k, v in value.items()}
    if isinstance(value, list | tuple) or _iterable(value):
        return [storable(v) for v in value]
    return str(value)


def _iterable(value: Any) -> bool:
    return hasattr(value, "__iter__") and hasattr(value, "__next__")


def error_text(text: str) -> str:
    """An author's error as the agent reads it: ``error: ...`` (said once)."""
    return text if text[:5].lower() == "error" else f"error: {text}"


def text_of(v: Any) -> str:
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    return json.dumps(v, ensure_ascii=False, default=str)


def same(have: Any, want: Any) -> bool:
    """Whether two values of the world are the same: equal; or the same when written as
    text (a CSV's ``7`` and the model's 7; ``true`` and true); a number and a number
    written as text by value (``135.20`` and 135.2); lists item by item, in order, and
    mappings key by key, by the same rule."""
    if isinstance(have, dict) or isinstance(want, dict):
        return isinstance(have, dict) and isinstance(want, dict) \
            and have.keys() == want.keys() and all(same(v, want[k]) for k, v in have.items())
    if isinstance(have, list) or isinstance(want, list):
        return isinstance(have, list) and isinstance(want, list) and len(have) == len(want) \
            and all(same(a, b) for a, b in zip(have, want, strict=True))
    if have == want and type(have) is not bool and type(want) is not bool:
        return True
    x, y = _number(have), _number(want)
    if x is not None and y is not None:
        return bool(x == y)
    return text_of(have) == text_of(want)


def _number(v: Any) -> Any:
    # why: the expression language (Lark), only when a value is compared
    from ..expr.runtime import numeric

    return numeric(v) if type(v) is not bool else None


def no_row(table: str, where: Sequence[tuple[str, Any]]) -> str:
    """``no row in cards with id = C-9``: what a where that matches nothing tells the agent."""
    if not where:
        return f"no row in {table}"
    return f"no row in {table} with " + " and ".join(f"{c} = {text_of(v)}" for c, v in where)

