"""Suite settings: ``scenarist.yaml`` as a form — its targets, defaults, world tables and
tool library — edited the way the scenario form edits a scenario (:mod:`.yamltext`: only
the lines an edit changes change; comments, key order and quotes stay).

For a tool, the form asks what an author knows — its name, what it does, its arguments
(a name, a type, whether it is required), and, for a tool that acts on a world table,
the table, the action, which rows (**Where**) and what it writes (**Set**) — and writes
the JSON Schema (``input_schema``) and the table keys (``table``, ``action``, ``where``,
``set`` or ``row``, ``confirm``) for them. **Where** and **Set** are typed as
``column = value`` pairs, separated by commas; a value that is the name of one of the
tool's arguments stands for what the agent sends in it (``id = card_id`` is
``where: {id: "{{ args.card_id }}"}``); in quotes it is the text itself.

:func:`form_of` gives the model the page draws; :func:`apply` makes the edits (:data:`OPS`).
What the form does not show (the judge, redaction, named checks, the history, ``x-``
keys...) stays as written and the model lists it (``yaml_only``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString

from ..source.load import resolve_plain
from ..source.resources import load_schema
from .fields import Field, field_of, fits, words
from .tables import TABLE_OPS, edit_inline, inline_model
from .yamltext import (
    FormError,
    YamlText,
    checked_op,
    filled,
    flow_map,
    flow_seq,
    flow_value,
    insert,
    rename,
)

FORM_KEYS = ("targets", "defaults", "world", "tools")
ACTIONS = ("read", "create", "update", "delete")
ARG_TYPES = ("string", "number", "integer", "boolean")
DEFAULT_KEYS = ("target", "runs", "min_pass", "min_pass_rate", "concurrency", "max_steps")
TABLE_KEYS = ("table", "where", "set", "row", "fields", "one")
_ARG = re.compile(r"^\{\{\s*args\.([A-Za-z_][A-Za-z0-9_]*)\s*\}\}$")


@functools.cache
def target_kinds() -> dict[str, tuple[str, ...]]:
    """Each ``kind:`` of target, with the keys it requires besides ``kind`` — read from
    the suite's JSON Schema."""
    target = load_schema("suite.schema.json")["$defs"]["target"]
    kinds = {str(k): () for k in target["properties"]["kind"]["enum"]}
    out: dict[str, tuple[str, ...]] = dict(kinds)
    for rule in target.get("allOf", []):
        kind = rule.get("if", {}).get("properties", {}).get("kind", {}).get("const")
        if kind in out:
            out[kind] = tuple(str(k) for k in rule.get("then", {}).get("required", [])
                              if k != "kind")
    return out


HANDLED = ("description", "input_schema", "action", "confirm", "returns", "table", "where",
           "set", "row")


@functools.cache
def tool_settings() -> tuple[Field, ...]:
    """The settings of a library tool the form shows as plain fields beyond the ones it
    knows by name — every key of the suite schema's ``library_tool`` whose value is text,
    a number, yes/no, a choice or a list of texts (a key added to the schema tomorrow
    gets its field with no change here); the others stay in the YAML tab."""
    props = load_schema("suite.schema.json")["$defs"]["library_tool"]["properties"]
    out = []
    for key, sub in props.items():
        if key in HANDLED or not isinstance(sub, Mapping):
            continue
        found = field_of(key, sub, str(sub.get("title") or words(key)))
        if found is None or found.kind in ("tool", "tools"):
            continue
        out.append(found)
    return tuple(out)


@functools.cache
def _kind_keys(kind: str) -> frozenset[str] | None:
    """The keys a target of ``kind`` may have (None: any)."""
    target = load_schema("suite.schema.json")["$defs"]["target"]
    for rule in target.get("allOf", []):
        if rule.get("if", {}).get("properties", {}).get("kind", {}).get("const") == kind:
            props = rule.get("then", {}).get("properties")
            return frozenset(props) if isinstance(props, Mapping) else None
    return None


class Suite(YamlText):
    """``scenarist.yaml``'s text, loaded for the form."""

    def __init__(self, text: str) -> None:
        super().__init__(text, "the suite")


# ---------------------------------------------------------------- the model


