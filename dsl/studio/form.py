"""The form: a scenario's text shown as plain fields, and the form's edits written back
into the text with ruamel.yaml's round trip — so every comment, key order and quoting
style the person did not touch stays as it was.

:func:`form_of` reads the text into the form's model (a JSON-ready dict the page draws);
:func:`apply` makes a list of edits (:data:`OPS`) and returns the new text. Neither
decides whether the scenario is right: the studio lints the result as it lints what the
person types. The text is written back with the indentation it was read with (guessed
by trying the usual styles: the one that writes the text unchanged), plain scalars are
read with the YAML 1.2 core schema as Scenarist's loader reads them (a moment stays text,
never a timestamp), and a value the form changes keeps its quotes.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    SingleQuotedScalarString,
)

from ..checks import REGISTRY
from ..compiler.moment import MomentError, parse_moment, say
from ..compiler.vocabulary import check_takes
from ..source.load import resolve_plain
from ..source.schemawords import CHECK_MODIFIERS

TURN_KINDS = ("say", "confirm", "cancel")
NEW_TURN = "What the person says next."
# mapping indent, sequence indent, sequence dash offset: the styles tried, commonest first
STYLES = tuple(itertools.product((2, 4), ((4, 2), (2, 0), (4, 0), (3, 1), (6, 4))))
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
_QUOTED = (DoubleQuotedScalarString, SingleQuotedScalarString, LiteralScalarString,
           FoldedScalarString)


class FormError(Exception):
    """The text cannot be shown or changed as a form (a sentence for the person)."""


class _CoreResolver(VersionedResolver):
    """ruamel's resolver without timestamps: plain ``2026-09-29T10:00:00-03:00`` is text,
    as in Scenarist's loader, and is written back plain."""

    @property
    def versioned_resolver(self) -> Any:
        found = super().versioned_resolver
        return {k: [r for r in v if r[0] != _TIMESTAMP] for k, v in found.items()}


def _yaml(style: tuple[int, tuple[int, int]] = STYLES[0]) -> YAML:
    y = YAML(typ="rt")
    y.Resolver = _CoreResolver
    y.preserve_quotes = True
    y.width = 4096  # never fold a long line the person wrote on one
    y.allow_unicode = True
    mapping, (sequence, offset) = style
    y.indent(mapping=mapping, sequence=sequence, offset=offset)
    return y


class Scenario:
    """A scenario's text, loaded for the form: the ruamel tree and the style it is
    written back in."""

    def __init__(self, text: str) -> None:
        try:
            data = _yaml().load(text)
        except YAMLError as exc:
            raise FormError("The form needs YAML without mistakes: fix the problems the "
                            f"YAML tab lists first ({_first_line(exc)}).") from None
        if not isinstance(data, CommentedMap):
            raise FormError("The form shows a scenario: keys such as description, given, "
                            "when and then. Write them in the YAML tab first.")
        self.data = data
        self.text = text
        self.style = _style_of(data, text)

    def dump(self) -> str:
        out = io.StringIO()
        _yaml(self.style).dump(self.data, out)
        return out.getvalue()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _style_of(data: CommentedMap, text: str) -> tuple[int, tuple[int, int]]:
    """The indentation that writes ``data`` back as ``text`` (else the closest one)."""
    best: tuple[int, tuple[int, tuple[int, int]]] | None = None
    lines = text.splitlines()
    for style in STYLES:
        out = io.StringIO()
        _yaml(style).dump(data, out)
        written = out.getvalue()
        if written == text:
            return style
        differ = sum(a != b for a, b in zip(written.splitlines(), lines, strict=False))
        differ += abs(len(written.splitlines()) - len(lines))
        if best is None or differ < best[0]:
            best = (differ, style)
    assert best is not None
    return best[1]


# ---------------------------------------------------------------- the form's model


