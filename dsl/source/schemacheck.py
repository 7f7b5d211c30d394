"""Schema check: the one engine that says whether a value fits a JSON Schema.

Every "is this valid?" Scenarist asks of a JSON Schema is answered here, by jsonschema-rs
(Draft 2020-12, compiled once per schema):

* a scenario file, a case's rendering of it, ``scenarist.yaml`` and a labels file against
  ``schemas/`` (:mod:`dsl.source.validate`);
* an author's ``input_schema`` against the JSON Schema meta-schema (:func:`schema_problem`,
  lint's ``E214``);
* the arguments a scenario writes for a tool (:mod:`dsl.compiler.arguments`, ``E232``/
  ``E233``), and a model's or an agent's arguments against the tool's ``input_schema``,
  whichever way the call came (the agent loop, a python agent's ``env.tools``, the MCP
  endpoint of an ``http``/``command`` agent): the ``valid_args`` check, and a tool that
  refuses a call whose arguments break its schema (:func:`problems`).

The words come from python-jsonschema: its errors carry the keyword that failed, the
keyword's value, the place and the schema around it, which lint's sentences are made from
(``validate.KEYWORDS``). It is asked only about a value jsonschema-rs has rejected, so a
valid file never imports it; :meth:`Checker.errors`, :func:`best_match` and
:func:`by_relevance` are the only doors to it.

The two engines agree on every scenario and suite file the tests make (tests/source/
test_schemacheck.py mutates the corpus thousands of times) but differ in corners: patterns
follow ECMA-262 in jsonschema-rs (``$`` does not match before a final newline; ``\\d``
and ``\\w`` are ASCII), non-finite numbers (not JSON; YAML's ``.inf``) are no number to
jsonschema-rs, ``multipleOf`` is exact there. Where jsonschema-rs rejects a value in which
jsonschema finds nothing to word, nothing is said (lint reports what it can explain);
where it accepts, jsonschema is not asked.

jsonschema-rs is imported by the first question (~8 ms, most of it the ``email.utils`` its
start loads: a command that validates nothing does not pay it), and never touches the
network: a ``$ref`` to another document is not fetched (``offline``), it makes the schema
invalid.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from .schemawords import describe_path

# Compiled checkers kept, per schema object (the schema is kept with it, so that its id
# cannot be reused while it is here). A run asks about a few schemas again and again; a
# suite of 10,000 cases may make a schema per case: the oldest are let go past this.
MAX_KEPT = 512


class SchemaProblem(msgspec.Struct, frozen=True):
    """Why a schema is not a valid JSON Schema: the place inside the schema (a data path)
    and the sentence (jsonschema's, or jsonschema-rs's where jsonschema sees nothing)."""

    where: tuple[str | int, ...]
    message: str
    instance: Any  # the value at that place in the schema


class Checker:
    """One schema, compiled by jsonschema-rs: :meth:`is_valid` answers, :meth:`errors`
    gives jsonschema's errors to word a rejection. A schema jsonschema-rs cannot compile
    (it is not a valid JSON Schema) accepts nothing; :attr:`refused` says why."""

    __slots__ = ("_rs", "_words", "refused", "schema")

    def __init__(self, schema: Any) -> None:
        # why: jsonschema-rs costs ~8 ms to import; a command that validates nothing skips it
        import jsonschema_rs

        self.schema = schema
        self._words: Any = None
        self.refused: SchemaProblem | None = None
        try:
            self._rs: Any = jsonschema_rs.Draft202012Validator(schema, offline=True)
        except (ValueError, jsonschema_rs.ReferencingError) as exc:
            self._rs = None
            self.refused = _rs_problem(exc)

    def is_valid(self, value: Any) -> bool:
        """Whether ``value`` fits the schema. A value that is not JSON (a key that is not
        text, a lone surrogate) fits nothing: the caller's words come from jsonschema."""
        if self._rs is None:
            return False
        try:
            return bool(self._rs.is_valid(value))
        except (ValueError, TypeError, OverflowError, RecursionError):
            return False

    def errors(self, value: Any) -> list[Any]:
        """jsonschema's errors for ``value`` (``jsonschema.exceptions.ValidationError``),
        for words; empty when it finds nothing. Ask only after :meth:`is_valid` said no.
        Raises what jsonschema raises for a schema it cannot use (a pattern Python's ``re``
        does not read, a reference it cannot resolve): :func:`problems` catches it."""
        return list(self.words.iter_errors(value))

    @property
    def words(self) -> Any:
        """jsonschema's ``Draft202012Validator`` of the schema, made (and jsonschema
        imported) on first use: the errors it yields are what messages are made from."""
        if self._words is None:
            # why: jsonschema, only to word a rejection; a valid file never needs it
            from jsonschema import Draft202012Validator

            self._words = Draft202012Validator(self.schema)
        return self._words

    def rs_errors(self, value: Any) -> list[tuple[tuple[str | int, ...], str]]:
        """jsonschema-rs's own errors for ``value``, as (place, sentence): the words where
        jsonschema cannot read the schema."""
        if self._rs is None:
            return [((), self.refused.message if self.refused else "not a valid JSON Schema")]
        try:
            return [(tuple(e.instance_path), e.message) for e in self._rs.iter_errors(value)]
        except (ValueError, TypeError, OverflowError, RecursionError) as exc:
            return [((), f"not a JSON value: {exc}")]


