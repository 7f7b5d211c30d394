"""Validate: a loaded :class:`~dsl.source.load.Document` against its JSON Schema (2020-12).

jsonschema-rs says whether the document is valid (:mod:`dsl.source.schemacheck`); only a
document it rejects is explained. jsonschema yields every error lazily; we group them by
place, keep the best one per place (``best_match``), and rewrite each into a sentence for
the person who wrote the file, at the right ``line:col`` — an unknown key at the key
itself, a wrong value at the value. The sentence for each JSON Schema keyword is looked up
in :data:`KEYWORDS`.

The check registry is not imported here (it imports the checks, which use the schema words
of :mod:`dsl.source.schemawords`): the caller passes the checks a scenario may name, for the
sentences about a check written without its parameter.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections import defaultdict
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Protocol

import msgspec

from ..errors import Diagnostic, Span, did_you_mean, quoted_list
from . import schemacheck
from .load import DataPath, Document, value_at
from .resources import load_schema
from .schemacheck import Checker, best_match
from .schemawords import CHECK_MODIFIERS, describe_path


class CheckExample(Protocol):
    """What validate needs of a check type (:class:`dsl.checks.CheckType` has it): how an
    author writes the check, first example first."""

    @property
    def examples(self) -> tuple[str, ...]: ...


NO_CHECKS: Mapping[str, CheckExample] = MappingProxyType({})

_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping (key: value lines)",
    "null": "empty",
}


def checker(name: str) -> Checker:
    """The compiled check of one of our schemas (``scenario.schema.json``, ...)."""
    return schemacheck.checker(load_schema(name))


def validator(name: str) -> Any:
    """jsonschema's validator of one of our schemas: the errors that are worded."""
    return checker(name).words


def type_name(value: Any) -> str:
    if value is None:
        return "empty"
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "a mapping"


