"""Schema words: JSON Schema problems said for people, shared by two stages.

:mod:`dsl.source.validate` explains what is wrong with a scenario file or ``scenarist.yaml``
against our schemas; the ``valid_args`` check (:mod:`dsl.checks.tools`) explains what is
wrong with a model's tool-call arguments against the author's ``input_schema``. Both name
a place in the data the same way (:func:`describe_path`). And the help an editor shows for
a node of our schemas (:func:`schema_doc`), for the checks and the target kinds that
declare their own keys. This module is a leaf: it imports nothing of Scenarist's, so any
stage can use it without importing another.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

# The keys a check item may hold beside its check, which change how the check counts or is
# shown: ``- {not_calls: create_refill_request, always: true, name: never refills}``. The
# check is the one key that is not one of these (dsl/checks/registry.py documents them).
CHECK_MODIFIERS: tuple[str, ...] = ("always", "name")


def describe_path(path: Iterable[str | int]) -> str:
    """A place in the data, said for people: ``'action' in given.tools (item 1)``,
    ``the check 'calls'``, ``'args' in the check 'calls'``."""
    p = tuple(path)
    if not p:
        return "the file"
    if len(p) >= 3 and p[0] == "then" and isinstance(p[1], int):
        if p[2] in CHECK_MODIFIERS and len(p) == 3:
            return f"'{p[2]}' of the check in item {p[1] + 1} of then"
        check = f"the check '{p[2]}'"
        return check if len(p) == 3 else f"'{_dotted(p[3:])}' in {check}"
    if len(p) >= 2 and p[0] == "when" and isinstance(p[1], int):
        turn = f"turn {p[1] + 1}"
        if len(p) >= 5 and p[2] == "then" and isinstance(p[3], int):
            if p[4] in CHECK_MODIFIERS and len(p) == 5:
                return f"'{p[4]}' of the check in item {p[3] + 1} of {turn}'s then"
            check = f"the check '{p[4]}' of {turn}"
            return check if len(p) == 5 else f"'{_dotted(p[5:])}' in {check}"
        if len(p) == 2:
            return turn
        return f"'{_dotted(p[2:])}' in {turn}"
    last, parent = p[-1], p[:-1]
    if isinstance(last, int):
        return f"item {last + 1} of {_dotted(parent)}" if parent else f"item {last + 1}"
    return f"'{last}' in {_dotted(parent)}" if parent else f"'{last}'"


def _dotted(path: tuple[str | int, ...]) -> str:
    out = ""
    for k in path:
        out += f" (item {k + 1})" if isinstance(k, int) else (f".{k}" if out else k)
    return out


_AUTHOR_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _author_validator(schema: Mapping[str, Any]) -> Any:
    """One validator per tool schema for the whole run (building one costs more than
    using it)."""
    hit = _AUTHOR_VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    # why: jsonschema, only to word a rejection; not for plan, lint, run, report, diff, recheck…
    from jsonschema import Draft202012Validator

    v = Draft202012Validator(schema)
    _AUTHOR_VALIDATORS[id(schema)] = (schema, v)
    return v


_FAST_VALIDATORS: dict[int, tuple[Mapping[str, Any], Any]] = {}


def _fast_validator(schema: Mapping[str, Any]) -> Any:
    """The schema's predicate from fastschema (None: a keyword it does not compile)."""
    hit = _FAST_VALIDATORS.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    # why: the fast schema, only for a schema's own check; not for report, diff or merge
    from .fastschema import compile_schema

    v = compile_schema(schema)
    _FAST_VALIDATORS[id(schema)] = (schema, v)
    return v


def schema_problems(schema: Mapping[str, Any], instance: Any) -> list[str]:
    """Problems of ``instance`` against an author's JSON Schema (a tool's input_schema),
    in short sentences, most relevant first; used by the valid_args check."""
    # the yes/no predicate first (~5 µs where jsonschema takes ~400 µs to find nothing,
    # once per call of every attempt, issue 27); jsonschema words only what it rejects
    fast = _fast_validator(schema)
    if fast is not None and fast(instance):
        return []
    # why: jsonschema, only to word a rejection; not for plan, lint, run, report, diff, recheck…
    from jsonschema.exceptions import relevance

    errors = sorted(_author_validator(schema).iter_errors(instance), key=relevance)
    out: list[str] = []
    for e in errors:
        where = describe_path(e.absolute_path)
        out.append(e.message if where == "the file" else f"{where}: {e.message}")
    return out


def schema_doc(text: str, *examples: Any) -> dict[str, Any]:
    """The help an editor shows for a schema node: ``description`` and
    ``markdownDescription`` (the same text), and ``examples`` when given. Spread it into
    the node: ``{"type": "string", **schema_doc("The tool's name.", "book")}``."""
    out: dict[str, Any] = {"description": text, "markdownDescription": text}
    if examples:
        out["examples"] = list(examples)
    return out
