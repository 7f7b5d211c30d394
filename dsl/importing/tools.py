"""The fake tools of an imported scenario: one per tool the agent called or was offered,
answering by argument exactly what the real tool returned for each logged call.

* ``description`` and ``input_schema`` come from the logged definition; a tool the log
  does not define (or whose parameters are not a valid JSON Schema) gets an
  ``input_schema`` inferred from the arguments it was called with — each argument's type
  from its values, required when every call gave it — so the scenario still lints clean.
* ``answers``: one per distinct arguments, the more specific first (an answer applies when
  its ``when`` arguments are all in the call), each with the logged result as ``returns``
  (a JSON object or list as data when it reads back to the very same text, else the
  text) or, for a tool's error, ``error``. A call the log shows no result for answers an
  error that says so; a tool never called answers an error too: nothing is known of it.
* An argument a call sent that the definition does not allow (a name it does not have, a
  value of another type) is left out of that call's ``when`` and ``calls`` check, and
  said in a comment (lint would refuse it).
* ``confirm: true`` when the agent's calls to it were held for the person.
* With ``--world``: a tool that only reads, whose every result is a JSON list of rows with
  an ``id`` (or one such row), becomes a table tool on a world table made of those rows —
  only when the world answers every logged call with exactly the logged text (tried with
  the world's own code), else it keeps its answers.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..compiler.arguments import argument_problems
from ..errors import Span
from ..model import ToolSpec
from ..source.schemacheck import schema_problem
from .conversation import Conversation, LoggedCall, Place, ToolDef

NO_RESULT = "no result was logged for this call"
NEVER_CALLED = "this tool was never called in the log, so what it returns is not known"
NEVER_RAN = "this tool never ran in the log (its calls waited for the person)"
FAILED = "the tool failed (the log gives no message)"
_NOWHERE = Span("<import>", 1, 1)
_TYPES = (("boolean", bool), ("integer", int), ("number", float), ("string", str),
          ("array", list), ("object", dict))


@dataclass
class Answer:
    """One entry of ``answers``: the arguments, and what the tool returns or its error."""

    when: dict[str, Any]
    returns: Any = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)
    place: Place | None = None  # where the result was read


@dataclass
class Table:
    """``--world``: the table a read tool acts on, and how its arguments pick rows."""

    name: str
    rows: list[dict[str, Any]]
    where: dict[str, str]  # column → the argument
    one: bool


@dataclass
class FakeTool:
    name: str
    description: str
    schema: dict[str, Any] | None
    inferred: bool  # the schema was inferred from the arguments
    schema_note: str
    action: str | None
    confirm: bool
    answers: list[Answer]
    error: str | None = None
    table: Table | None = None
    calls: list[LoggedCall] = field(default_factory=list)
    left_out: dict[int, list[str]] = field(default_factory=dict)  # id(call) → arguments

    def fitted(self, call: LoggedCall) -> dict[str, Any] | None:
        """A call's arguments without those the input_schema does not allow."""
        if call.args is None:
            return None
        gone = self.left_out.get(id(call), [])
        return {k: v for k, v in call.args.items() if k not in gone}


def fake_tools(c: Conversation, *, world: bool) -> list[FakeTool]:
    """The conversation's tools, in the order they were defined, then called."""
    calls: dict[str, list[LoggedCall]] = {}
    for call in c.calls:
        if call.id and call.id in c.not_run:
            continue
        calls.setdefault(call.name, []).append(call)
    defined = {t.name: t for t in c.tools}
    order = [*defined, *(n for n in calls if n not in defined and not c.closed_tools)]
    out = [_tool(defined.get(name) or ToolDef(name), calls.get(name, [])) for name in order]
    if world:
        taken: set[str] = set()
        for tool in out:
            tool.table = _table(tool, taken)
    return out