def shown_value(value: Any) -> str:
    """A value in a message, as JSON, cut to 60 characters."""
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def yaml_text(value: Any) -> str:
    """A scalar as YAML writes it (``true``, ``3``, ``text``): for "put it in quotes"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


class Shape(msgspec.Struct, frozen=True):
    """What the schema found in a document: the diagnostics, and the places (data paths)
    where it found something wrong. The compile stage goes on with every part of the file
    that is :meth:`sound`, so that one pass reports every independent mistake."""

    diagnostics: tuple[Diagnostic, ...] = ()
    broken: frozenset[DataPath] = frozenset()

    def sound(self, path: DataPath) -> bool:
        """Nothing wrong was found at ``path`` or under it. (A problem *above* it — an
        unknown key beside it, a missing sibling — leaves it sound.) Every part of a valid
        document is sound, at the cost of one test: most files have nothing broken."""
        if not self.broken:
            return True
        n = len(path)
        return not any(b[:n] == path for b in self.broken)

    def broken_items(self, path: DataPath) -> frozenset[int]:
        """The indexes of the items of the list at ``path`` that are not :meth:`sound`:
        one question for a whole list (a scenario's checks, its tools), where asking of
        each item would cost a call per item of every valid file."""
        if not self.broken:
            return _NO_ITEMS
        n = len(path)
        return frozenset(i for b in self.broken
                         if len(b) > n and b[:n] == path and isinstance(i := b[n], int))


_NO_ITEMS: frozenset[int] = frozenset()


VALID = Shape()


def validate(doc: Document, schema_name: str, what: str, *,
             checks: Mapping[str, CheckExample] = NO_CHECKS) -> list[Diagnostic]:
    """Every schema problem in ``doc``, best one per place. ``what`` names the top level
    in messages ("the scenario", "scenarist.yaml"); ``checks`` are the check types a
    scenario may name (:data:`dsl.checks.REGISTRY`), for "the check 'contains' needs a
    parameter" and "unknown check"."""
    return list(validate_shape(doc, schema_name, what, checks=checks).diagnostics)


def validate_shape(doc: Document, schema_name: str, what: str, *,
                   checks: Mapping[str, CheckExample] = NO_CHECKS) -> Shape:
    """:func:`validate`, with the places where something is wrong (:class:`Shape`)."""
    if doc.data is None or checker(schema_name).is_valid(doc.data):
        return VALID  # valid: jsonschema (and its import) is needed only to explain errors
    errors = _errors(schema_name, doc.data)
    if not errors:
        return VALID
    return Shape(tuple(sorted(_diagnose(doc, errors, what, checks), key=Diagnostic.sort_key)),
                 frozenset(tuple(e.absolute_path) for e in errors))


# The list whose items jsonschema words one by one, each only when jsonschema-rs refuses it:
# most of a scenario's schema is its checks (every check's parameter is an if/then branch),
# and in a file with one wrong check the others need no explaining.
ITEMWISE: dict[str, str] = {"scenario.schema.json": "then"}


@functools.cache
def _itemwise(name: str, key: str) -> tuple[Checker, Checker]:
    """The check of the schema without ``key``'s items, and the check of one item."""
    schema = load_schema(name)
    rest = copy.deepcopy(dict(schema))
    item = {"$defs": schema.get("$defs", {}), **rest["properties"][key].pop("items")}
    return schemacheck.checker(rest), schemacheck.checker(item)


def _errors(schema_name: str, data: Any) -> list[Any]:
    """Every jsonschema error of ``data`` (what :func:`validate` words)."""
    key = ITEMWISE.get(schema_name)
    if key is None or not isinstance(data, dict):
        return checker(schema_name).errors(data)
    rest, one = _itemwise(schema_name, key)
    errors = rest.errors(data)
    items = data.get(key)
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if one.is_valid(item):
            continue
        for e in one.errors(item):
            e.path.appendleft(i)  # the item's errors, at their place in the file
            e.path.appendleft(key)
            errors.append(e)
    return errors


def failing_paths(doc: Document, schema_name: str) -> set[DataPath]:
    """The paths of the values the schema rejects in ``doc`` (empty when it is valid)."""
    check = checker(schema_name)
    if doc.data is None or check.is_valid(doc.data):
        return set()
    return {tuple(e.absolute_path) for e in check.errors(doc.data)}


def _diagnose(doc: Document, errors: list[Any], what: str,
              checks: Mapping[str, CheckExample]) -> list[Diagnostic]:
    by_place: dict[DataPath, list[Any]] = defaultdict(list)
    for e in errors:
        by_place[tuple(e.absolute_path)].append(e)
    out: list[Diagnostic] = []
    # a check item that fell into a YAML trap is said once, with the fix: its other errors
    # are the trap's consequences
    trapped: set[DataPath] = set()
    for path in list(by_place):
        item_path = _check_item_path(path)
        if item_path is None or item_path in trapped:
            continue
        trap = check_trap(doc, item_path, checks)
        if trap is not None:
            trapped.add(item_path)
            out.append(trap)
    for path, group in by_place.items():
        if trapped and (_check_item_path(path) in trapped):
            continue
        # the deepest path wins: a parent's error is usually a consequence
        deeper = any(o[: len(path)] == path and len(o) > len(path) for o in by_place)
        if deeper and all(e.validator in ("if", "then", "else", "allOf", "anyOf") for e in group):
            continue
        if _is_check_path(path):
            item = value_at(doc.data, path)
            if isinstance(item, dict):  # its keys are worded from the item itself
                out.extend(_check_item(doc, path, item, checks))
                group = [e for e in group if not _about_item_keys(e)]
                if not group:
                    continue
        unknown = [e for e in group if e.validator in ("additionalProperties",
                                                        "unevaluatedProperties")]
        for e in unknown:
            out.extend(_unknown_keys(doc, path, e, what))
        rest = [e for e in group if e not in unknown]
        if rest:
            d = _one(doc, path, best_match(rest), what, checks)
            if d is not None:
                out.append(d)
    return out


def _about_item_keys(e: Any) -> bool:
    """An error that says a check item's keys are not one check (and its modifiers):
    :func:`_check_item` words those from the item itself."""
    return (e.validator in ("oneOf", "minProperties", "maxProperties")
            or "propertyNames" in e.schema_path)


def _check_item(doc: Document, path: DataPath, item: dict[str, Any],
                checks: Mapping[str, CheckExample]) -> list[Diagnostic]:
    """What is wrong with the keys of one check item, a mapping that must hold exactly one
    check (its key and parameter) and, beside it, the modifiers ``always`` and ``name``."""
    keys = list(item)
    mods = [k for k in keys if k in CHECK_MODIFIERS]
    rest = [k for k in keys if k not in CHECK_MODIFIERS]
    if not keys:
        return [Diagnostic(doc.span(path), "S106", "a check cannot be empty",
                           "write the check's name and its parameter, e.g. contains: \"18:00\"")]
    if not rest:
        return [Diagnostic(
            doc.key_span((*path, mods[0])), "S106",
            f"this item has {quoted_list(mods, 'and')} but no check",
            f"{quoted_list(mods, 'and')} go{'es' if len(mods) == 1 else ''} beside a check, "
            "e.g. - {not_calls: create_refill_request, always: true}")]
    if len(rest) > 1:
        besides = f" besides {quoted_list(mods, 'and')}" if mods else ""
        return [Diagnostic(
            doc.key_span((*path, rest[1])), "S106",
            f"a check is one 'name: parameter' pair, but this one has {len(rest)} keys"
            f"{besides} ({quoted_list(rest, 'and')})",
            "put options inside the parameter, e.g. contains: {text: \"18:00\", "
            "ignore_case: true}, and start each check with its own '-'")]
    (name,) = rest
    if name in checks:
        return []
    return [Diagnostic(doc.key_span((*path, name)), "S101",
                       f"unknown check '{name}'{did_you_mean(name, sorted(checks))}",
                       "see the list of checks: scenarist checks, or docs/checks.md")]


# Options of some answer checks only, and the checks that take them: said so when written
# on another check (``equals: {text: x, anywhere: true}``).
ANSWER_OPTIONS: dict[str, tuple[str, ...]] = {
    "anywhere": ("contains", "matches", "not_contains"),
    "ignore_commas": ("contains",),
}


def _unknown_keys(doc: Document, path: DataPath, e: Any, what: str) -> list[Diagnostic]:
    allowed = sorted(e.schema.get("properties", {}))
    inst = e.instance if isinstance(e.instance, dict) else {}
    where = f"in {describe_path(path)}" if path else f"in {what}"
    out = []
    check = str(path[-1]) if path and _is_check_path(path[:-1]) else None
    for key in inst:
        if key in allowed:
            continue
        taken_by = ANSWER_OPTIONS.get(key)
        if check is not None and taken_by is not None:
            out.append(Diagnostic(
                doc.key_span((*path, key)), "S102",
                f"the check '{check}' does not take '{key}'; {quoted_list(taken_by, 'and')} "
                f"{'does' if len(taken_by) == 1 else 'do'}{did_you_mean(key, allowed)}",
                f"allowed keys here: {', '.join(allowed)}" if allowed else ""))
            continue
        out.append(
            Diagnostic(
                doc.key_span((*path, key)),
                "S102",
                f"unknown key '{key}' {where}{did_you_mean(key, allowed)}",
                f"allowed keys here: {', '.join(allowed)}" if allowed else "",
            )
        )
    return out


# ---------------------------------------------------------------- one problem per keyword


class _Problem(msgspec.Struct, frozen=True):
    """The best jsonschema error at one place, with what its wording needs."""

    doc: Document
    path: DataPath
    error: Any  # jsonschema.exceptions.ValidationError
    here: str  # the place, said for people ("'runs'", "the check 'calls'", "the scenario")
    checks: Mapping[str, CheckExample]

    @property
    def span(self) -> Span:
        return self.doc.span(self.path)

    @property
    def value(self) -> Any:
        """The value found in the file."""
        return self.error.instance

    @property
    def wanted(self) -> Any:
        """The keyword's value in the schema: ``["given"]`` for ``required``, 1 for
        ``minimum``."""
        return self.error.validator_value


def _required(p: _Problem) -> Diagnostic:
    value = p.value
    missing = [r for r in p.wanted if not isinstance(value, dict) or r not in value]
    key = missing[0] if missing else "?"
    prop = p.error.schema.get("properties", {}).get(key, {})
    hint = ""
    if prop.get("examples"):
        hint = f"for example: {key}: {shown_value(prop['examples'][0])}"
    place = p.doc.key_span(p.path) if p.path else p.span
    about = _about(prop.get("description", ""))
    return Diagnostic(place, "S104", f"{p.here} is missing '{key}'{about}", hint)


TEMPLATE_MAKES_TEXT = ("a template ({{ ... }}) always makes text; to give each case its own "
                       "number, write it in the case (a case may set runs, min_pass and tags)")


def _type(p: _Problem) -> Diagnostic:
    want = p.wanted if isinstance(p.wanted, list) else [p.wanted]
    words = _or([_TYPE_WORDS.get(str(w), str(w)) for w in want])
    hint = ""
    if "string" in want and isinstance(p.value, int | float | bool):
        hint = f"put it in quotes: \"{yaml_text(p.value)}\""
    elif isinstance(p.value, str) and "string" not in want and "{{" in p.value:
        hint = TEMPLATE_MAKES_TEXT
    elif p.path[-1:] == ("command",) and p.path[:1] == ("targets",):
        words_of = p.value.split() if isinstance(p.value, str) else []
        hint = ("write the program and its arguments as a list: "
                f"[{', '.join(words_of or ['node', 'agent.js'])}]")
    return Diagnostic(
        p.span, "S103",
        f"{p.here} must be {words}, not {type_name(p.value)} ({shown_value(p.value)})", hint,
    )


def _enum(p: _Problem) -> Diagnostic:
    if _is_check_path(p.path):  # a check written as a bare name
        return _bare_check(p)
    options = [str(o) for o in p.wanted]
    return Diagnostic(
        p.span,
        "S105",
        f"{p.here} must be {quoted_list(options)}; got {shown_value(p.value)}"
        f"{did_you_mean(str(p.value), options)}",
    )


def _const(p: _Problem) -> Diagnostic:
    if p.wanted is True:
        return Diagnostic(p.span, "S105", f"{p.here} takes true; got {shown_value(p.value)}",
                          "to turn the check off, remove it")
    return Diagnostic(p.span, "S105", f"{p.here} must be {shown_value(p.wanted)}")


def _min_properties(p: _Problem) -> Diagnostic:
    if _is_history_item(p.path):
        return Diagnostic(p.span, "S106", "an item of given.history cannot be empty",
                          "write who spoke and what they said, e.g. user: \"Hola\"")
    return Diagnostic(p.span, "S105", f"{p.here} needs at least {p.wanted} key(s)")


def _max_properties(p: _Problem) -> Diagnostic:
    if _is_history_item(p.path):
        keys = list(p.value) if isinstance(p.value, dict) else []
        return Diagnostic(
            p.doc.key_span((*p.path, keys[1])) if len(keys) > 1 else p.span, "S106",
            f"an item of given.history is one message, but this one has {len(keys)} keys "
            f"({quoted_list(keys, 'and')})",
            "start each message with its own '-': - user: ... then - assistant: ...")
    return Diagnostic(p.span, "S105", f"{p.here} has more than {p.wanted} key(s)")


def _minimum(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} must be at least {p.wanted}; "
                                      f"got {shown_value(p.value)}")


