"""Arguments written in a scenario, checked against the tool's ``input_schema`` at lint time.

A check that expects a call with arguments (``calls: {name: book_appointment, args:
{date: "2026-10-06"}}``) can only pass when the model sends those arguments, and the model
sends what the tool's ``input_schema`` describes. So an argument the schema does not have
(``dat``), or a value the schema refuses (a number where it says text, ``limpieza`` where it
lists ``cleaning``), is a mistake in the scenario, reported where it is written:

* ``E232`` an argument the tool does not have, with "did you mean";
* ``E233`` a value of the wrong type (or outside the schema's ``enum``, ``pattern``, ...);
* ``W410`` arguments for a tool that has no ``input_schema`` (the model is told it takes
  none).

:func:`argument_problems` is the rule, for any mapping of arguments a scenario writes for a
tool (a check's ``args``; a fake tool's answers to given arguments); :func:`report_arguments`
places its findings in a file. Nothing here runs during a run.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import msgspec

from ..errors import Collector, Severity, did_you_mean, quoted_list
from ..model import ToolSpec
from ..source import schemacheck
from ..source.load import DataPath, Document
from ..source.validate import type_name, yaml_text

_TYPE_WORDS = {"string": "text", "integer": "a whole number", "number": "a number",
               "boolean": "true or false", "array": "a list", "object": "a mapping",
               "null": "empty"}


class ArgumentProblem(msgspec.Struct, frozen=True):
    """One thing wrong with the arguments written for a tool.

    ``where`` is the data path of the place to point at, inside the arguments mapping:
    ``("dat",)`` for an unknown argument (its key), ``("date",)`` for a wrong value, or
    ``()`` for the whole mapping. ``at_key``: point at the key rather than its value."""

    where: tuple[str | int, ...]
    at_key: bool
    code: str
    message: str
    hint: str
    severity: Severity = "error"


def argument_problems(tool: ToolSpec, args: Mapping[str, Any]) -> list[ArgumentProblem]:
    """What is wrong with ``args`` (argument name → value) written for ``tool``, in the
    order of ``args``; empty when they fit its input_schema (or it cannot be trusted)."""
    if not args or tool.args_declared is None:
        return []
    if tool.args_declared is False:
        names = quoted_list(list(args), "and")
        return [ArgumentProblem(
            (), True, "W410",
            f"the tool '{tool.name}' has no input_schema, so the model is told it takes no "
            f"arguments, and it will not send {names}",
            f"describe its arguments in the tool's input_schema, e.g. input_schema: {{type: "
            f"object, properties: {{{next(iter(args))}: {{type: string}}}}}}", "warning")]
    schema = tool.input_schema
    props = schema.get("properties")
    if not isinstance(props, dict):
        return []  # a schema without named arguments: nothing to compare names with
    out: list[ArgumentProblem] = []
    extra_allowed = schema.get("additionalProperties", False) is not False or bool(
        schema.get("patternProperties"))
    for name, value in args.items():
        if name not in props:
            if not extra_allowed:
                have = quoted_list(sorted(props), "and") or "none"
                out.append(ArgumentProblem(
                    (name,), True, "E232",
                    f"the tool '{tool.name}' has no argument '{name}'"
                    f"{did_you_mean(name, props)}",
                    f"the arguments in its input_schema: {have}"))
            continue
        out.extend(_value_problems(tool, schema, name, value))
    return out


def _value_problems(tool: ToolSpec, schema: Mapping[str, Any], name: str,
                    value: Any) -> list[ArgumentProblem]:
    """The schema's verdict on one argument's value: the value alone, inside the whole
    schema (so that ``$ref`` and ``$defs`` resolve), its other arguments left out."""
    check = schemacheck.checker(schema, without=("required", "minProperties"))
    alone = {name: value}
    if check.is_valid(alone):
        return []
    try:
        errors = [e for e in check.errors(alone) if tuple(e.absolute_path)[:1] == (name,)]
    except Exception:  # a schema jsonschema cannot read: jsonschema-rs's words
        said = [m for where, m in check.rs_errors(alone) if where[:1] == (name,)]
        return [ArgumentProblem((name,), False, "E233",
                                f"the argument '{name}' of the tool '{tool.name}' does not "
                                f"fit its input_schema: {said[0]}", "")] if said else []
    if not errors:
        return []
    e = schemacheck.by_relevance(errors)[0]
    where = tuple(e.absolute_path)
    inner = "" if len(where) == 1 else " (" + "".join(
        f"[{k}]" if isinstance(k, int) else f".{k}" for k in where[1:]).lstrip(".") + ")"
    shown = json.dumps(e.instance, ensure_ascii=False)
    if e.validator == "type":
        want = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        words = " or ".join(_TYPE_WORDS.get(str(w), str(w)) for w in want)
        message = (f"the argument '{name}'{inner} of the tool '{tool.name}' must be {words}, "
                   f"not {type_name(e.instance)} ({shown})")
        hint = (f"put it in quotes: \"{yaml_text(e.instance)}\"" if "string" in want
                and isinstance(e.instance, int | float | bool) else "")
    elif e.validator == "enum":
        options = [str(o) for o in e.validator_value]
        message = (f"the argument '{name}'{inner} of the tool '{tool.name}' must be "
                   f"{quoted_list(options)}; got {shown}"
                   f"{did_you_mean(str(e.instance), options)}")
        hint = "the values its input_schema allows"
    else:
        message = (f"the argument '{name}'{inner} of the tool '{tool.name}' does not fit its "
                   f"input_schema: {e.message}")
        hint = ""
    return [ArgumentProblem(where, False, "E233", message, hint)]


# ---- a call's arguments, as a real API checks them ------------------------------------------


def call_problem(tool: ToolSpec, args: Any) -> str | None:
    """What is wrong with the arguments of a call to ``tool`` (the model's), in words that
    name the argument and what was expected — as a real API's refusal says it; None when
    they fit its input_schema. A table tool refuses such a call (error kind
    ``invalid-args``) and changes nothing (dsl/compiler/faketools.py)."""
    if tool.args_declared is None:
        return None  # a schema that is not valid (reported by lint) cannot judge
    if not isinstance(args, dict):
        return f"the arguments must be a JSON object, not {type_name(args)}"
    check = schemacheck.checker(tool.input_schema)  # the one engine of "is it valid"
    if check.refused is not None or check.is_valid(args):
        return None
    try:
        errors = schemacheck.by_relevance(check.errors(args))
    except Exception:  # a schema jsonschema cannot read: jsonschema-rs's own words
        return "; ".join(message for _, message in check.rs_errors(args)) or None
    return _in_words(tool, errors[0]) if errors else None


def _in_words(tool: ToolSpec, e: Any) -> str:
    where = list(e.absolute_path)
    name = str(where[0]) if where else ""
    inner = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in where[1:])
    arg = f"the argument '{name}{inner}'"
    shown = json.dumps(e.instance, ensure_ascii=False, default=str)
    if len(shown) > 80:
        shown = shown[:79] + "…"
    if e.validator == "required":
        missing = e.message.split("'")[1] if "'" in e.message else ""
        return f"the argument '{missing}' is missing (it is required)"
    if e.validator == "additionalProperties":
        props = sorted(e.schema.get("properties", {}))
        extra = sorted(set(e.instance) - set(props)) if isinstance(e.instance, dict) else []
        unknown = extra[0] if extra else "?"
        have = quoted_list(props, "and") or "none"
        return (f"there is no argument '{unknown}'{did_you_mean(unknown, props)} (the "
                f"arguments are {have})")
    if e.validator == "type":
        want = e.validator_value if isinstance(e.validator_value, list) else [e.validator_value]
        words = " or ".join(_TYPE_WORDS.get(str(w), str(w)) for w in want)
        return f"{arg} must be {words}, not {type_name(e.instance)} ({shown})"
    if e.validator == "enum":
        options = [json.dumps(o, ensure_ascii=False) if not isinstance(o, str) else o
                   for o in e.validator_value]
        return f"{arg} must be {quoted_list(options)}, not {shown}"
    if e.validator == "const":
        return f"{arg} must be {json.dumps(e.validator_value, ensure_ascii=False)}, not {shown}"
    return f"{arg} does not fit the tool's input_schema: {e.message}" if name else \
        f"the arguments do not fit the tool's input_schema: {e.message}"


def report_arguments(tool: ToolSpec, args: Mapping[str, Any], doc: Document, path: DataPath,
                     diags: Collector) -> bool:
    """Check ``args``, the mapping at ``path`` in ``doc``, against ``tool``; report each
    problem at its place. True when there is no error (warnings allowed)."""
    ok = True
    for p in argument_problems(tool, args):
        place = (*path, *p.where)
        at = doc.key_span(place) if p.at_key else doc.span(place)
        if p.severity == "warning":
            diags.warning(at, p.code, p.message, p.hint)
        else:
            ok = False
            diags.error(at, p.code, p.message, p.hint)
    return ok