def form_of(text: str) -> dict[str, Any]:
    """What Suite settings shows of ``text``."""
    data = Suite(text).data
    targets = data.get("targets")
    defaults = data.get("defaults")
    defaults = defaults if isinstance(defaults, Mapping) else {}
    world = data.get("world")
    tools = data.get("tools")
    return {
        "targets": [_target_of(str(n), t) for n, t in targets.items()]
        if isinstance(targets, Mapping) else [],
        "kinds": {k: list(v) for k, v in target_kinds().items()},
        "defaults": {k: _plain_value(defaults.get(k)) for k in DEFAULT_KEYS},
        "world": [inline_model(str(n), v) for n, v in world.items()]
        if isinstance(world, Mapping) else [],
        "tools": [_tool_of(str(n), t) for n, t in tools.items()]
        if isinstance(tools, Mapping) else [],
        "actions": list(ACTIONS),
        "arg_types": list(ARG_TYPES),
        "yaml_only": [str(k) for k in data if str(k) not in FORM_KEYS],
    }


def _plain_value(v: Any) -> Any:
    if v is None or isinstance(v, (bool, int, float)):
        return v
    return str(v)


def _target_of(name: str, t: Any) -> dict[str, Any]:
    if not isinstance(t, Mapping):
        return {"name": name, "kind": "", "fields": {}, "yaml_only": ["(all of it)"]}
    kind = str(t.get("kind") or "")
    shown = ("kind", "base_url", "model", "api_key_env", *target_kinds().get(kind, ()))
    return {"name": name, "kind": kind,
            "fields": {k: ("" if t.get(k) is None else str(t.get(k)))
                       for k in dict.fromkeys(shown) if k != "kind"},
            "yaml_only": [str(k) for k in t if str(k) not in shown]}


def _tool_of(name: str, t: Any) -> dict[str, Any]:
    if not isinstance(t, Mapping):
        return {"name": name, "description": "", "args": [], "args_yaml": True,
                "action": "read", "confirm": False, "table": "", "where": "", "set": "",
                "returns": "", "returns_yaml": False, "yaml_only": ["(all of it)"]}
    args, args_ok = _args_of(t.get("input_schema"))
    returns = t.get("returns")
    action = str(t.get("action") or "read")
    table = str(t.get("table") or "")
    names = [a["name"] for a in args]
    writes = t.get("row") if action == "create" else t.get("set")
    more = [{**f.as_json(), "value": t.get(f.key)} for f in tool_settings()]
    simple = {f.key for f in tool_settings()}
    return {
        "name": name,
        "description": "" if t.get("description") is None else str(t.get("description")),
        "args": args,
        "args_yaml": not args_ok,
        "action": action,
        "confirm": t.get("confirm") is True,
        "table": table,
        "where": pairs_text(t.get("where"), names),
        "set": pairs_text(writes, names),
        "returns": returns if isinstance(returns, str) else "",
        "returns_yaml": returns is not None and not isinstance(returns, str),
        "more": more,
        "yaml_only": [str(k) for k in t if str(k) not in HANDLED and str(k) not in simple],
    }


def _args_of(schema: Any) -> tuple[list[dict[str, Any]], bool]:
    """A tool's arguments as rows, from its ``input_schema`` (False: a schema the rows
    cannot show — it stays as written)."""
    if schema is None:
        return [], True
    if not isinstance(schema, Mapping) or schema.get("type", "object") != "object":
        return [], False
    props = schema.get("properties") or {}
    required = schema.get("required") or []
    if not isinstance(props, Mapping) or not isinstance(required, list):
        return [], False
    out = []
    ok = all(k in ("type", "properties", "required", "additionalProperties", "description")
             for k in schema)
    for key, sub in props.items():
        if not isinstance(sub, Mapping):
            return [], False
        kind = sub.get("type", "string")
        if kind not in ARG_TYPES or any(k not in ("type", "description") for k in sub):
            ok = False
        out.append({"name": str(key), "type": str(kind), "required": key in required,
                    "description": str(sub.get("description") or "")})
    return out, ok


def pairs_text(value: Any, args: Sequence[str]) -> str:
    """``{id: "{{ args.card_id }}", status: blocked}`` as the form shows it:
    ``id = card_id, status = blocked``."""
    if not isinstance(value, Mapping):
        return ""
    parts = []
    for k, v in value.items():
        text = str(v) if not isinstance(v, bool) else ("true" if v else "false")
        m = _ARG.match(text.strip()) if isinstance(v, str) else None
        if m is not None and m.group(1) in args:
            shown = m.group(1)
        elif (text in args or any(c in text for c in ",=\"'") or text != text.strip()
              or not text):
            shown = '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
        else:
            shown = text
        parts.append(f"{k} = {shown}")
    return ", ".join(parts)