def _maximum(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} must be at most {p.wanted}; "
                                      f"got {shown_value(p.value)}")


def _min_length(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} cannot be empty")


def _max_length(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} is longer than {p.wanted} characters")


def _min_items(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} needs at least {p.wanted} item(s)")


def _unique_items(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} lists the same item twice")


def _pattern(p: _Problem) -> Diagnostic:
    return Diagnostic(p.span, "S105", f"{p.here} has an invalid form: {shown_value(p.value)}",
                      _pattern_hint(p.path))


def _combinator(p: _Problem) -> None:
    """``if``/``then``/``else`` and the ``*Of`` keywords: their branches' own errors say
    what is wrong; the combinator adds nothing."""
    return None


def _in_jsonschema_words(p: _Problem) -> Diagnostic:
    """A keyword without words of its own: jsonschema's message, at the place."""
    return Diagnostic(p.span, "S105", f"{p.here}: {p.error.message}")


KEYWORDS: dict[str, Callable[[_Problem], Diagnostic | None]] = {
    "required": _required,
    "type": _type,
    "enum": _enum,
    "const": _const,
    "maxProperties": _max_properties,
    "minProperties": _min_properties,
    "minimum": _minimum,
    "exclusiveMinimum": _minimum,
    "maximum": _maximum,
    "exclusiveMaximum": _maximum,
    "minLength": _min_length,
    "maxLength": _max_length,
    "minItems": _min_items,
    "uniqueItems": _unique_items,
    "pattern": _pattern,
    "if": _combinator,
    "then": _combinator,
    "else": _combinator,
    "allOf": _combinator,
    "anyOf": _combinator,
    "oneOf": _combinator,
}
"""The words for each JSON Schema keyword, the way python-jsonschema keeps its keyword
functions: one plain dict, keyed by the keyword that failed. ``additionalProperties`` and
``unevaluatedProperties`` are worded apart (:func:`_unknown_keys`: one diagnostic per
unknown key); any other keyword gets jsonschema's own message. ``propertyNames`` needs no
entry: jsonschema reports a bad key as its own keyword's error (``enum``, ``pattern``) with
the key as the value."""