def form_of(text: str, library: Sequence[str]) -> dict[str, Any]:
    """What the form shows of ``text``: the description, the moment, the tools (the
    suite's ``library`` as choices), the person's message or turns, the checks."""
    data = Scenario(text).data
    given = data.get("given")
    given = given if isinstance(given, Mapping) else {}
    listed = given.get("tools")
    chosen: list[Any] = listed if isinstance(listed, list) else []
    named = [t for t in chosen if isinstance(t, str)]
    inline = [str(t.get("name")) for t in chosen if isinstance(t, Mapping)]
    tools = [{"name": n, "on": n in named} for n in library]
    tools += [{"name": n, "on": True} for n in named if n not in library]
    moment = _text(given.get("at"))
    return {
        "description": _text(data.get("description")),
        "moment": moment,
        "moment_words": _moment_words(moment),
        "tools": tools,
        "inline_tools": inline,
        "when": _when_of(data.get("when")),
        "checks": _checks_of(data.get("then")),
    }


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
    if isinstance(when, Mapping) and "user" in when:
        return {"kind": "user"}
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
                           "always": False, "name": ""}
    if isinstance(item, str):
        out.update(check=str(item), takes=check_takes(str(item)))
        if out["takes"] == "text":
            out["takes"] = "other"  # a text check written without its text
        return out
    if not isinstance(item, Mapping):
        out["yaml"] = _flow(item)
        return out
    keys = [k for k in item if k not in CHECK_MODIFIERS]
    out["always"] = item.get("always") is True
    out["name"] = _text(item.get("name")) or ""
    if len(keys) != 1:
        out["yaml"] = _flow(item)
        return out
    name = str(keys[0])
    value = item[name]
    takes = check_takes(name)
    if takes == "text" and not isinstance(value, str):
        takes = "other"
    out.update(check=name, takes=takes, value=str(value) if takes == "text" else None,
               yaml="" if takes != "other" else _flow(value))
    return out


def _flow(value: Any) -> str:
    """A parameter as one line of YAML, to show beside a check the form cannot edit."""
    y = YAML(typ="safe", pure=True)
    y.default_flow_style = True
    y.width = 4096
    y.allow_unicode = True
    out = io.StringIO()
    try:
        y.dump(_plain(value), out)
    except YAMLError:
        return str(value)
    return out.getvalue().strip().removesuffix("...").strip()


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


# ---------------------------------------------------------------- the form's edits

# Every edit the page sends, with the fields it takes. ``list`` names a list of checks:
# null for the scenario's ``then``, a turn's index for that turn's ``then``.
OPS: dict[str, tuple[str, ...]] = {
    "description": ("value",),
    "moment": ("value",),
    "tool": ("name", "on"),
    "message": ("value",),
    "turn": ("index", "kind", "value"),
    "add_turn": (),
    "remove_turn": ("index",),
    "move_turn": ("index", "to"),
    "add_check": ("list", "check"),
    "remove_check": ("list", "index"),
    "set_check": ("list", "index", "check"),
    "check_value": ("list", "index", "value"),
    "check_always": ("list", "index", "value"),
    "check_name": ("list", "index", "value"),
}


