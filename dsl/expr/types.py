"""The types an expression works with, and the values it can read.

A small lattice, checked at lint time (``typecheck``):

* ``text``, ``number``, ``bool`` (true/false), ``null``, ``date``;
* ``list`` of one item type (``list[call]``);
* ``object`` with known fields — a ``call``, a ``tool``, the ``moment`` (``at``);
* ``json`` — data whose shape is only known when the check runs (a call's ``args``,
  what ``json(...)`` read). Every operation accepts it; the evaluator checks at run time.

A tool's ``output`` is text that can also be navigated as JSON (``output.slots[0]``): a
``text`` with ``navigable=True``.

The shapes below are the data model of an attempt. They are also what ``docs/expressions.md``
documents (a test keeps the two in step).
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

Kind = Literal["text", "number", "bool", "null", "date", "list", "object", "json"]


@dataclass(frozen=True, slots=True)
class Type:
    kind: Kind
    item: Type | None = None  # list: the type of its items
    # object: "call" | "tool" | "moment" | "case" | "world" | "row" | "args"
    shape: str = ""
    navigable: bool = False  # text: a tool's output, whose JSON fields can be read
    # object "case": its values and their types; "world": its tables; "row": its columns;
    # "args": a table tool's arguments (from its input_schema)
    fields: tuple[tuple[str, Type], ...] = ()
    numeric: bool = False  # text: a number written as text (a CSV cell '135.20')

    def __str__(self) -> str:
        return describe(self)


TEXT = Type("text")
NUMBER = Type("number")
BOOL = Type("bool")
NULL = Type("null")
DATE = Type("date")
JSON = Type("json")
OUTPUT = Type("text", navigable=True)
NUMERIC_TEXT = Type("text", numeric=True)  # a column whose every value is a number as text
CALL = Type("object", shape="call")
TOOL = Type("object", shape="tool")
MOMENT = Type("object", shape="moment")


def list_of(item: Type) -> Type:
    return Type("list", item=item)


CASE = "case"  # the name of a scenario's case in its expressions: case.drug


def case_of(fields: Mapping[str, Type]) -> Type:
    """The type of ``case`` in a scenario with cases: an object with one field per value
    the cases have (dsl/compiler/cases.py gives each its type)."""
    return Type("object", shape=CASE, fields=tuple(sorted(fields.items())))


WORLD = "world"  # the scenario's world at the end of the attempt: world.cards
WORLD_BEFORE = "world_before"  # and at its start
WORLD_NAMES = (WORLD, WORLD_BEFORE)
ROW = "row"
ARGS = "args"  # a table tool's arguments, in its rules' expressions (dsl/compiler/rules.py)


def row_of(columns: Mapping[str, Type]) -> Type:
    """A row of a table with these columns (an object with one field per column)."""
    return Type("object", shape=ROW, fields=tuple(sorted(columns.items())))


def args_of(arguments: Mapping[str, Type]) -> Type:
    """A table tool's ``args``: an object with one field per argument of its input_schema."""
    return Type("object", shape=ARGS, fields=tuple(sorted(arguments.items())))


def world_of(tables: Mapping[str, Mapping[str, Type]]) -> Type:
    """The type of ``world`` and ``world_before`` in a scenario with a world: an object
    with one field per table, each a list of rows with the table's columns (an empty
    table's rows are JSON data: their columns are not known)."""
    return Type("object", shape=WORLD, fields=tuple(sorted(
        (name, list_of(Type("object", shape=ROW, fields=tuple(sorted(cols.items())))
                       if cols else JSON))
        for name, cols in tables.items())))


@dataclass(frozen=True, slots=True)
class Member:
    """A field of an object, or a value an expression can read by name."""

    type: Type
    doc: str
    example: str = ""