def _one(doc: Document, path: DataPath, e: Any, what: str,
         checks: Mapping[str, CheckExample]) -> Diagnostic | None:
    here = describe_path(path) if path else what
    words = KEYWORDS.get(e.validator, _in_jsonschema_words)
    return words(_Problem(doc, path, e, here, checks))


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _about(description: str) -> str:
    """The first phrase of a description, for a parenthesis: (the moment the person speaks)."""
    cut = min((i for i in (description.find(c) for c in ".:(") if i > 0), default=len(description))
    text = description[:cut].strip()
    return f" ({text[0].lower()}{text[1:]})" if text else ""


def _is_check_path(path: DataPath) -> bool:
    """An item of the scenario's ``then``, or of a turn's (``when[i].then``)."""
    n = len(path)
    return (n >= 2 and path[-2] == "then" and isinstance(path[-1], int)
            and (n == 2 or (n == 4 and path[0] == "when" and isinstance(path[1], int))))


def _check_item_path(path: DataPath) -> DataPath | None:
    """The check item ``path`` is in (or is), or None outside the checks."""
    for n in (2, 4):
        if len(path) >= n and _is_check_path(path[:n]):
            return path[:n]
    return None


def check_trap(doc: Document, path: DataPath,
               checks: Mapping[str, CheckExample]) -> Diagnostic | None:
    """A YAML trap in the check item at ``path``, said with its fix (S106), or None:

    * a one-word check written inside ``{…}`` with ``always``/``name`` but without its
      value: ``{does_not_modify, always: true}`` (YAML reads ``does_not_modify`` as a key
      with no value) → write ``does_not_modify: true`` beside ``always: true``;
    * an unquoted comma inside ``{…}`` that cut a value in two: ``{…, name: blocked the
      debit card, once}`` (YAML reads ``once`` as a key of its own) → quote the text;
    * ``not_calls`` given a mapping it cannot read: ``{name: block_card, card_id: X}`` or
      ``{block_card: {card_id: X}}`` → ``{name: block_card, args: {card_id: X}}``.
    """
    item = value_at(doc.data, path)
    if not isinstance(item, dict):
        return None
    node = doc.node(path)
    if node is not None and node.id == "mapping":
        found = _comma_trap(doc, path, node, item, checks)
        if found is not None:
            return found
    mods = [m for m in CHECK_MODIFIERS if m in item]
    rest = [k for k in item if k not in CHECK_MODIFIERS]
    if mods and len(rest) == 1 and item[rest[0]] is None:  # - does_not_modify:\n  always: true
        word = rest[0]
        known = checks.get(word)
        if known is not None and known.examples[0] == f"{word}: true":
            return _one_word(doc, path, word, item, mods)
    forbid = item.get("not_calls")
    if isinstance(forbid, dict):
        return _not_calls_trap(doc, (*path, "not_calls"), forbid)
    return None