def parse_pairs(text: str, args: Sequence[str]) -> list[tuple[str, Any]]:
    """The ``column = value`` pairs of a Where or Set field (see the module's docstring);
    FormError in words for what cannot be read."""
    out: list[tuple[str, Any]] = []
    for part in _split(text):
        if not part.strip():
            continue
        column, sep, value = part.partition("=")
        if not sep:
            column, sep, value = part.partition(":")
        column, value = column.strip(), value.strip()
        if not sep:
            if column in args:  # `card_id` alone: the column of the argument's name
                out.append((column, DoubleQuotedScalarString(f"{{{{ args.{column} }}}}")))
                continue
            raise FormError(f"'{part.strip()}' is not column = value: write the column, an "
                            "equals sign and the value, e.g. id = card_id")
        if not column:
            raise FormError(f"'{part.strip()}' names no column before the =")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            out.append((column, DoubleQuotedScalarString(
                value[1:-1].replace('\\"', '"').replace("\\\\", "\\"))))
        elif value in args:
            out.append((column, DoubleQuotedScalarString(f"{{{{ args.{value} }}}}")))
        else:
            out.append((column, _typed(value)))
    return out


def _typed(value: str) -> Any:
    """A value typed in Where or Set: a number or true/false as such, else text."""
    read = resolve_plain(value)
    if isinstance(read, (bool, int, float)):
        return read
    return filled(None, value)


def _split(text: str) -> list[str]:
    """Split on commas, semicolons and line ends outside quotes."""
    parts, cur, quote = [], [], ""
    for ch in text:
        if quote:
            cur.append(ch)
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
            cur.append(ch)
        elif ch in ",;\n":
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


# ---------------------------------------------------------------- the edits

OPS: dict[str, tuple[str, ...]] = {
    "add_target": (),
    "rename_target": ("target", "name"),
    "remove_target": ("target",),
    "target_set": ("target", "key", "value"),
    "defaults_set": ("key", "value"),
    "table": ("action", "table"),
    "add_tool": (),
    "rename_tool": ("tool", "name"),
    "remove_tool": ("tool",),
    "tool_set": ("tool", "key", "value"),
    "add_arg": ("tool",),
    "arg_set": ("tool", "index", "key", "value"),
    "remove_arg": ("tool", "index"),
}
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")