def _tool(definition: ToolDef, calls: list[LoggedCall]) -> FakeTool:
    schema, inferred, note = _schema(definition, calls)
    tool = FakeTool(definition.name, definition.description, schema, inferred, note,
                    definition.action, definition.confirm or any(c.held for c in calls),
                    [], calls=calls)
    if schema is not None and not inferred:
        spec = ToolSpec(definition.name, definition.description, schema, "read", False, None,
                        _NOWHERE)

        for call in calls:
            if call.args:
                gone = [str(p.where[0]) for p in argument_problems(spec, call.args)
                        if p.where and p.severity == "error"]
                if gone:
                    tool.left_out[id(call)] = gone
    ran = [call for call in calls if call.decision not in ("cancelled", "dismissed",
                                                           "pending")]
    by_when: dict[str, Answer] = {}
    for call in ran:
        when = tool.fitted(call)
        if when is None:
            continue
        key = json.dumps(when, sort_keys=True, ensure_ascii=False)
        answer = _answer(call, when)
        have = by_when.get(key)
        if have is None:
            by_when[key] = answer
        elif (have.returns, have.error) != (answer.returns, answer.error):
            have.notes.append(f"called again with these arguments, it returned {_shown(call)}"
                              " (an answer is the same every time: the first is kept)")
    tool.answers = sorted(by_when.values(), key=lambda a: -len(a.when))
    if not tool.answers:
        tool.error = NEVER_CALLED if not calls else NEVER_RAN if not ran else None
    return tool


def _answer(call: LoggedCall, when: dict[str, Any]) -> Answer:
    if call.result is None:
        return Answer(when, error=NO_RESULT, place=call.place)
    place = call.result_place or call.place
    if call.error:
        return Answer(when, error=call.result if call.result.strip() else FAILED, place=place)
    return Answer(when, returns=returned(call.result), place=place)


def returned(text: str) -> Any:
    """A logged result as ``returns``: JSON data when Scenarist would send it back as the
    very same text (readable, and exact), else the text."""
    if not text.lstrip().startswith(("{", "[")):
        return text
    try:
        data = json.loads(text)
    except (ValueError, RecursionError):
        return text
    if isinstance(data, dict | list) and json.dumps(data, ensure_ascii=False) == text:
        return data
    return text


def _shown(call: LoggedCall) -> str:
    text = call.result if call.result is not None else "nothing"
    return json.dumps(text[:80] + ("…" if len(text) > 80 else ""), ensure_ascii=False)


# ---- input_schema -------------------------------------------------------------------------


def _schema(d: ToolDef, calls: Sequence[LoggedCall]
            ) -> tuple[dict[str, Any] | None, bool, str]:
    """The tool's input_schema, whether it was inferred, and a note on it."""
    if d.schema is not None:
        problem = _schema_problem(d.schema)
        if problem is None:
            return dict(d.schema), False, ""
        note = f"the logged parameters are not a valid JSON Schema ({problem}): "
    else:
        note = ""
    args = [c.args for c in calls if c.args is not None]
    if not any(args):
        return None, False, ""
    return infer(args), True, note + "inferred from the arguments it was called with"


def _schema_problem(schema: Any) -> str | None:
    if not isinstance(schema, Mapping):
        return "not a mapping"
    problem = schema_problem(schema)
    return None if problem is None else problem.message