_KEPT: dict[tuple[int, tuple[str, ...]], tuple[Any, Checker]] = {}


def checker(schema: Any, without: tuple[str, ...] = ()) -> Checker:
    """The compiled :class:`Checker` of ``schema``, made once per schema object (a
    ``functools.cache``'d schema such as :func:`dsl.source.resources.load_schema`'s, or a
    tool's ``input_schema`` in a compiled plan, is compiled once per process).

    ``without``: top-level keywords left out of a mapping schema, e.g. ``("required",)``
    to check one argument of a tool alone (:mod:`dsl.compiler.arguments`)."""
    key = (id(schema), without)
    found = _KEPT.get(key)
    if found is not None and found[0] is schema:
        return found[1]
    made = Checker({k: v for k, v in schema.items() if k not in without}
                   if without and isinstance(schema, Mapping) else schema)
    if len(_KEPT) >= MAX_KEPT:
        del _KEPT[next(iter(_KEPT))]
    _KEPT[key] = (schema, made)
    return made


def is_valid(schema: Any, value: Any) -> bool:
    """Whether ``value`` fits ``schema`` (JSON Schema 2020-12): the yes/no everything asks."""
    return checker(schema).is_valid(value)


def problems(schema: Mapping[str, Any], value: Any) -> list[str]:
    """What is wrong with ``value`` against an author's JSON Schema (a tool's
    ``input_schema``), in short sentences, most relevant first; empty when it fits.

    This is the function for a tool call's arguments — the ``valid_args`` check uses it,
    and so does anything that refuses a call whose arguments break its tool's
    ``input_schema`` (an ``invalid-args`` tool error): each sentence names the argument
    and what was expected, ``'date': 5 is not of type 'string'``, ``'day' is a required
    property``. One compiled checker per schema object; jsonschema-rs says yes or no,
    jsonschema words a no (jsonschema-rs's own words where jsonschema cannot read the
    schema)."""
    check = checker(schema)
    if check.is_valid(value):
        return []
    try:
        errors = by_relevance(check.errors(value))
    except Exception:  # a schema jsonschema cannot read (a pattern re refuses): rs's words
        return [_placed(where, message) for where, message in check.rs_errors(value)]
    return [_placed(tuple(e.absolute_path), e.message) for e in errors]


def _placed(where: tuple[str | int, ...], message: str) -> str:
    place = describe_path(where)
    return message if place == "the file" else f"{place}: {message}"


def schema_problem(schema: Any) -> SchemaProblem | None:
    """Why ``schema`` is not a valid JSON Schema 2020-12 (``E214``), or None when it is:
    jsonschema-rs decides (the meta-schema, its patterns, its references); jsonschema's
    ``check_schema`` words a refusal, jsonschema-rs's own words where that finds nothing."""
    refused = checker(schema).refused
    if refused is None:
        return None
    # why: jsonschema, only to word a rejection; a valid schema never needs it
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return SchemaProblem(tuple(exc.absolute_path), exc.message, exc.instance)
    return refused


def _rs_problem(exc: Exception) -> SchemaProblem:
    where = tuple(getattr(exc, "instance_path", ()) or ())
    message = getattr(exc, "message", None) or str(exc).split("\n", 1)[0]
    return SchemaProblem(where, message, getattr(exc, "instance", None))


def best_match(errors: Iterable[Any]) -> Any:
    """jsonschema's choice of the one error to word among ``errors`` at one place."""
    # why: jsonschema, only to word a rejection
    from jsonschema.exceptions import best_match as best

    return best(errors)


def by_relevance(errors: Iterable[Any]) -> list[Any]:
    """``errors``, most relevant first (jsonschema's order)."""
    # why: jsonschema, only to word a rejection
    from jsonschema.exceptions import relevance

    return sorted(errors, key=relevance)


def same_json(one: Any, two: Any) -> bool:
    """JSON equality as a schema's ``const`` sees it: ``true`` is not ``1``, ``1`` is
    ``1.0``, lists and mappings item by item (for "the same check twice")."""
    if one is two:
        return True
    same = Checker({"const": one})
    return bool(one == two) if same.refused is not None else same.is_valid(two)