def apply(text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """``text`` with ``edits`` made (each a dict with ``op`` and the fields
    :data:`OPS` names); FormError for an edit that does not fit the text."""
    if not edits:
        return text
    doc = Scenario(text)
    for edit in edits:
        _apply_one(doc.data, edit)
    return doc.dump()


def _apply_one(data: CommentedMap, edit: Mapping[str, Any]) -> None:
    op = edit.get("op")
    if not isinstance(op, str) or op not in OPS:
        raise FormError(f"unknown form edit {op!r}")
    missing = [f for f in OPS[op] if f not in edit]
    if missing:
        raise FormError(f"the form edit '{op}' needs {', '.join(missing)}")
    match op:
        case "description":
            _set_text(data, "description", _str(edit["value"]), after=("id",), optional=True)
        case "moment":
            _set_text(_given(data), "at", _str(edit["value"]), after=())
        case "tool":
            _set_tool(data, _str(edit["name"]), bool(edit["on"]))
        case "message":
            _set_text(data, "when", _str(edit["value"]), after=("given", "description", "id"))
        case "turn":
            _set_turn(data, _index(edit["index"]), _str(edit["kind"]), _str(edit["value"]))
        case "add_turn":
            turns = _turns(data)
            turns.append(CommentedMap([("say", DoubleQuotedScalarString(NEW_TURN))]))
        case "remove_turn":
            turns = _turns(data)
            del turns[_at(turns, edit["index"])]
        case "move_turn":
            turns = _turns(data)
            item = turns.pop(_at(turns, edit["index"]))
            turns.insert(max(0, min(_index(edit["to"]), len(turns))), item)
        case "add_check":
            _checks(data, edit["list"], create=True).append(_new_check(_str(edit["check"])))
        case "remove_check":
            checks = _checks(data, edit["list"])
            del checks[_at(checks, edit["index"])]
        case "set_check":
            _set_check(data, edit)
        case "check_value":
            checks = _checks(data, edit["list"])
            i = _at(checks, edit["index"])
            item = _as_mapping(checks, i)
            name = _check_key(item)
            item[name] = _keep_style(item.get(name), _str(edit["value"]))
        case "check_always" | "check_name":
            checks = _checks(data, edit["list"])
            i = _at(checks, edit["index"])
            key = "always" if op == "check_always" else "name"
            value = edit["value"]
            if (key == "always" and value is True) or (key == "name" and _str(value)):
                item = _as_mapping(checks, i)
                item[key] = True if key == "always" else _keep_style(item.get(key),
                                                                      _str(value))
            elif isinstance(checks[i], CommentedMap) and key in checks[i]:
                del checks[i][key]


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


def _keep_style(old: Any, new: str) -> Any:
    """``new`` written the way ``old`` was: in the same quotes, or plain when it was plain
    and stays text when read back (else in double quotes)."""
    for kind in _QUOTED:
        if isinstance(old, kind):
            return kind(new)
    if old is None or not isinstance(old, str) or resolve_plain(new) != new or not new:
        return DoubleQuotedScalarString(new)
    return new


def _insert(mapping: CommentedMap, key: str, value: Any, after: Sequence[str]) -> None:
    """Add ``key`` right after the first of ``after`` that is there, else first."""
    keys = list(mapping)
    pos = next((keys.index(k) + 1 for k in after if k in mapping), 0)
    mapping.insert(pos, key, value)


def _set_text(mapping: CommentedMap, key: str, value: str, after: Sequence[str],
              optional: bool = False) -> None:
    if optional and not value.strip():
        if key in mapping:
            del mapping[key]
        return
    if key in mapping and (isinstance(mapping[key], str) or mapping[key] is None):
        mapping[key] = _keep_style(mapping[key], value)
    elif key in mapping:
        raise FormError(f"'{key}' is not a text here; change it in the YAML tab")
    else:
        _insert(mapping, key, _keep_style(None, value) if key != "at" else value, after)


def _given(data: CommentedMap) -> CommentedMap:
    given = data.get("given")
    if given is None:
        given = CommentedMap()
        _insert(data, "given", given, ("description", "tags", "id"))
    if not isinstance(given, CommentedMap):
        raise FormError("'given' is not a mapping; change it in the YAML tab")
    return given


def _set_tool(data: CommentedMap, name: str, on: bool) -> None:
    given = _given(data)
    tools = given.get("tools")
    if tools is None:
        if not on:
            return
        tools = CommentedSeq()
        tools.fa.set_flow_style()
        _insert(given, "tools", tools, ("at",))
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
        if when is not None:
            turns.append(when)
        if "when" in data:
            data["when"] = turns
        else:
            _insert(data, "when", turns, ("given", "description", "id"))
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
            turns[i] = _keep_style(turn, value)
            return
        turn = turns[i] = _flow_map([("say", turn)])
    if not isinstance(turn, CommentedMap):
        raise FormError(f"turn {i + 1} is not a text or a mapping; change it in the YAML tab")
    old = next((k for k in TURN_KINDS if k in turn), None)
    if old is None:
        turn.insert(0, kind, _keep_style(None, value))
    elif old == kind:
        turn[kind] = _keep_style(turn[kind], value)
    else:
        _rename(turn, old, kind, _keep_style(turn[old], value))


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
            _insert(owner, "then", then, ("when", "given", "description", "id"))
        else:
            owner["then"] = then
    if not isinstance(then, CommentedSeq):
        raise FormError("there is no list of checks here ('then')")
    return then


def _new_check(name: str) -> Any:
    if name not in REGISTRY:
        raise FormError(f"there is no check '{name}'; `scenarist checks` lists them")
    takes = check_takes(name)
    if takes == "flag":
        return name
    if takes == "text":
        return CommentedMap([(name, DoubleQuotedScalarString(""))])
    example = _example(name)
    return CommentedMap([(name, example)])


def _example(name: str) -> Any:
    """The check's first documented example's parameter (what the docs show)."""
    for line in REGISTRY[name].examples:
        try:
            item = _yaml().load(line)
        except YAMLError:
            continue
        if isinstance(item, list) and item and isinstance(item[0], Mapping) \
                and name in item[0]:
            return item[0][name]
        if isinstance(item, Mapping) and name in item:
            return item[name]
    return DoubleQuotedScalarString("")


def _as_mapping(checks: CommentedSeq, i: int) -> CommentedMap:
    """Item ``i`` as a mapping (``- non_empty`` becomes ``- non_empty: true``)."""
    item = checks[i]
    if isinstance(item, str):
        item = checks[i] = _flow_map([(str(item), True)])
    if not isinstance(item, CommentedMap):
        raise FormError(f"check {i + 1} is not a check the form can change; use the YAML tab")
    return item


def _flow_map(pairs: list[tuple[Any, Any]]) -> CommentedMap:
    item = CommentedMap(pairs)
    item.fa.set_flow_style()
    return item


def _check_key(item: CommentedMap) -> str:
    keys = [k for k in item if k not in CHECK_MODIFIERS]
    if len(keys) != 1:
        raise FormError("this item holds no single check; change it in the YAML tab")
    return str(keys[0])


def _set_check(data: CommentedMap, edit: Mapping[str, Any]) -> None:
    checks = _checks(data, edit["list"])
    i = _at(checks, edit["index"])
    name = _str(edit["check"])
    new = _new_check(name)
    item = checks[i]
    if isinstance(item, str) or not isinstance(item, CommentedMap):
        if isinstance(new, CommentedMap):
            new = _flow_map(list(new.items()))  # on the line of the item it replaces
        checks[i] = new
        return
    old = _check_key(item)
    value = item[old]
    keep = check_takes(name) == "text" and check_takes(old) == "text" and isinstance(value, str)
    param = value if keep else (True if isinstance(new, str) else new[name])
    _rename(item, old, name, param)
    if isinstance(new, str) and len(item) == 1:
        comment = item.ca.items.get(name)
        checks[i] = name  # a flag check alone: written as its name, as people write it
        if comment and comment[2] is not None:
            checks.ca.items[i] = [comment[2], None, None, None]


def _rename(mapping: CommentedMap, old: str, new: str, value: Any) -> None:
    """Key ``old`` becomes ``new`` (with ``value``) at its place, with its comment."""
    pos = list(mapping).index(old)
    comment = mapping.ca.items.pop(old, None)
    del mapping[old]
    mapping.insert(pos, new, value)
    if comment is not None:
        mapping.ca.items[new] = comment
