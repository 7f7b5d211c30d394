"""The scenario form: a scenario's text shown as plain fields, and the form's edits written
back into the text — with ruamel.yaml's round trip and :mod:`.yamltext`'s write-back, so
only the lines an edit changes change, and every comment, key order and quoting style the
person did not touch stays as it was.

:func:`form_of` reads the text into the form's model (a JSON-ready dict the page draws);
:func:`apply` makes a list of edits (:data:`OPS`) and returns the new text. Neither
decides whether the scenario is right: the studio lints the result as it lints what the
person types. What the form shows of the suite — its tools, its model targets, its world's
tables — comes in a :class:`SuiteContext`.

A check's settings are fields generated from the check registry (:mod:`.fields`); a
``world`` check is built from the suite's own tables, rows and columns; a scenario's own
world tables are grids (:mod:`.tables`). What the form cannot say (a check written as a
list of mappings, a history, attachments, cases) stays as written and the model says so
(``yaml_only``).
"""

from __future__ import annotations

import functools
import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..checks import REGISTRY
from ..compiler.moment import MomentError, parse_moment, say
from ..compiler.vocabulary import check_takes
from ..source.schemawords import CHECK_MODIFIERS
from .fields import Shape, describe, fits, shortest, values_of
from .tables import TABLE_OPS, cell_text, edit_inline, inline_model
from .yamltext import (
    FormError,
    YamlText,
    checked_op,
    flow_map,
    flow_seq,
    flow_text,
    flow_value,
    insert,
    keep_style,
    plain,
    rename,
)

__all__ = ["OPS", "FormError", "Scenario", "SuiteContext", "apply", "check_takes", "form_of"]

TURN_KINDS = ("say", "confirm", "cancel")
FORM_KEYS = ("id", "description", "given", "when", "then", "runs", "min_pass",
             "min_pass_rate")
GIVEN_KEYS = ("at", "system", "tools", "world")


@dataclass(frozen=True, slots=True)
class SuiteContext:
    """What the scenario form shows of the suite: its tool library, its targets that can
    play a simulated user (openai, replay), and its world's tables (name → columns and
    row ids)."""

    tools: tuple[str, ...] = ()
    model_targets: tuple[str, ...] = ()
    tables: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = field(default_factory=dict)


class Scenario(YamlText):
    """A scenario's text, loaded for the form."""

    def __init__(self, text: str) -> None:
        super().__init__(text, "a scenario")

    def dump(self) -> str:
        return self.text()


@functools.cache
def shape_of(name: str) -> Shape:
    """The form's shape of a registered check (yaml for an unknown one)."""
    check = REGISTRY.get(name)
    return describe(name, check.schema) if check is not None else Shape("yaml")


# ---------------------------------------------------------------- the form's model


def form_of(text: str, library: Sequence[str] | SuiteContext = (), base: str = ""
            ) -> dict[str, Any]:
    """What the form shows of ``text``. ``base``: the scenario's folder in the suite (for
    the table files it names)."""
    suite = library if isinstance(library, SuiteContext) else SuiteContext(tuple(library))
    data = Scenario(text).data
    given = data.get("given")
    given = given if isinstance(given, Mapping) else {}
    listed = given.get("tools")
    chosen: list[Any] = listed if isinstance(listed, list) else []
    named = [t for t in chosen if isinstance(t, str)]
    inline = [str(t.get("name")) for t in chosen if isinstance(t, Mapping)]
    tools = [{"name": n, "on": n in named} for n in suite.tools]
    tools += [{"name": n, "on": True} for n in named if n not in suite.tools]
    moment = _text(given.get("at"))
    world = given.get("world")
    tables = []
    if isinstance(world, Mapping):
        for name, value in world.items():
            model = inline_model(str(name), value)
            if model.get("file"):
                model["path"] = posixpath.normpath(posixpath.join(base, model["file"]))
            tables.append(model)
    yaml_only = [str(k) for k in data if str(k) not in FORM_KEYS]
    yaml_only += [f"given.{k}" for k in given if str(k) not in GIVEN_KEYS]
    if inline:
        yaml_only.append("given.tools (the tools written in this file)")
    checks = _checks_of(data.get("then"))
    if any(c["shape"] == "yaml" for c in checks):
        yaml_only.append("then (checks the form shows as written)")
    return {
        "description": _text(data.get("description")),
        "moment": moment,
        "moment_words": _moment_words(moment),
        "system": _text(given.get("system")),
        "runs": _number(data.get("runs")),
        "min_pass": _number(data.get("min_pass")),
        "min_pass_rate": _number(data.get("min_pass_rate")),
        "tools": tools,
        "inline_tools": inline,
        "world": tables,
        "when": _when_of(data.get("when")),
        "checks": checks,
        "yaml_only": yaml_only,
    }