def apply(text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """``text`` with ``edits`` made; FormError for an edit that does not fit."""
    if not edits:
        return text
    doc = Suite(text)
    for edit in edits:
        _apply_one(doc.data, edit)
    return doc.text()


def _str(value: Any, what: str = "text") -> str:
    if not isinstance(value, str):
        raise FormError(f"the form sent {value!r} where it should send {what}")
    return value


def _section(data: CommentedMap, key: str, after: Sequence[str]) -> CommentedMap:
    section = data.get(key)
    if section is None:
        section = CommentedMap()
        insert(data, key, section, after)
    if not isinstance(section, CommentedMap):
        raise FormError(f"'{key}' is not a mapping here; change it in the YAML tab")
    return section


def _named(section: CommentedMap, name: Any, what: str) -> CommentedMap:
    name = _str(name, f"the {what}'s name")
    if name not in section:
        raise FormError(f"there is no {what} '{name}' here")
    item = section[name]
    if not isinstance(item, CommentedMap):
        raise FormError(f"the {what} '{name}' is not written as a mapping; change it in the "
                        "YAML tab")
    return item


def _fresh(section: Mapping[str, Any], base: str) -> str:
    n = len(section) + 1
    while f"{base}_{n}" in section:
        n += 1
    return f"{base}_{n}"


def _rename_in(section: CommentedMap, given_old: Any, given_new: Any, what: str) -> str:
    old = _str(given_old)
    new = _str(given_new, f"the {what}'s name").strip()
    if old not in section:
        raise FormError(f"there is no {what} '{old}' here")
    if not NAME.match(new):
        raise FormError(f"'{new}' cannot name a {what}: start with a letter or _, then "
                        "letters, digits, _ and -")
    if new != old and new in section:
        raise FormError(f"there is a {what} '{new}' already; choose another name")
    rename(section, old, new, section[old])
    return new


def _set_or_drop(mapping: CommentedMap, key: str, value: str, after: Sequence[str]) -> None:
    if not value.strip():
        if key in mapping:
            del mapping[key]
        return
    if key in mapping:
        mapping[key] = filled(mapping[key] if isinstance(mapping[key], str) else None,
                                  value)
    else:
        insert(mapping, key, filled(None, value), after)


def _apply_one(data: CommentedMap, edit: Mapping[str, Any]) -> None:
    op = checked_op(edit, OPS)
    match op:
        case "add_target":
            targets = _section(data, "targets", ())
            targets[_fresh(targets, "target")] = CommentedMap(
                [("kind", "openai"), ("base_url", DoubleQuotedScalarString("")),
                 ("model", DoubleQuotedScalarString(""))])
        case "rename_target":
            targets = _section(data, "targets", ())
            old = _str(edit["target"])
            new = _rename_in(targets, old, edit["name"], "target")
            _follow_rename(data, old, new)
        case "remove_target":
            targets = _section(data, "targets", ())
            _named(targets, edit["target"], "target")
            del targets[edit["target"]]
        case "target_set":
            _target_set(_named(_section(data, "targets", ()), edit["target"], "target"),
                        _str(edit["key"]), edit["value"])
        case "defaults_set":
            _defaults_set(data, _str(edit["key"]), edit["value"])
        case "table":
            action = _str(edit["action"])
            if action not in TABLE_OPS:
                raise FormError(f"unknown table edit {action!r}")
            if "world" not in data and action != "add_table":
                raise FormError("the suite has no world tables yet")
            world = _section(data, "world", ("defaults", "targets"))
            edit_inline(world, {**edit, "op": action})
        case "add_tool":
            tools = _section(data, "tools", ("world", "defaults", "targets"))
            tools[_fresh(tools, "tool")] = CommentedMap(
                [("description", DoubleQuotedScalarString(""))])
        case "rename_tool":
            _rename_in(_section(data, "tools", ()), edit["tool"], edit["name"], "tool")
        case "remove_tool":
            tools = _section(data, "tools", ())
            _named(tools, edit["tool"], "tool")
            del tools[edit["tool"]]
        case "tool_set":
            _tool_set(_named(_section(data, "tools", ()), edit["tool"], "tool"),
                      _str(edit["key"]), edit["value"])
        case "add_arg":
            tool = _named(_section(data, "tools", ()), edit["tool"], "tool")
            props = _properties(tool)
            n = len(props) + 1
            while f"arg_{n}" in props:
                n += 1
            props[f"arg_{n}"] = flow_map([("type", "string")])
        case "arg_set":
            _arg_set(_named(_section(data, "tools", ()), edit["tool"], "tool"),
                     edit["index"], _str(edit["key"]), edit["value"])
        case "remove_arg":
            tool = _named(_section(data, "tools", ()), edit["tool"], "tool")
            props = _properties(tool)
            key = _arg_key(props, edit["index"])
            del props[key]
            _required(tool, key, False)


def _flow(value: Any) -> Any:
    """A mapping or a list the form sent, written on one line, its texts quoted only when
    they must be."""
    if isinstance(value, Mapping):
        return flow_map([(str(k), _flow(v)) for k, v in value.items()])
    if isinstance(value, list):
        return flow_seq([_flow(v) for v in value])
    if isinstance(value, str):
        return flow_value(value)
    return value


def _follow_rename(data: CommentedMap, old: str, new: str) -> None:
    """A renamed target is renamed where the suite names it (defaults.target)."""
    defaults = data.get("defaults")
    if isinstance(defaults, CommentedMap) and defaults.get("target") == old:
        defaults["target"] = filled(defaults["target"], new)


def _target_set(target: CommentedMap, key: str, value: Any) -> None:
    text = _str(value)
    if key == "kind":
        kinds = target_kinds()
        if text not in kinds:
            raise FormError(f"a target's kind is one of {', '.join(kinds)}, not '{text}'")
        allowed = _kind_keys(text)
        if allowed is not None:
            for k in list(target):
                if k not in allowed:
                    del target[k]
        target["kind"] = text
        for k in kinds[text]:
            if k not in target:
                target[k] = DoubleQuotedScalarString("")
        return
    kind = str(target.get("kind") or "")
    allowed = _kind_keys(kind)
    if allowed is not None and key not in allowed:
        raise FormError(f"a target of kind {kind} has no '{key}'")
    if key in target_kinds().get(kind, ()):
        target[key] = filled(target.get(key) if isinstance(target.get(key), str) else None,
                                 text)
    else:
        _set_or_drop(target, key, text, ("model", "base_url", "kind"))


def _defaults_set(data: CommentedMap, key: str, value: Any) -> None:
    if key not in DEFAULT_KEYS:
        raise FormError(f"defaults has {', '.join(DEFAULT_KEYS)}, not '{key}'")
    defaults = _section(data, "defaults", ("targets",))
    if value is None or value == "":
        if key in defaults:
            del defaults[key]
        return
    if key == "target":
        defaults[key] = filled(defaults.get(key) if isinstance(defaults.get(key), str)
                                   else None, _str(value))
        return
    try:
        number: int | float = float(value) if key == "min_pass_rate" else int(value)
    except (TypeError, ValueError):
        raise FormError(f"{key} is a number; '{value}' is not one") from None
    other = {"min_pass": "min_pass_rate", "min_pass_rate": "min_pass"}.get(key)
    if other is not None and other in defaults:
        rename(defaults, other, key, number)  # one or the other, at its place
    else:
        defaults[key] = number


def _properties(tool: CommentedMap) -> CommentedMap:
    schema = tool.get("input_schema")
    if schema is None:
        schema = CommentedMap([("type", "object"), ("properties", CommentedMap())])
        insert(tool, "input_schema", schema, ("description",))
    if not isinstance(schema, CommentedMap):
        raise FormError("this tool's input_schema is not a mapping; change it in the YAML tab")
    props = schema.get("properties")
    if props is None:
        props = CommentedMap()
        insert(schema, "properties", props, ("type",))
    if not isinstance(props, CommentedMap):
        raise FormError("this tool's input_schema.properties is not a mapping; change it in "
                        "the YAML tab")
    return props


def _arg_key(props: CommentedMap, index: Any) -> str:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(props):
        raise FormError(f"there is no argument {index!r} here (there are {len(props)})")
    return str(list(props)[index])


def _required(tool: CommentedMap, name: str, on: bool, new: str | None = None) -> None:
    schema = tool.get("input_schema")
    if not isinstance(schema, CommentedMap):
        return
    req = schema.get("required")
    if req is None:
        if not on or new is not None:
            return
        req = flow_seq([])
        schema["required"] = req
    if not isinstance(req, CommentedSeq):
        raise FormError("this tool's required arguments are not a list; change them in the "
                        "YAML tab")
    if new is not None:
        for i, r in enumerate(req):
            if r == name:
                req[i] = new
        return
    if on and name not in req:
        if not req:
            req.fa.set_flow_style()  # `required: []` read back forgets it was one line
        req.append(name)
    elif not on:
        for i in reversed([i for i, r in enumerate(req) if r == name]):
            del req[i]
        if not req:
            del schema["required"]


def _arg_set(tool: CommentedMap, index: Any, key: str, value: Any) -> None:
    props = _properties(tool)
    name = _arg_key(props, index)
    sub = props[name]
    if not isinstance(sub, CommentedMap):
        raise FormError(f"the argument '{name}' is not written as a mapping; change it in "
                        "the YAML tab")
    match key:
        case "name":
            new = _str(value, "the argument's name").strip()
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_]*$", new):
                raise FormError(f"'{new}' cannot name an argument: start with a letter or _, "
                                "then letters, digits and _")
            if new != name and new in props:
                raise FormError(f"this tool has an argument '{new}' already")
            rename(props, name, new, sub)
            _required(tool, name, True, new)
            _follow_arg(tool, name, new)
        case "type":
            kind = _str(value)
            if kind not in ARG_TYPES:
                raise FormError(f"an argument's type is one of {', '.join(ARG_TYPES)}")
            sub["type"] = kind
        case "required":
            _required(tool, name, value is True)
        case "description":
            _set_or_drop(sub, "description", _str(value), ("type",))
        case _:
            raise FormError(f"an argument has a name, a type, required and a description, "
                            f"not '{key}'")