CALL_FIELDS: dict[str, Member] = {
    "name": Member(TEXT, "the tool's name", "'book_table'"),
    "args": Member(JSON, "the arguments the agent sent, as JSON data (null when they were "
                         "not valid JSON)", "args.date"),
    "output": Member(OUTPUT, "what the tool returned, as text; when that text is JSON its "
                             "fields can be read: output.slots[0] (null for a pending call)",
                     "'confirmed' in output"),
    "action": Member(TEXT, "the tool's action: 'read', 'create', 'update' or 'delete' (null "
                           "when the tool does not exist)", "action == 'read'"),
    "pending": Member(BOOL, "true when the call waits for the person's confirmation and was "
                            "not run", "pending"),
    "step": Member(NUMBER, "which model call made it: 1 for the first", "step == 1"),
    "error": Member(TEXT, "why the call was not run ('invalid-json', 'unknown-tool'), or that "
                          "its tool answered with an error ('tool-error'; 'no-record': no "
                          "answer for these arguments; 'no-row': its where matched no row "
                          "of the world; 'row-exists': its create gave an id a row already "
                          "has; 'refused': a rule of its require was false; "
                          "'invalid-args': its arguments broke its input_schema); null "
                          "when it ran fine or is pending",
                    "error == null"),
    "decision": Member(TEXT, "what the person did in a later turn with a call held for "
                             "confirmation: 'confirmed' (it ran), 'cancelled' or 'dismissed'; "
                             "null otherwise", "decision == 'confirmed'"),
}

TOOL_FIELDS: dict[str, Member] = {
    "name": Member(TEXT, "the tool's name"),
    "action": Member(TEXT, "'read', 'create', 'update' or 'delete'"),
    "confirm": Member(BOOL, "true when the agent must ask before the tool runs"),
    "description": Member(TEXT, "the description the model reads"),
}

MOMENT_FIELDS: dict[str, Member] = {
    "year": Member(NUMBER, "the year", "2026"),
    "month": Member(NUMBER, "the month, 1 to 12", "9"),
    "day": Member(NUMBER, "the day of the month, 1 to 31", "29"),
    "hour": Member(NUMBER, "the hour, 0 to 23", "10"),
    "minute": Member(NUMBER, "the minute, 0 to 59", "0"),
    "weekday": Member(NUMBER, "the day of the week: 0 Monday, 1 Tuesday … 6 Sunday", "1"),
    "date": Member(TEXT, "the date as text, YYYY-MM-DD", "'2026-09-29'"),
    "time": Member(TEXT, "the time as text, HH:MM", "'10:00'"),
}

DATE_FIELDS: dict[str, Member] = {
    "year": Member(NUMBER, "the year"),
    "month": Member(NUMBER, "the month, 1 to 12"),
    "day": Member(NUMBER, "the day of the month"),
    "weekday": Member(NUMBER, "the day of the week: 0 Monday … 6 Sunday"),
}

SHAPES: dict[str, dict[str, Member]] = {
    "call": CALL_FIELDS,
    "tool": TOOL_FIELDS,
    "moment": MOMENT_FIELDS,
}

GLOBALS: dict[str, Member] = {
    "answer": Member(TEXT, "the agent's final answer, as text (empty when it stopped to ask "
                           "for a confirmation)", "'18:00' in answer"),
    "message": Member(TEXT, "what the person said (the scenario's `when`; in a conversation, "
                             "the person's last message)", "answer != message"),
    "calls": Member(list_of(CALL), "every tool call the agent made, in order; pending calls "
                                   "included", "count(calls) <= 2"),
    "pending": Member(list_of(CALL), "the calls held for the person's confirmation",
                      "count(pending) == 1"),
    "tools": Member(list_of(TOOL), "the scenario's tools", "count(tools) == 3"),
    "at": Member(MOMENT, "the moment the person speaks (`given.at`), in the scenario's own UTC "
                         "offset: `10:00-03:00` has hour 10", "at.hour < 12"),
    "latency_ms": Member(NUMBER, "how long the attempt took, in milliseconds",
                         "latency_ms < 5000"),
    "tokens": Member(NUMBER, "tokens used by all the model calls (prompt + completion)",
                     "tokens < 4000"),
    "prompt_tokens": Member(NUMBER, "prompt tokens of all the model calls",
                            "prompt_tokens < 3000"),
    "completion_tokens": Member(NUMBER, "completion tokens of all the model calls",
                                "completion_tokens < 500"),
    "steps": Member(NUMBER, "how many model calls the attempt made", "steps <= 3"),
}

