"""Validate: a loaded :class:`~dsl.load.Document` against its JSON Schema (2020-12).

jsonschema yields every error lazily; we group them by place, keep the best one per place
(``best_match``), and rewrite each into a sentence for the person who wrote the file, at the
right ``line:col`` — an unknown key at the key itself, a wrong value at the value.
"""

from __future__ import annotations

import functools
import json
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from .errors import Diagnostic, did_you_mean, quoted_list
from .load import DataPath, Document
from .resources import load_schema

_TYPE_WORDS = {
    "string": "text",
    "integer": "a whole number",
    "number": "a number",
    "boolean": "true or false",
    "array": "a list",
    "object": "a mapping (key: value lines)",
    "null": "empty",
}


@functools.cache
def validator(name: str) -> Any:
    from jsonschema import Draft202012Validator

    return Draft202012Validator(load_schema(name))


@functools.cache
def fast_validator(name: str) -> Callable[[Any], bool] | None:
    """A compiled yes/no check for one of our schemas (``None`` when it cannot be
    compiled: then jsonschema does all the work)."""
    from .fastschema import compile_schema

    return compile_schema(load_schema(name))


def describe_path(path: Iterable[str | int]) -> str:
    """A place in the data, said for people: ``'action' in given.tools (item 1)``,
    ``the check 'calls'``, ``'args' in the check 'calls'``."""
    p = tuple(path)
    if not p:
        return "the file"
    if len(p) >= 3 and p[0] == "then" and isinstance(p[1], int):
        check = f"the check '{p[2]}'"
        return check if len(p) == 3 else f"'{_dotted(p[3:])}' in {check}"
    last, parent = p[-1], p[:-1]
    if isinstance(last, int):
        return f"item {last + 1} of {_dotted(parent)}" if parent else f"item {last + 1}"
    return f"'{last}' in {_dotted(parent)}" if parent else f"'{last}'"


def _dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for k in path:
        out += f" (item {k + 1})" if isinstance(k, int) else (f".{k}" if out else k)
    return out


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


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(doc: Document, schema_name: str, what: str) -> list[Diagnostic]:
    """Every schema problem in ``doc``, best one per place. ``what`` names the top level
    in messages ("the scenario", "scenarist.yaml")."""
    if doc.data is None:
        return []
    fast = fast_validator(schema_name)
    if fast is not None and fast(doc.data):
        return []  # valid: jsonschema (and its import) is needed only to explain errors
    errors = list(validator(schema_name).iter_errors(doc.data))
    if not errors:
        return []
    return _diagnose(doc, errors, what)


def _diagnose(doc: Document, errors: list[Any], what: str) -> list[Diagnostic]:
    from jsonschema.exceptions import best_match

    by_place: dict[DataPath, list[Any]] = defaultdict(list)
    for e in errors:
        by_place[tuple(e.absolute_path)].append(e)
    out: list[Diagnostic] = []
    for path, group in by_place.items():
        # the deepest path wins: a parent's error is usually a consequence
        deeper = any(o[: len(path)] == path and len(o) > len(path) for o in by_place)
        if deeper and all(e.validator in ("if", "then", "else", "allOf", "anyOf") for e in group):
            continue
        unknown = [e for e in group if e.validator in ("additionalProperties",
                                                        "unevaluatedProperties")]
        for e in unknown:
            out.extend(_unknown_keys(doc, path, e, what))
        rest = [e for e in group if e not in unknown]
        if rest:
            d = _one(doc, path, best_match(rest), what)
            if d is not None:
                out.append(d)
    return out


def _unknown_keys(doc: Document, path: DataPath, e: Any, what: str) -> list[Diagnostic]:
    allowed = sorted(e.schema.get("properties", {}))
    inst = e.instance if isinstance(e.instance, dict) else {}
    where = f"in {describe_path(path)}" if path else f"in {what}"
    out = []
    for key in inst:
        if key in allowed:
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