def _follow_arg(tool: CommentedMap, old: str, new: str) -> None:
    """``{{ args.OLD }}`` in the tool's where, set and row follows a renamed argument."""
    for key in ("where", "set", "row"):
        m = tool.get(key)
        if isinstance(m, CommentedMap):
            for k, v in m.items():
                hit = _ARG.match(str(v).strip()) if isinstance(v, str) else None
                if hit is not None and hit.group(1) == old:
                    m[k] = DoubleQuotedScalarString(f"{{{{ args.{new} }}}}")


def _tool_set(tool: CommentedMap, key: str, value: Any) -> None:
    args = [str(k) for k in (tool.get("input_schema") or {}).get("properties") or {}] \
        if isinstance(tool.get("input_schema"), Mapping) else []
    match key:
        case "description":
            if "description" in tool:
                tool["description"] = filled(
                    tool["description"] if isinstance(tool["description"], str) else None,
                    _str(value))
            else:
                insert(tool, "description", filled(None, _str(value)), ())
        case "returns":
            _set_or_drop(tool, "returns", _str(value), ("action", "input_schema",
                                                        "description"))
        case "confirm":
            if value is True:
                if "confirm" not in tool:
                    insert(tool, "confirm", True, ("action", "input_schema", "description"))
                tool["confirm"] = True
            elif "confirm" in tool:
                del tool["confirm"]
        case "action":
            action = _str(value)
            if action not in ACTIONS:
                raise FormError(f"a tool's action is one of {', '.join(ACTIONS)}")
            old = str(tool.get("action") or "read")
            if "action" in tool:
                tool["action"] = action
            else:
                insert(tool, "action", action, ("input_schema", "description"))
            moved = {("update", "create"): ("set", "row"), ("create", "update"): ("row", "set")}
            pair = moved.get((old, action))
            if pair and pair[0] in tool:
                rename(tool, pair[0], pair[1], tool[pair[0]])
            if action in ("read", "delete"):
                for k in ("set", "row"):
                    if k in tool:
                        del tool[k]
            if action != "read" and "one" in tool:
                del tool["one"]
        case "table":
            name = _str(value)
            if not name:
                for k in TABLE_KEYS:
                    if k in tool:
                        del tool[k]
                return
            if "table" in tool:
                tool["table"] = filled(tool["table"] if isinstance(tool["table"], str)
                                           else None, name)
            else:
                tool["table"] = name
        case "where" | "set":
            text = _str(value)
            target: str = key
            if key == "set" and str(tool.get("action") or "read") == "create":
                target = "row"
            pairs = parse_pairs(text, args)
            if not pairs:
                if target in tool:
                    del tool[target]
                return
            new = flow_map(pairs)
            if target in tool:
                tool[target] = new
            else:
                after = ("where", "table") if target != "where" else ("table",)
                insert(tool, target, new, after)
        case _:
            _more_set(tool, key, value)