def _number(value: Any) -> int | float | None:
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def _moment_words(text: str | None) -> str | None:
    """The moment as the agent is told it: ``Tuesday 29 September 2026, 10:00 (UTC-03:00)``
    (None when it is not a moment: lint says why)."""
    if text is None:
        return None
    try:
        return say(parse_moment(text))
    except MomentError:
        return None


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def _when_of(when: Any) -> dict[str, Any]:
    if when is None:
        return {"kind": "message", "message": ""}
    if isinstance(when, str):
        return {"kind": "message", "message": str(when)}
    if isinstance(when, list):
        return {"kind": "turns", "turns": [_turn_of(t) for t in when]}
    if isinstance(when, Mapping) and isinstance(when.get("user"), Mapping):
        user = when["user"]
        return {"kind": "user", "user": {
            "goal": _text(user.get("goal")) or "", "persona": _text(user.get("persona")) or "",
            "max_turns": _number(user.get("max_turns")), "target": _text(user.get("target"))}}
    return {"kind": "other"}


def _turn_of(turn: Any) -> dict[str, Any]:
    if isinstance(turn, str):
        return {"kind": "say", "value": str(turn), "checks": []}
    if isinstance(turn, Mapping):
        kind = next((k for k in TURN_KINDS if k in turn), None)
        return {"kind": kind or "other", "value": _text(turn.get(kind)) if kind else None,
                "checks": _checks_of(turn.get("then"))}
    return {"kind": "other", "value": None, "checks": []}


def _checks_of(then: Any) -> list[dict[str, Any]]:
    return [_check_of(item) for item in then] if isinstance(then, list) else []


def _check_of(item: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"check": "", "takes": "other", "value": None, "yaml": "",
                           "always": False, "name": "", "shape": "yaml", "values": None,
                           "world": []}
    if isinstance(item, str):
        name, param = str(item), True
    elif isinstance(item, Mapping):
        keys = [k for k in item if k not in CHECK_MODIFIERS]
        out["always"] = item.get("always") is True
        out["name"] = _text(item.get("name")) or ""
        if len(keys) != 1:
            out["yaml"] = flow_text(item)
            return out
        name, param = str(keys[0]), item[keys[0]]
    else:
        out["yaml"] = flow_text(item)
        return out
    shape = shape_of(name)
    out["check"] = name
    out["takes"] = check_takes(name)
    if isinstance(item, str) and shape.kind != "flag":
        out["yaml"] = "(no value)"
        out["takes"] = "other"
        return out
    if shape.kind == "world":
        entries = _world_entries(param)
        if entries is None:
            out["yaml"] = flow_text(param)
        else:
            out.update(shape="world", world=entries)
        return out
    values = values_of(shape, plain(param))
    if values is None:
        out["yaml"] = flow_text(param)
        out["takes"] = "other"
        return out
    out.update(shape=shape.kind, values=values)
    if out["takes"] == "text":
        main = values.get(shape.main or "")
        if isinstance(main, str):
            out["value"] = main
        else:
            out["takes"] = "other"
    return out


def _world_entries(param: Any) -> list[dict[str, Any]] | None:
    """A world check's conditions, one per column (or per absent row); None when it is
    written in a way the form cannot show."""
    if not isinstance(param, Mapping):
        return None
    out: list[dict[str, Any]] = []
    for table, rows in param.items():
        if not isinstance(rows, Mapping):
            return None
        for row, cols in rows.items():
            if cols == "absent":
                out.append({"table": str(table), "row": str(row), "column": "",
                            "value": "", "absent": True})
            elif isinstance(cols, Mapping):
                for column, value in cols.items():
                    out.append({"table": str(table), "row": str(row), "column": str(column),
                                "value": cell_text(value), "absent": False})
            else:
                return None
    return out


# ---------------------------------------------------------------- the form's edits