# Values that only a live attempt measures: a replay reports what its cassette recorded and
# a recheck what the run's record kept, so a check of them asks about the endpoint's speed
# that day, not the agent (lint: W414, unless the check is marked ``allow: {W414: why}``)
LIVE_ONLY: frozenset[str] = frozenset({"latency_ms"})

ITEM = "item"  # inside [ ] and conditions: the current item itself
KEYWORDS = frozenset({"and", "or", "not", "in", "matches", "true", "false", "null", "as",
                      "if", "else"})


def fields_of(t: Type) -> Mapping[str, Member] | None:
    """The known fields of ``t``, or None when it has none (or they are unknown: json)."""
    if t.kind == "object":
        if t.shape in (CASE, WORLD, ROW, ARGS):
            return _case_fields(t)
        return SHAPES[t.shape]
    if t.kind == "date":
        return DATE_FIELDS
    return None


@functools.lru_cache(maxsize=256)
def _case_fields(t: Type) -> Mapping[str, Member]:
    what = {CASE: "the case's value", WORLD: "the table", ROW: "the row's column",
            ARGS: "the argument"}[t.shape]
    return {name: Member(ft, f"{what} '{name}'") for name, ft in t.fields}


_SHAPE_WORDS = {"call": ("a call", "calls"), "tool": ("a tool", "tools"),
                "moment": ("the moment", "moments"), CASE: ("the case", "cases"),
                WORLD: ("the world", "worlds"), ROW: ("a row", "rows"),
                ARGS: ("the arguments", "arguments")}
_WORDS: dict[str, tuple[str, str]] = {
    "text": ("text", "texts"),
    "number": ("a number", "numbers"),
    "bool": ("true/false", "true/false values"),
    "null": ("null", "nulls"),
    "date": ("a date", "dates"),
    "json": ("JSON data", "values"),
}


def describe(t: Type) -> str:
    """How a type is said in a message: ``text``, ``a number``, ``a list of calls``."""
    if t.kind == "list":
        return "a list" if t.item is None or t.item.kind == "json" else \
            f"a list of {plural(t.item)}"
    if t.kind == "object":
        return _SHAPE_WORDS[t.shape][0]
    if t.numeric:
        return "a number written as text"
    return _WORDS[t.kind][0]


def plural(t: Type) -> str:
    if t.kind == "list":
        return "lists"
    if t.kind == "object":
        return _SHAPE_WORDS[t.shape][1]
    return _WORDS[t.kind][1]


def maybe(t: Type, *kinds: str) -> bool:
    """``t`` is one of ``kinds``, or may be at run time (json); a number written as text
    counts as a number (it compares and adds by value)."""
    return t.kind in kinds or t.kind == "json" or (t.numeric and "number" in kinds)


def equatable(a: Type, b: Type) -> bool:
    """Can ``a == b`` ever be true (or tell anything)? null compares with everything."""
    if a.kind == "null" or b.kind == "null":
        return True
    if a.kind == "json" or b.kind == "json":
        other = b if a.kind == "json" else a
        # JSON data is text, a number, true/false, a list or an object: never a date,
        # a call, a tool or the moment.
        return other.kind not in ("date", "object")
    if a.kind != b.kind:
        # a number written as text ('135.20') equals the number 135.2
        return {a.kind, b.kind} == {"text", "number"} and (a.numeric or b.numeric)
    if a.kind == "object":
        return a.shape == b.shape
    if a.kind == "list" and a.item is not None and b.item is not None:
        return equatable(a.item, b.item)
    return True


def orderable(a: Type, b: Type) -> bool:
    """Can ``a < b`` be evaluated? Numbers, texts and dates, each with its own kind."""
    if a.kind == "json" and b.kind == "json":
        return True
    if a.kind == "json":
        return b.kind in ("number", "text")
    if b.kind == "json":
        return a.kind in ("number", "text")
    if {a.kind, b.kind} == {"text", "number"}:
        return a.numeric or b.numeric  # a number written as text is put in order by value
    return a.kind == b.kind and a.kind in ("number", "text", "date")


def join(types: list[Type]) -> Type:
    """The type of a list's items: the common type, or json when they differ."""
    if not types:
        return JSON
    first = types[0]
    if all(t == first for t in types):
        return first
    if all(t.kind == "text" for t in types):
        return TEXT
    return JSON