def _more_set(tool: CommentedMap, key: str, value: Any) -> None:
    """One of :func:`tool_settings`: set as its kind says; empty, no or nothing removes
    it."""
    f = next((x for x in tool_settings() if x.key == key), None)
    if f is None:
        raise FormError(f"the form has no tool setting '{key}'")
    if value in (None, "", False, []):
        if key in tool:
            del tool[key]
        return
    if f.kind in ("number", "integer"):
        try:
            value = int(value) if f.kind == "integer" else float(value)
        except (TypeError, ValueError):
            raise FormError(f"{f.label} is a number; '{value}' is not one") from None
    elif f.kind == "texts":
        items = value if isinstance(value, list) else str(value).split(",")
        value = flow_seq([filled(None, str(x).strip()) for x in items if str(x).strip()])
    elif f.kind == "bool":
        value = value is True
    elif f.kind in ("map", "rows") and fits(f, value):
        value = _flow(value)
    elif not fits(f, value):
        raise FormError(f"{f.label} takes {f.kind}, not {value!r}")
    else:
        value = filled(tool.get(key) if isinstance(tool.get(key), str) else None, str(value))
    if key in tool:
        tool[key] = value
    else:
        insert(tool, key, value, ("set", "row", "where", "table", "returns", "confirm",
                                  "action", "input_schema", "description"))