# Every edit the page sends, with the fields it takes. ``list`` names a list of checks:
# null for the scenario's ``then``, a turn's index for that turn's ``then``.
OPS: dict[str, tuple[str, ...]] = {
    "description": ("value",),
    "moment": ("value",),
    "system": ("value",),
    "runs": ("value",),
    "min_pass": ("value",),
    "min_pass_rate": ("value",),
    "tool": ("name", "on"),
    "message": ("value",),
    "turn": ("index", "kind", "value"),
    "add_turn": (),
    "remove_turn": ("index",),
    "move_turn": ("index", "to"),
    "user": ("key", "value"),
    "messages": (),
    "add_check": ("list", "check"),
    "remove_check": ("list", "index"),
    "set_check": ("list", "index", "check"),
    "check_value": ("list", "index", "value"),
    "check_field": ("list", "index", "key", "value"),
    "check_world": ("list", "index", "entries"),
    "check_always": ("list", "index", "value"),
    "check_name": ("list", "index", "value"),
    "table": ("action", "table"),
}


def apply(text: str, edits: Sequence[Mapping[str, Any]],
          suite: SuiteContext | None = None) -> str:
    """``text`` with ``edits`` made (each a dict with ``op`` and the fields :data:`OPS`
    names); FormError for an edit that does not fit the text."""
    if not edits:
        return text
    doc = Scenario(text)
    for edit in edits:
        _apply_one(doc.data, edit, suite or SuiteContext())
    return doc.text()


def _apply_one(data: CommentedMap, edit: Mapping[str, Any], suite: SuiteContext) -> None:
    op = checked_op(edit, OPS)
    match op:
        case "description":
            _set_text(data, "description", _str(edit["value"]), after=("id",), optional=True)
        case "moment":
            _set_text(_given(data), "at", _str(edit["value"]), after=())
        case "system":
            _set_text(_given(data), "system", _str(edit["value"]), after=("at",),
                      optional=True)
        case "runs" | "min_pass" | "min_pass_rate":
            _set_number(data, op, edit["value"])
        case "tool":
            _set_tool(data, _str(edit["name"]), bool(edit["on"]))
        case "message":
            _set_text(data, "when", _str(edit["value"]), after=("given", "description", "id"))
        case "turn":
            _set_turn(data, _index(edit["index"]), _str(edit["kind"]), _str(edit["value"]))
        case "add_turn":
            turns = _turns(data)
            turns.append(CommentedMap([("say", DoubleQuotedScalarString(""))]))
        case "remove_turn":
            turns = _turns(data)
            del turns[_at(turns, edit["index"])]
        case "move_turn":
            turns = _turns(data)
            item = turns.pop(_at(turns, edit["index"]))
            turns.insert(max(0, min(_index(edit["to"]), len(turns))), item)
        case "user":
            _set_user(data, _str(edit["key"]), edit["value"], suite)
        case "messages":
            if "when" in data and isinstance(data["when"], Mapping):
                data["when"] = DoubleQuotedScalarString("")
        case "add_check":
            _checks(data, edit["list"], create=True).append(
                _new_check(_str(edit["check"]), data, suite))
        case "remove_check":
            checks = _checks(data, edit["list"])
            del checks[_at(checks, edit["index"])]
        case "set_check":
            _set_check(data, edit, suite)
        case "check_value":
            checks = _checks(data, edit["list"])
            i = _at(checks, edit["index"])
            name = _check_key(checks, i)
            shape = shape_of(name)
            _set_field(checks, i, name, shape, shape.main or "", _str(edit["value"]))
        case "check_field":
            checks = _checks(data, edit["list"])
            i = _at(checks, edit["index"])
            name = _check_key(checks, i)
            _set_field(checks, i, name, shape_of(name), _str(edit["key"]), edit["value"])
        case "check_world":
            checks = _checks(data, edit["list"])
            i = _at(checks, edit["index"])
            if _check_key(checks, i) != "world":
                raise FormError(f"check {i + 1} is not a world check")
            _set_param(checks, i, "world", _world_param(edit["entries"]))
        case "check_always" | "check_name":
            checks = _checks(data, edit["list"])
            i = _at(checks, edit["index"])
            key = "always" if op == "check_always" else "name"
            value = edit["value"]
            if (key == "always" and value is True) or (key == "name" and _str(value)):
                item = _as_mapping(checks, i)
                item[key] = True if key == "always" else keep_style(item.get(key),
                                                                     _str(value))
            elif isinstance(checks[i], CommentedMap) and key in checks[i]:
                del checks[i][key]
        case "table":
            action = _str(edit["action"])
            if action not in TABLE_OPS:
                raise FormError(f"unknown table edit {action!r}")
            given = _given(data)
            world = given.get("world")
            if world is None:
                if action != "add_table":
                    raise FormError("this scenario has no world tables of its own")
                world = CommentedMap()
                insert(given, "world", world, ("tools", "system", "at"))
            if not isinstance(world, CommentedMap):
                raise FormError("'given.world' is not a mapping; change it in the YAML tab")
            edit_inline(world, {**edit, "op": action})
            if not world:
                del given["world"]


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise FormError(f"the form sent {value!r} where it should send text")
    return value