def _one_word(doc: Document, path: DataPath, word: str, item: dict[str, Any],
              mods: list[str]) -> Diagnostic:
    """A one-word check written beside ``name``/``always`` without its value, ``true``."""
    beside = " and ".join(f"`{m}: {yaml_text(item[m])}`" for m in mods)
    return Diagnostic(
        doc.key_span((*path, word)), "S106",
        f"the check '{word}' has no value here: beside {quoted_list(mods, 'and')} it is "
        f"written '{word}: true'",
        f"write `{word}: true` beside {beside}, e.g. - {{{word}: true, "
        + ", ".join(f"{m}: {yaml_text(item[m])}" for m in mods) + "}")


def _keyless(key: Any, value: Any) -> bool:
    """A flow-mapping entry written without ':' (``{a, b: 1}``: ``a`` has no value)."""
    return (value.id == "scalar" and value.value == "" and not value.style
            and value.start_mark.index == key.end_mark.index)


def _comma_trap(doc: Document, path: DataPath, node: Any, item: dict[str, Any],
                checks: Mapping[str, CheckExample]) -> Diagnostic | None:
    if not node.flow_style:
        for key, value in node.value:  # a check's own parameter: contains: {text: a, b}
            if value.id == "mapping" and key.id == "scalar":
                inner = _comma_trap(doc, (*path, key.value), value, {}, checks)
                if inner is not None:
                    return inner
        return None
    entries = [(k, v) for k, v in node.value if k.id == "scalar"]
    for i, (key, value) in enumerate(entries):
        if value.id == "mapping":
            inner = _comma_trap(doc, (*path, key.value), value, {}, checks)
            if inner is not None:
                return inner
        if not _keyless(key, value):
            continue
        word = key.value
        mods = [m for m in CHECK_MODIFIERS if m in item]
        known = checks.get(word)
        if known is not None and mods and known.examples[0] == f"{word}: true":
            found = _one_word(doc, path, word, item, mods)
            return msgspec.structs.replace(found, message=(
                f"the check '{word}' has no value here: inside {{…}} YAML reads '{word}' "
                "without ':' as a key with nothing after it"))
        before = entries[i - 1] if i else None
        if before is not None and before[1].id == "scalar" and before[1].value:
            prev_key, prev = before
            text = doc.text[prev.start_mark.index:key.end_mark.index]
            if prev.style:  # it was quoted: the comma came after the quotes
                text = f"{prev.value}, {word}"
            quoted = json.dumps(text, ensure_ascii=False)
            return Diagnostic(
                doc.key_span((*path, word)), "S106",
                f"the comma in {quoted} ends the value of '{prev_key.value}' inside {{…}}: "
                f"YAML reads '{word}' as a key of its own",
                f"quote the text: {prev_key.value}: {quoted}")
    return None


