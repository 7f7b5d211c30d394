"""A check's settings as form fields, read from the check registry's JSON Schemas — so a
check registered tomorrow gets its fields with no change here.

:func:`describe` turns a check's parameter schema into a :class:`Shape`: ``flag`` (the
check takes nothing: ``- non_empty``), ``fields`` (named settings, each with a kind), or
``world`` (tables, rows and columns, chosen from the suite's world). A setting's kind
comes from its schema: text, a list of texts, yes/no, a number, a choice (``enum``), a
mapping of names to values (a call's arguments), or a tool of the scenario's (a setting
whose schema's ``title`` is ``Tool``, or ``Tools`` for a list of them). Its label is the
schema's ``title``, else its name in words (``ignore_case`` is "Ignore case"); the
setting a check's short form stands for (``contains: "x"`` is ``{text: "x"}``) is its
*main* setting, labelled "Value" (as the first studio named it) unless its title says
otherwise.

:func:`values_of` reads a check's parameter as written into the settings' values (the
short form read as its main setting); :func:`written` writes values back in the shortest
form the schema allows (only the main setting set: the short form again).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..source.schemawords import CHECK_MODIFIERS

KINDS = ("text", "texts", "bool", "number", "integer", "enum", "map", "tool", "tools", "rows")


@dataclass(frozen=True, slots=True)
class Field:
    """One setting of a check: its key (``""`` for a check whose parameter is a bare
    value), label, kind (:data:`KINDS`), choices (``enum``), and whether it is required.
    A ``rows`` setting is a list of items, each with the fields ``item`` (``item_main``:
    the one an item written as a bare value stands for)."""

    key: str
    label: str
    kind: str
    options: tuple[str, ...] = ()
    required: bool = False
    doc: str = ""
    item: tuple[Field, ...] = ()
    item_main: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"key": self.key, "label": self.label, "kind": self.kind,
                "options": list(self.options), "required": self.required, "doc": self.doc,
                "item": [f.as_json() for f in self.item], "item_main": self.item_main}


@dataclass(frozen=True, slots=True)
class Shape:
    """What the form shows of a check: ``flag``, ``fields`` or ``world``; for ``fields``,
    the fields, the main one (the short form's), and whether the short form may also be a
    list (``contains: [a, b]``) or must be one (``calls_only: [a, b]``)."""

    kind: str
    fields: tuple[Field, ...] = ()
    main: str | None = None
    short: tuple[str, ...] = ()  # JSON types the short form may take: string, array
    mapping: bool = False  # the parameter may be a mapping of the fields
    extra: Mapping[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "fields": [f.as_json() for f in self.fields],
                "main": self.main, "short": list(self.short), "mapping": self.mapping}


def words(key: str) -> str:
    """A key as a label: ``ignore_case`` → "Ignore case"."""
    text = key.replace("_", " ").strip()
    return text[:1].upper() + text[1:]


def _types(schema: Mapping[str, Any]) -> list[str]:
    t = schema.get("type")
    if isinstance(t, str):
        return [t]
    return list(t) if isinstance(t, list) else []


def _object_form(schema: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema the parameter has when it is a mapping: the ``then`` of ``if: {type:
    object}``, the ``else`` of ``if: {type: boolean}``, or the schema itself."""
    cond = schema.get("if")
    if isinstance(cond, Mapping) and cond.get("type") == "object":
        then = schema.get("then")
        return then if isinstance(then, Mapping) else None
    if isinstance(cond, Mapping) and cond.get("type") == "boolean":
        other = schema.get("else")
        return other if isinstance(other, Mapping) else None
    if "properties" in schema:
        return schema
    return None


def kind_of(schema: Mapping[str, Any]) -> tuple[str, tuple[str, ...]] | None:
    """A setting's kind (and choices) from its schema; None when the form cannot edit it."""
    title = schema.get("title")
    if "enum" in schema:
        return "enum", tuple(str(x) for x in schema["enum"])
    types = _types(schema)
    items = schema.get("items")
    items = items if isinstance(items, Mapping) else {}
    if title == "Tool" and types == ["string"]:
        return "tool", ()
    if "array" in types and (items.get("title") == "Tool" or title == "Tools") \
            and set(types) <= {"array"}:
        return "tools", ()
    if set(types) <= {"string", "array"} and "string" in types:
        if "array" in types and _types(items) != ["string"]:
            return None
        return ("texts" if "array" in types else "text"), ()
    if types == ["array"] and _types(items) == ["string"]:
        return "texts", ()
    if types == ["boolean"]:
        return "bool", ()
    if types == ["number"]:
        return "number", ()
    if types == ["integer"]:
        return "integer", ()
    if types == ["object"] and "properties" not in schema:
        return "map", ()
    return None


def rows_of(schema: Mapping[str, Any]) -> tuple[tuple[Field, ...], str | None] | None:
    """A list whose items are mappings of simple settings (``require: [{if, else}]``, the
    calls of ``same_world_as``): the fields of one item, and the one a bare item stands
    for; None for any other schema."""
    if _types(schema) != ["array"]:
        return None
    items = schema.get("items")
    if not isinstance(items, Mapping):
        return None
    obj = _object_form(items)
    if obj is None or not isinstance(obj.get("properties"), Mapping):
        return None
    required = [str(k) for k in obj.get("required") or []]
    bare = "string" in _types(items)
    main = required[0] if bare and len(required) == 1 else None
    out = []
    for key, sub in obj["properties"].items():
        kind = kind_of(sub) if isinstance(sub, Mapping) else None
        if kind is None or kind[0] in ("tools", "texts"):
            return None
        out.append(Field(str(key), str(sub.get("title") or words(str(key))), kind[0], kind[1],
                         str(key) in required, _doc(sub)))
    return tuple(out), main


def field_of(key: str, schema: Mapping[str, Any], label: str, required: bool = False
             ) -> Field | None:
    """The field of one setting with ``schema`` (None: the form cannot edit it)."""
    rows = rows_of(schema)
    if rows is not None:
        return Field(key, label, "rows", (), required, _doc(schema), rows[0], rows[1])
    kind = kind_of(schema)
    if kind is None:
        return None
    return Field(key, label, kind[0], kind[1], required, _doc(schema))


def _doc(schema: Mapping[str, Any]) -> str:
    return str(schema.get("description") or "")


def describe(name: str, schema: Mapping[str, Any]) -> Shape:
    """The form's shape of the check ``name`` with parameter ``schema``."""
    if name == "world":
        return Shape("world")
    if "const" in schema:
        return Shape("flag")
    types = _types(schema)
    obj = _object_form(schema)
    fields: list[Field] = []
    main: str | None = None
    short = tuple(t for t in ("string", "array") if t in types)
    if (obj is not None and "object" in types) or (obj is not None and types == []):
        props = obj.get("properties") or {}
        required = [str(k) for k in obj.get("required") or []]
        if short and len(required) == 1:
            main = required[0]
        for key, sub in props.items():
            if not isinstance(sub, Mapping):
                return Shape("yaml")
            label = str(sub.get("title") or ("Value" if key == main else words(key)))
            if key in CHECK_MODIFIERS and key != main:
                label = f"{label} of the {name} check"  # not the item's own `name:`
            found = field_of(str(key), sub, label, key in required)
            if found is None:
                return Shape("yaml")
            fields.append(found)
        if "array" in short and main is not None:
            main_kind = next(f.kind for f in fields if f.key == main)
            if main_kind not in ("texts", "tools"):
                # a list of mappings (not_calls: [a, {name, args}]) stays as written
                short = tuple(t for t in short if t != "array")
        return Shape("fields", tuple(fields), main, short, mapping=True)
    if types == ["boolean", "object"] or "boolean" in types:
        return Shape("yaml")
    label = str(schema.get("title") or (words(name) if "array" in types else "Value"))
    found = field_of("", schema, label, True)
    if found is None:
        return Shape("yaml")
    return Shape("fields", (found,), "", short, mapping=False)


def values_of(shape: Shape, param: Any) -> dict[str, Any] | None:
    """The settings' values of a check written with ``param`` (None: the form cannot
    show it — it stays as written, in the YAML tab)."""
    if shape.kind == "flag":
        return {}
    if shape.kind != "fields":
        return None
    keys = {f.key: f for f in shape.fields}
    if shape.main is not None and not isinstance(param, Mapping):
        f = keys[shape.main]
        return {shape.main: param} if _fits(f, param) else None
    if isinstance(param, Mapping) and shape.mapping:
        out: dict[str, Any] = {}
        for k, v in param.items():
            found = keys.get(str(k))
            if found is None or not _fits(found, v):
                return None
            out[str(k)] = v
        return out
    if param is True and not shape.main and shape.mapping:
        return {}
    return None


def _fits(f: Field, value: Any) -> bool:
    match f.kind:
        case "text" | "tool":
            return isinstance(value, str)
        case "texts" | "tools":
            return isinstance(value, str) or (
                isinstance(value, list) and all(isinstance(x, str) for x in value))
        case "bool":
            return isinstance(value, bool)
        case "number":
            return isinstance(value, (int, float)) and not isinstance(value, bool)
        case "integer":
            return isinstance(value, int) and not isinstance(value, bool)
        case "enum":
            return str(value) in f.options
        case "map":
            return isinstance(value, Mapping)
        case "rows":
            return isinstance(value, list) and all(
                (isinstance(v, str) and f.item_main is not None) or (
                    isinstance(v, Mapping) and all(
                        (x := next((i for i in f.item if i.key == k), None)) is not None
                        and _fits(x, w) for k, w in v.items()))
                for v in value)
    return False


def fits(f: Field, value: Any) -> bool:
    """Whether ``value`` (as the page sends it) is one the setting takes."""
    return _fits(f, value)


def shortest(shape: Shape, values: Mapping[str, Any]) -> Any:
    """The parameter to write for ``values``: the main setting alone in the short form when
    the schema allows it (``contains: "x"``), else the mapping (``{text: x, ignore_case:
    true}``); ``True`` for a check whose mapping is empty (``json: true``)."""
    if shape.main == "":
        return values.get("")
    if shape.main is not None and set(values) <= {shape.main} and shape.main in values:
        v = values[shape.main]
        if isinstance(v, list) and "array" not in shape.short:
            return dict(values)
        if isinstance(v, str) and "string" not in shape.short:
            return dict(values)
        return v
    if not values:
        return True
    return dict(values)