def _one(doc: Document, path: DataPath, e: Any, what: str) -> Diagnostic | None:
    v = e.validator
    here = describe_path(path) if path else what
    span = doc.span(path)
    value = e.instance
    if v == "required":
        missing = [r for r in e.validator_value if not isinstance(value, dict) or r not in value]
        key = missing[0] if missing else "?"
        prop = e.schema.get("properties", {}).get(key, {})
        hint = ""
        if prop.get("examples"):
            hint = f"for example: {key}: {_show(prop['examples'][0])}"
        place = doc.key_span(path) if path else span
        about = _about(prop.get("description", ""))
        return Diagnostic(place, "S104", f"{here} is missing '{key}'{about}", hint)
    if v == "propertyNames":
        return _bad_names(doc, path, e, here)
    if v == "type":
        want = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        words = _or([_TYPE_WORDS.get(str(w), str(w)) for w in want])
        hint = ""
        if "string" in want and isinstance(value, int | float | bool):
            hint = f"put it in quotes: \"{_yaml_text(value)}\""
        return Diagnostic(
            span, "S103", f"{here} must be {words}, not {type_name(value)} ({_show(value)})",
            hint,
        )
    if v == "enum":
        options = [str(o) for o in e.validator_value]
        if len(path) >= 2 and path[0] == "then" and isinstance(path[1], int) and len(path) == 2:
            return _bare_check(doc, path, value)
        return Diagnostic(
            span,
            "S105",
            f"{here} must be {quoted_list(options)}; got {_show(value)}"
            f"{did_you_mean(str(value), options)}",
        )
    if v == "const":
        if e.validator_value is True:
            return Diagnostic(
                span, "S105",
                f"{here} takes true; got {_show(value)}",
                "to turn the check off, remove it",
            )
        return Diagnostic(span, "S105", f"{here} must be {_show(e.validator_value)}")
    if v == "maxProperties" and _is_check_path(path):
        keys = list(value) if isinstance(value, dict) else []
        return Diagnostic(
            doc.key_span((*path, keys[1])) if len(keys) > 1 else span,
            "S106",
            f"a check is one 'name: parameter' pair, but this one has {len(keys)} keys "
            f"({quoted_list(keys, 'and')})",
            "put options inside the parameter, e.g. contains: {text: \"18:00\", "
            "ignore_case: true}, and start each check with its own '-'",
        )
    if v == "minProperties" and _is_check_path(path):
        return Diagnostic(span, "S106", "a check cannot be empty",
                          "write the check's name and its parameter, e.g. contains: \"18:00\"")
    if v in ("minimum", "exclusiveMinimum"):
        return Diagnostic(span, "S105", f"{here} must be at least {e.validator_value}; "
                                         f"got {_show(value)}")
    if v in ("maximum", "exclusiveMaximum"):
        return Diagnostic(span, "S105", f"{here} must be at most {e.validator_value}; "
                                         f"got {_show(value)}")
    if v == "minLength":
        return Diagnostic(span, "S105", f"{here} cannot be empty")
    if v == "maxLength":
        return Diagnostic(span, "S105", f"{here} is longer than {e.validator_value} characters")
    if v == "minItems":
        return Diagnostic(span, "S105", f"{here} needs at least {e.validator_value} item(s)")
    if v == "uniqueItems":
        return Diagnostic(span, "S105", f"{here} lists the same item twice")
    if v == "minProperties":
        return Diagnostic(span, "S105", f"{here} needs at least {e.validator_value} key(s)")
    if v == "pattern":
        return Diagnostic(span, "S105", f"{here} has an invalid form: {_show(value)}",
                          _pattern_hint(path))
    if v == "format":
        return Diagnostic(span, "S105", f"{here} is not a valid {e.validator_value}")
    if v in ("if", "then", "else", "allOf", "anyOf", "oneOf"):
        return None
    return Diagnostic(span, "S105", f"{here}: {e.message}")


def _or(words: list[str]) -> str:
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} or {words[-1]}"


def _about(description: str) -> str:
    """The first phrase of a description, for a parenthesis: (the moment the person speaks)."""
    cut = min((i for i in (description.find(c) for c in ".:(") if i > 0), default=len(description))
    text = description[:cut].strip()
    return f" ({text[0].lower()}{text[1:]})" if text else ""


def _yaml_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _is_check_path(path: DataPath) -> bool:
    return len(path) == 2 and path[0] == "then" and isinstance(path[1], int)


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
    return ""


def _check_names() -> list[str]:
    from .checks import REGISTRY

    return sorted(REGISTRY)


def _bad_names(doc: Document, path: DataPath, e: Any, here: str) -> Diagnostic | None:
    inst = e.instance if isinstance(e.instance, dict) else {}
    names = e.validator_value.get("enum")
    if names is not None:  # check names
        for key in inst:
            if key not in names:
                return Diagnostic(
                    doc.key_span((*path, key)),
                    "S101",
                    f"unknown check '{key}'{did_you_mean(key, names)}",
                    "see the list of checks: scenarist checks, or docs/checks.md",
                )
        return None
    pattern = e.validator_value.get("pattern")
    for key in inst:
        import re

        if pattern and not re.search(pattern, key):
            return Diagnostic(
                doc.key_span((*path, key)),
                "S105",
                f"'{key}' is not a valid name in {here}",
                "use letters, digits, '_' and '-', starting with a letter",
            )
    return None


def _bare_check(doc: Document, path: DataPath, value: Any) -> Diagnostic:
    from .checks import REGISTRY

    name = str(value)
    if name in REGISTRY:
        example = REGISTRY[name].examples[0]
        return Diagnostic(
            doc.span(path),
            "S106",
            f"the check '{name}' needs a parameter",
            f"write it as: - {example}",
        )
    return Diagnostic(
        doc.span(path),
        "S101",
        f"unknown check '{name}'{did_you_mean(name, _check_names())}",
        "see the list of checks: scenarist checks, or docs/checks.md",
    )


_AUTHOR_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _author_validator(schema: Mapping[str, Any]) -> Any:
    """One validator per tool schema for the whole run (building one costs more than
    using it)."""
    hit = _AUTHOR_VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    from jsonschema import Draft202012Validator

    v = Draft202012Validator(schema)
    _AUTHOR_VALIDATORS[id(schema)] = (schema, v)
    return v


def schema_problems(schema: Mapping[str, Any], instance: Any) -> list[str]:
    """Problems of ``instance`` against an author's JSON Schema (a tool's input_schema),
    in short sentences; used by the valid_args check."""
    from jsonschema.exceptions import relevance

    errors = sorted(_author_validator(schema).iter_errors(instance), key=relevance)
    out: list[str] = []
    for e in errors:
        where = describe_path(e.absolute_path)
        out.append(e.message if where == "the file" else f"{where}: {e.message}")
    return out