def _not_calls_trap(doc: Document, path: DataPath, forbid: dict[str, Any]) -> Diagnostic | None:
    """``not_calls`` written as a mapping other than ``{name, args}``."""
    extra = [k for k in forbid if k not in ("name", "args")]
    if not extra or not all(isinstance(k, str) for k in forbid):
        return None
    name = forbid.get("name")
    if isinstance(name, str):  # {name: block_card, card_id: CARD-02}
        args = {k: forbid[k] for k in extra}
        if isinstance(forbid.get("args"), dict):
            args = {**forbid["args"], **args}
    elif len(forbid) == 1 and isinstance(forbid[extra[0]], dict):  # {block_card: {...}}
        name, args = extra[0], forbid[extra[0]]
    else:
        return None
    fix = (f"not_calls: {{name: {name}, args: {{"
           + ", ".join(f"{k}: {_flow_text(v)}" for k, v in args.items()) + "}}")
    return Diagnostic(
        doc.key_span((*path, extra[0])), "S106",
        "not_calls cannot read this mapping: it takes a tool's name, and the argument values "
        "that make a call forbidden under 'args'",
        f"write {fix}")


_PLAIN = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


def _flow_text(value: Any) -> str:
    """A value as it can be written inside ``{…}``: plain when YAML reads it back the same,
    else in double quotes (``"2026-10-06"`` would be read as a date)."""
    if isinstance(value, str) and not _PLAIN.fullmatch(value):
        return json.dumps(value, ensure_ascii=False)
    return yaml_text(value) if not isinstance(value, (dict, list)) else json.dumps(value)


def _is_history_item(path: DataPath) -> bool:
    return len(path) == 3 and path[:2] == ("given", "history") and isinstance(path[2], int)


def _pattern_hint(path: DataPath) -> str:
    last = path[-1] if path else ""
    if last == "id":
        return "use letters, digits, '_', '-', '.' and '/' (for example clinic.hours_today)"
    if last == "name":
        return "use letters, digits, '_' and '-', starting with a letter (for example " \
               "book_appointment)"
    if last == "base_url":
        return "start with http:// or https://, e.g. http://127.0.0.1:8080/v1"
    if last == "entry":
        return "write the module, a colon and the function, e.g. myapp.agent:build"
    if last in ("answer", "pending") and path[:1] == ("targets",):
        return "write a dotted path to the value in the reply, e.g. reply or output.text"
    if last == "url" and path[:1] == ("targets",):
        return "start with http:// or https://, e.g. http://127.0.0.1:8000/chat"
    return ""


def _bare_check(p: _Problem) -> Diagnostic:
    name = str(p.value)
    if name in CHECK_MODIFIERS:
        return Diagnostic(p.span, "S106", f"'{name}' goes beside a check, not alone",
                          "write it in the check's item, e.g. - {not_calls: "
                          "create_refill_request, always: true}")
    known = p.checks.get(name)
    if known is not None:
        return Diagnostic(p.span, "S106", f"the check '{name}' needs a parameter",
                          f"write it as: - {known.examples[0]}")
    return Diagnostic(
        p.span,
        "S101",
        f"unknown check '{name}'{did_you_mean(name, sorted(p.checks))}",
        "see the list of checks: scenarist checks, or docs/checks.md",
    )