def _index(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise FormError(f"the form sent {value!r} where it should send a number")
    return value


def _at(items: list[Any], index: Any) -> int:
    i = _index(index)
    if not 0 <= i < len(items):
        raise FormError(f"there is no item {i + 1} here (there are {len(items)})")
    return i


def _set_text(mapping: CommentedMap, key: str, value: str, after: Sequence[str],
              optional: bool = False) -> None:
    if optional and not value.strip():
        if key in mapping:
            del mapping[key]
        return
    if key in mapping and (isinstance(mapping[key], str) or mapping[key] is None):
        mapping[key] = keep_style(mapping[key], value)
    elif key in mapping:
        raise FormError(f"'{key}' is not a text here; change it in the YAML tab")
    else:
        insert(mapping, key, keep_style(None, value) if key != "at" else value, after)


def _set_number(data: CommentedMap, key: str, value: Any) -> None:
    if value is None or value == "":
        if key in data:
            del data[key]
        return
    if isinstance(value, str):
        try:
            value = float(value) if key == "min_pass_rate" else int(value)
        except ValueError:
            raise FormError(f"{key} is a number; '{value}' is not one") from None
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise FormError(f"the form sent {value!r} where it should send a number")
    if key != "min_pass_rate" and value != int(value):
        raise FormError(f"{key} is a whole number of runs, not {value}")
    value = float(value) if key == "min_pass_rate" else int(value)
    other = {"min_pass": "min_pass_rate", "min_pass_rate": "min_pass"}.get(key)
    if other is not None and other in data:
        rename(data, other, key, value)  # one or the other, at its place
    elif key in data:
        data[key] = value
    else:
        place = ("runs", "then", "when") if key != "runs" else ("then", "when")
        insert(data, key, value, place)


def _given(data: CommentedMap) -> CommentedMap:
    given = data.get("given")
    if given is None:
        given = CommentedMap()
        insert(data, "given", given, ("description", "tags", "id"))
    if not isinstance(given, CommentedMap):
        raise FormError("'given' is not a mapping; change it in the YAML tab")
    return given


def _set_tool(data: CommentedMap, name: str, on: bool) -> None:
    given = _given(data)
    tools = given.get("tools")
    if tools is None:
        if not on:
            return
        tools = flow_seq([])
        insert(given, "tools", tools, ("at",))
    if not isinstance(tools, list):
        raise FormError("'given.tools' is not a list; change it in the YAML tab")
    present = [i for i, t in enumerate(tools) if isinstance(t, str) and t == name]
    if on and not present:
        tools.append(name)
    elif not on:
        for i in reversed(present):
            del tools[i]
        if not tools:
            del given["tools"]


def _turns(data: CommentedMap) -> CommentedSeq:
    when = data.get("when")
    if isinstance(when, CommentedSeq):
        return when
    if when is None or isinstance(when, str):
        turns = CommentedSeq()
        if when is not None and str(when).strip():
            turns.append(when)
        if "when" in data:
            data["when"] = turns
        else:
            insert(data, "when", turns, ("given", "description", "id"))
        return turns
    raise FormError("'when' is a simulated user here; change it in the YAML tab")


def _set_turn(data: CommentedMap, index: int, kind: str, value: str) -> None:
    if kind not in TURN_KINDS:
        raise FormError(f"a turn is {', '.join(TURN_KINDS)}, not {kind!r}")
    turns = _turns(data)
    i = _at(turns, index)
    turn = turns[i]
    if isinstance(turn, str):
        if kind == "say":
            turns[i] = keep_style(turn, value)
            return
        turn = turns[i] = flow_map([("say", turn)])
    if not isinstance(turn, CommentedMap):
        raise FormError(f"turn {i + 1} is not a text or a mapping; change it in the YAML tab")
    old = next((k for k in TURN_KINDS if k in turn), None)
    if old is None:
        turn.insert(0, kind, keep_style(None, value))
    elif old == kind:
        turn[kind] = keep_style(turn[kind], value)
    else:
        rename(turn, old, kind, keep_style(turn[old], value))


USER_KEYS = ("goal", "persona", "target", "max_turns")


def _set_user(data: CommentedMap, key: str, value: Any, suite: SuiteContext) -> None:
    """A setting of the simulated user; the first one set makes the person a simulated
    user (its target: the suite's first model target)."""
    if key not in USER_KEYS:
        raise FormError(f"a simulated user has {', '.join(USER_KEYS)}, not {key!r}")
    when = data.get("when")
    if not (isinstance(when, CommentedMap) and isinstance(when.get("user"), CommentedMap)):
        user = CommentedMap([("goal", DoubleQuotedScalarString(""))])
        if suite.model_targets:
            user["target"] = suite.model_targets[0]
        when = CommentedMap([("user", user)])
        if "when" in data:
            data["when"] = when
        else:
            insert(data, "when", when, ("given", "description", "id"))
    user = when["user"]
    if key == "max_turns":
        if value in (None, ""):
            if key in user:
                del user[key]
            return
        try:
            n = int(value)
        except (TypeError, ValueError):
            raise FormError(f"max_turns is a number of messages; '{value}' is not one") from None
        user[key] = n
        return
    text = _str(value)
    if key == "persona" and not text.strip():
        if key in user:
            del user[key]
        return
    if key in user:
        user[key] = keep_style(user[key], text)
    else:
        user[key] = keep_style(None, text)


def _checks(data: CommentedMap, which: Any, create: bool = False) -> CommentedSeq:
    if which is None:
        owner = data
    else:
        turns = _turns(data)
        i = _at(turns, which)
        if isinstance(turns[i], str):
            turns[i] = CommentedMap([("say", turns[i])])  # then: follows, in block style
        owner = turns[i]
        if not isinstance(owner, CommentedMap):
            raise FormError(f"turn {i + 1} is not a mapping; change it in the YAML tab")
    then = owner.get("then")
    if then is None and create:
        then = CommentedSeq()
        if "then" in owner:
            owner["then"] = then
        elif which is None:
            insert(owner, "then", then, ("when", "given", "description", "id"))
        else:
            owner["then"] = then
    if not isinstance(then, CommentedSeq):
        raise FormError("there is no list of checks here ('then')")
    return then


def _scenario_tools(data: CommentedMap) -> list[str]:
    given = data.get("given")
    tools = given.get("tools") if isinstance(given, Mapping) else None
    out = []
    for t in tools if isinstance(tools, list) else []:
        if isinstance(t, str):
            out.append(str(t))
        elif isinstance(t, Mapping) and isinstance(t.get("name"), str):
            out.append(str(t["name"]))
    return out


def _tables(data: CommentedMap, suite: SuiteContext
            ) -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """The world's tables a check of this scenario may name: the suite's, and the
    scenario's own (which replace the suite's of the same name)."""
    out = dict(suite.tables)
    given = data.get("given")
    world = given.get("world") if isinstance(given, Mapping) else None
    if isinstance(world, Mapping):
        for name, value in world.items():
            model = inline_model(str(name), value)
            if model["editable"]:
                out[str(name)] = (tuple(model["columns"]), tuple(model["ids"]))
    return out


def _new_check(name: str, data: CommentedMap, suite: SuiteContext) -> Any:
    """A new check, its settings empty or chosen from this scenario's own tools and
    world — never an example from another domain."""
    if name not in REGISTRY:
        raise FormError(f"there is no check '{name}'; `scenarist checks` lists them")
    shape = shape_of(name)
    if shape.kind == "flag":
        return name
    if shape.kind == "world":
        return CommentedMap([(name, _new_world(data, suite))])
    if shape.kind != "fields":
        return CommentedMap([(name, DoubleQuotedScalarString(""))])
    tools = _scenario_tools(data)
    values: dict[str, Any] = {}
    for f in shape.fields:
        if not (f.required or f.key == shape.main):
            continue
        match f.kind:
            case "tool":
                values[f.key] = tools[0] if tools else ""
            case "tools":
                values[f.key] = tools[:1]
            case "text" | "texts":
                values[f.key] = ""
            case "bool":
                values[f.key] = False
            case "enum":
                values[f.key] = f.options[0]
            case "rows" | "map":
                values[f.key] = [] if f.kind == "rows" else {}
            case _:
                values[f.key] = 0
    return CommentedMap([(name, _yaml_param(shortest(shape, values)))])


def _new_world(data: CommentedMap, suite: SuiteContext) -> CommentedMap:
    tables = _tables(data, suite)
    for table, (columns, ids) in tables.items():
        if ids and ids[0]:
            column = next((c for c in columns if c != "id"), "id")
            return _world_param([{"table": table, "row": ids[0], "column": column,
                                  "value": "", "absent": False}])
    raise FormError("there is no world table with rows yet: add one under World in Suite "
                    "settings (or in this scenario's world), then add the check")


def _yaml_param(value: Any, top: bool = True) -> Any:
    """A setting's value as the YAML keeps it: lists and mappings on one line, their texts
    quoted only when they must be (a check's own text in double quotes, as the first
    studio wrote it)."""
    if isinstance(value, str):
        return keep_style(None, value) if top else flow_value(value)
    if isinstance(value, list):
        return flow_seq([_yaml_param(v, False) for v in value])
    if isinstance(value, Mapping):
        return flow_map([(str(k), _yaml_param(v, False)) for k, v in value.items()])
    return value


def _as_mapping(checks: CommentedSeq, i: int) -> CommentedMap:
    """Item ``i`` as a mapping (``- non_empty`` becomes ``- non_empty: true``)."""
    item = checks[i]
    if isinstance(item, str):
        item = checks[i] = flow_map([(str(item), True)])
    if not isinstance(item, CommentedMap):
        raise FormError(f"check {i + 1} is not a check the form can change; use the YAML tab")
    return item


def _check_key(checks: CommentedSeq, i: int) -> str:
    item = checks[i]
    if isinstance(item, str):
        return str(item)
    if not isinstance(item, CommentedMap):
        raise FormError(f"check {i + 1} is not a check the form can change; use the YAML tab")
    keys = [k for k in item if k not in CHECK_MODIFIERS]
    if len(keys) != 1:
        raise FormError("this item holds no single check; change it in the YAML tab")
    return str(keys[0])


def _set_param(checks: CommentedSeq, i: int, name: str, param: Any) -> None:
    item = checks[i]
    if isinstance(item, str):
        checks[i] = flow_map([(name, param)]) if param is not True else name
        return
    item[name] = param


def _set_field(checks: CommentedSeq, i: int, name: str, shape: Shape, key: str,
               value: Any) -> None:
    """One setting of check ``i`` set (``None``, ``false`` or ``""`` for a setting that is
    not required: removed), written in the shortest form the check allows."""
    if shape.kind != "fields":
        raise FormError(f"the check '{name}' has no settings the form can change; use the "
                        "YAML tab")
    f = next((x for x in shape.fields if x.key == key), None)
    if f is None:
        raise FormError(f"the check '{name}' has no setting '{key}'")
    item = checks[i]
    old = item.get(name) if isinstance(item, CommentedMap) else True
    values = values_of(shape, plain(old))
    if values is None:
        raise FormError(f"check {i + 1} is written in a way the form cannot change; use the "
                        "YAML tab")
    if f.kind == "integer" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if f.kind == "number" and isinstance(value, str):
        try:
            value = float(value) if value.strip() else None
        except ValueError:
            raise FormError(f"{f.label} is a number; '{value}' is not one") from None
    empty = value is None or (value is False and f.kind == "bool") or \
        (value == "" and f.kind in ("number", "integer"))
    if empty and not (f.required or key == shape.main):
        values.pop(key, None)
    elif not fits(f, value):
        raise FormError(f"{f.label} of {name} takes {f.kind}, not {value!r}")
    else:
        values[key] = value
    new = shortest(shape, values)
    if isinstance(old, CommentedMap) and isinstance(new, dict):
        for k in list(old):  # in place: keys keep their order, values their quotes
            if k not in new:
                del old[k]
        for k, v in new.items():
            old[k] = _restyled(old.get(k), v)
        return
    if isinstance(old, str) and isinstance(new, str):
        item[name] = keep_style(old, new)
        return
    if isinstance(old, CommentedMap) and isinstance(new, str) and shape.main:
        was = old.get(shape.main)  # back to the short form, in the quotes it had
        item[name] = keep_style(was, new) if isinstance(was, str) and \
            not isinstance(was, DoubleQuotedScalarString) else flow_value(new)
        return
    _set_param(checks, i, name, _yaml_param(new))


def _restyled(old: Any, new: Any) -> Any:
    if isinstance(new, str):
        return keep_style(old, new) if isinstance(old, str) else flow_value(new)
    if isinstance(new, Mapping) and isinstance(old, CommentedMap):
        for k in list(old):
            if k not in new:
                del old[k]
        for k, v in new.items():
            old[k] = _restyled(old.get(k), v)
        return old
    return _yaml_param(new)


def _world_param(entries: Any) -> CommentedMap:
    """A world check's parameter from its conditions: ``{table: {row: {column: value}}}``
    (``row: absent`` for a row that must not exist), one line."""
    if not isinstance(entries, list) or not entries:
        raise FormError("a world check needs at least one row to look at")
    out: dict[str, dict[str, Any]] = {}
    for e in entries:
        if not isinstance(e, Mapping):
            raise FormError("each condition of a world check names a table, a row and a column")
        table, row = _str(e.get("table")), _str(e.get("row"))
        if not table or not row:
            raise FormError("choose the table and the row the check looks at")
        rows = out.setdefault(table, {})
        if e.get("absent") is True:
            rows[row] = "absent"
            continue
        column = _str(e.get("column"))
        if not column:
            raise FormError("choose the column the check looks at (or say the row is absent)")
        cols = rows.get(row)
        if not isinstance(cols, dict):
            cols = rows[row] = {}
        cols[column] = _str(e.get("value"))
    return flow_map([(t, flow_map([(r, c if c == "absent" else flow_map(
        [(k, _cell(v)) for k, v in c.items()])) for r, c in rows.items()]))
        for t, rows in out.items()])


def _cell(text: str) -> Any:
    """A value typed for a world check's column: a number stays a number (the check
    compares ``7`` and ``"7"`` alike), anything else is text."""
    try:
        n = int(text)
        return n if str(n) == text else flow_value(text)
    except ValueError:
        return flow_value(text)


def _set_check(data: CommentedMap, edit: Mapping[str, Any], suite: SuiteContext) -> None:
    """Check ``index`` becomes the check ``check``, keeping each setting the new check
    takes in the same kind (``contains`` → ``not_contains`` keeps the text and its
    ignore_case; ``calls`` → ``not_calls`` keeps the tool and the arguments)."""
    checks = _checks(data, edit["list"])
    i = _at(checks, edit["index"])
    name = _str(edit["check"])
    new = _new_check(name, data, suite)
    item = checks[i]
    if isinstance(item, str) or not isinstance(item, CommentedMap):
        if isinstance(new, CommentedMap):
            new = flow_map(list(new.items()))  # on the line of the item it replaces
        checks[i] = new
        return
    old = _check_key(checks, i)
    if old == name:
        return
    kept = _carried(shape_of(old), item[old], shape_of(name))
    if isinstance(new, str):
        param: Any = True
    elif kept is not None:
        param = kept
    else:
        param = new[name]
    rename(item, old, name, param)
    if isinstance(new, str) and len(item) == 1:
        comment = item.ca.items.get(name)
        checks[i] = name  # a flag check alone: written as its name, as people write it
        if comment and comment[2] is not None:
            checks.ca.items[i] = [comment[2], None, None, None]


def _family(kind: str) -> str:
    """Kinds of setting that hold the same kind of value: a text and a list of texts, a
    tool and a list of tools."""
    return {"texts": "text", "tools": "tool", "integer": "number"}.get(kind, kind)


def _carried(old: Shape, param: Any, new: Shape) -> Any:
    """The old check's parameter as the new check takes it, when it takes its settings in
    the same kinds (None: start afresh)."""
    if old.kind != "fields" or new.kind != "fields":
        return None
    values = values_of(old, plain(param))
    if not values:
        return None
    kinds = {f.key: f for f in new.fields}
    was = {f.key: f for f in old.fields}
    out: dict[str, Any] = {}
    for key, value in values.items():
        target = new.main if key == old.main else key
        f = kinds.get(target) if target is not None else None
        if target is None or f is None or not fits(f, value) or \
                _family(f.kind) != _family(was[key].kind):
            continue
        out[target] = value
    if new.main is not None and new.main not in out:
        return None
    if isinstance(param, str) and set(out) == {new.main} and "string" in new.short:
        return param  # the same text, in the same quotes
    return _yaml_param(shortest(new, out))