def infer(args: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """An input_schema from the arguments of calls: each argument's type (or types) from
    its values, required when every call gave it."""
    types: dict[str, list[str]] = {}
    for a in args:
        for k, v in a.items():
            kinds = types.setdefault(k, [])
            kind = json_type(v)
            if kind not in kinds:
                kinds.append(kind)
    props: dict[str, Any] = {}
    for k, kinds in types.items():
        if "integer" in kinds and "number" in kinds:
            kinds.remove("integer")
        props[k] = {"type": kinds[0] if len(kinds) == 1 else kinds}
    required = [k for k in types if all(k in a for a in args)]
    schema: dict[str, Any] = {"type": "object", "properties": props}
    if required:
        schema["required"] = required
    return schema


def json_type(v: Any) -> str:
    if v is None:
        return "null"
    for name, kind in _TYPES:
        if isinstance(v, kind):
            return name
    return "string"


# ---- --world ------------------------------------------------------------------------------

_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")  # read as {{ args.NAME }}
_VERBS = ("get_", "list_", "find_", "search_", "read_", "fetch_", "lookup_", "show_",
          "query_", "load_")


def _table(tool: FakeTool, taken: set[str]) -> Table | None:
    """The world table a read tool's results make, when the world answers every logged
    call exactly as logged; None otherwise."""
    if tool.action not in (None, "read") or tool.confirm or not tool.calls:
        return None
    rows: dict[str, dict[str, Any]] = {}
    one = None
    answers: list[tuple[dict[str, Any], list[dict[str, Any]], str]] = []
    for call in tool.calls:
        if call.result is None or call.error or call.args is None:
            return None
        try:
            data = json.loads(call.result)
        except (ValueError, RecursionError):
            return None
        single = isinstance(data, dict)
        if one is not None and one != single:
            return None
        one = single
        got = [data] if single else data
        if not isinstance(got, list) or not all(isinstance(r, dict) and "id" in r
                                                 for r in got):
            return None
        if single and not got:
            return None
        for r in got:
            key = json.dumps(r["id"], ensure_ascii=False)
            if rows.setdefault(key, r) != r:
                return None  # one row seen two ways: not one table
        answers.append((dict(call.args), got, call.result))
    table_rows = list(rows.values())
    where = _where(answers, table_rows)
    if where is None:
        return None
    name = _table_name(tool.name, taken)
    table = Table(name, table_rows, where, bool(one))
    if not all(_world_says(table, args) == text for args, _, text in answers):
        return None
    taken.add(name)
    return table


def _where(answers: Sequence[tuple[dict[str, Any], list[dict[str, Any]], str]],
           rows: Sequence[Mapping[str, Any]]) -> dict[str, str] | None:
    """Which column each argument picks rows by: a column every returned row holds the
    argument's value in (the one of the same name first)."""
    names = list(answers[0][0]) if answers else []
    if any(list(a) != names for a, _, _ in answers) or not all(
            _IDENTIFIER.match(k) for k in names):
        return None
    columns = list(dict.fromkeys(c for r in rows for c in r))
    out: dict[str, str] = {}
    for arg in names:
        candidates = [arg, *(c for c in columns if c != arg)]
        for column in candidates:
            if column in out:
                continue
            if all(all(column in r and r[column] == a[arg] for r in got)
                   for a, got, _ in answers if got):
                out[column] = arg
                break
        else:
            return None
    return out


def _world_says(table: Table, args: Mapping[str, Any]) -> str:
    """What Scenarist's world answers this call with (its own code: exact by construction)."""
    # why: the world is loaded only with --world (as a suite loads it only when it has one)
    from ..compiler.templates import data_template
    from ..compiler.world import World
    from ..model import TableAction, WorldTable

    where = tuple((column, data_template("{{ args." + arg + " }}"))
                  for column, arg in table.where.items())
    action = TableAction(table.name, _NOWHERE, where=where, one=table.one)
    spec = ToolSpec("t", "", {}, "read", False, None, _NOWHERE, table=action)
    world = World([WorldTable(table.name, tuple(table.rows), _NOWHERE, {})])
    text, _ = world.act(spec, dict(args), dt.datetime.now(dt.UTC))
    return text


def _table_name(tool: str, taken: set[str]) -> str:
    base = tool
    for verb in _VERBS:
        if base.startswith(verb) and len(base) > len(verb):
            base = base[len(verb):]
            break
    name = base
    n = 2
    while name in taken:
        name = f"{base}_{n}"
        n += 1
    return name
