"""Fake tools: how a tool definition (in the suite's library or a scenario's
``given.tools``) becomes a :class:`~dsl.model.ToolSpec`, and what a fake tool answers when
the agent calls it.

A call is answered, in order, by:

1. ``error: TEXT`` — the tool always fails: the model gets ``error: TEXT``;
2. ``answers`` — the first entry whose ``when`` arguments are all in the call with equal
   values (:func:`dsl.toolcalls.args_match`, the rule of the ``calls`` check's ``args``)
   gives its ``returns``, or fails with its ``error``;
3. ``returns`` — fixed text or data (a mapping or a list is sent as JSON), ``OK`` when the
   tool says nothing;
4. neither — when the tool has ``answers`` and no ``returns``, a call that matches none
   gets ``error: no record for these arguments: {...}``.

Every string of ``returns`` (and of an ``error`` text) may be a template over the call:
``{{ args.NAME }}``, ``{{ now }}``, ``{{ at }}`` — and, in a scenario with cases, the
case's values (``{{ drug }}``); lint checks each one at its own line and column. The
answer is a :class:`ToolResult`: the text the model gets, and ``error``
(``tool-error`` or ``no-record``) when it is an error, which the attempt records.

A tool with ``table:`` acts on the attempt's world instead (dsl/compiler/world.py,
dsl/compiler/rules.py): its call's arguments are first checked against its input_schema
as a real API would (``invalid-args``: nothing changes), then its rules may refuse it
(``refused``), its ``where`` match no row (``no-row``) or its ``create`` give an id a
row has (``row-exists``).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import Collector, did_you_mean
from ..model import Action, Call, ToolAnswer, ToolSpec
from ..source import schemacheck
from ..source.load import DataPath, Document
from ..toolcalls import args_match as args_match  # the rule lives there; kept importable here
from .arguments import call_problem, report_arguments
from .templates import (
    as_tool_text,
    bound,
    check_template,
    data_template,
    line_offset,
    render_tool_output,
    template_strings,
)

DEFAULT_RETURNS = "OK"
NO_RECORD = "error: no record for these arguments: {args}"


class ToolResult(NamedTuple):
    """What a fake tool answered: the text the model gets, and ``error`` (``tool-error``,
    ``no-record``) when that text is an error."""

    output: str
    error: str | None = None


def error_text(text: str) -> str:
    """An author's error as the model reads it: ``error: ...`` (said once)."""
    return text if text[:5].lower() == "error" else f"error: {text}"


def _render(template: Any, fixed: Any, args: Any, at: dt.datetime) -> str:
    if template is not None:
        try:
            return render_tool_output(template, args, at)
        except Exception as exc:  # a template over the model's arguments: report, go on
            return f"error: the tool failed: {exc}"
    return as_tool_text(fixed)


def answer(tool: ToolSpec, args: Any, at: dt.datetime, world: Any = None) -> ToolResult:
    """What ``tool`` answers to a call with ``args`` (the model's arguments) at the
    scenario's moment ``at``. A tool with ``table:`` acts on the attempt's ``world``
    (a :class:`dsl.compiler.world.World`)."""
    if tool.error is not None:
        return ToolResult(error_text(_render(tool.template, tool.error, args, at)),
                          "tool-error")
    if tool.table is not None and world is not None:
        # a table tool checks its arguments as a real API would: nothing changes
        problem = call_problem(tool, args)
        if problem is not None:
            return ToolResult(f"error: invalid arguments for {tool.name}: {problem}",
                              "invalid-args")
        return ToolResult(*world.act(tool, args, at))
    for a in tool.answers:
        if args_match(a.when, args):
            if a.error is not None:
                return ToolResult(error_text(_render(a.template, a.error, args, at)),
                                  "tool-error")
            return ToolResult(_render(a.template, a.returns, args, at))
    if not tool.has_returns:
        shown = json.dumps(args if args is not None else {}, ensure_ascii=False)
        return ToolResult(NO_RECORD.format(args=shown), "no-record")
    return ToolResult(_render(tool.template, tool.returns, args, at))


def take(tools: Mapping[str, ToolSpec], name: str, args: Any, raw: str, call_id: str,
         step: int, at: dt.datetime, world: Any = None) -> Call:
    """A call the agent made to one of the attempt's fake tools, as every target answers
    it — the agent loop, a python agent's ``env.tools``, and the MCP endpoint of an
    ``http`` or ``command`` agent: a tool the scenario does not have is not run (its
    output says which tools there are); a ``confirm: true`` tool's call is held, pending
    the person's decision (output None); any other is answered (:func:`answer`), a table
    tool on the attempt's ``world``."""
    tool = tools.get(name)
    if tool is None:
        have = ", ".join(sorted(tools)) or "none"
        out = f"error: there is no tool named '{name}'. The tools are: {have}."
        return Call(call_id, name, args, raw, out, None, False, "unknown-tool", step)
    if tool.confirm:
        return Call(call_id, name, args, raw, None, tool.action, True, None, step)
    out, error = answer(tool, args, at, world)
    return Call(call_id, name, args, raw, out, tool.action, False, error, step)


# ---- compiling a tool definition -----------------------------------------------------------


def compile_tool(
    doc: Document, path: DataPath, name: str, data: Mapping[str, Any], diags: Collector,
    values: dict[str, Any] | None = None,
) -> ToolSpec:
    """A tool definition (from the library or inline) as a ToolSpec. ``values``: the
    values of the scenario's case (dsl/compiler/cases.py), which its templates read too."""
    schema = data.get("input_schema") or {"type": "object", "properties": {}}
    # whether the author wrote the input_schema (None: it is not valid, so it cannot be
    # trusted): lint checks arguments against it only when True (dsl/compiler/arguments.py)
    declared: bool | None = "input_schema" in data
    if declared and not _check_input_schema(doc, path, name, schema, diags):
        declared = None
    error = data.get("error")
    if error is not None:
        for key in ("returns", "answers"):
            if key in data:
                diags.error(doc.key_span((*path, key)), "S107",
                            f"the tool '{name}' has both 'error' and '{key}': a tool with "
                            "'error' always fails, so it never returns anything",
                            f"remove '{key}', or remove 'error' and give the failing "
                            "arguments an entry with error: in answers")
    has_returns = "returns" in data or "answers" not in data
    returns = data.get("returns", DEFAULT_RETURNS)
    fixed = error if error is not None else returns
    where = "error" if error is not None else "returns"
    template = _template(doc, (*path, where), fixed, f"{where} of the tool '{name}'", diags,
                         values)
    placed = [(i, a) for i, item in enumerate(data.get("answers") or ())
              if item is not None  # found wrong by the schema (dsl/compiler/compile.py)
              and (a := _answer(doc, (*path, "answers", i), name, i, item, diags, values))
              is not None]
    answers = tuple(a for _, a in placed)
    action: Action = data.get("action", "read")
    table = None
    if "table" in data:
        from .world import table_action  # only a suite with a world loads it

        table = table_action(doc, path, name, data, diags, values)
    spec = ToolSpec(
        name=name,
        description=data.get("description", ""),
        input_schema=schema,
        action=action,
        confirm=bool(data.get("confirm", False)),
        returns=returns,
        span=doc.span(path),
        template=template,
        answers=answers,
        error=error,
        has_returns=has_returns,
        args_declared=declared,
        table=table,
        ends_conversation=data.get("ends_conversation") is True,
    )
    # the arguments an answer waits for are checked against the input_schema as a
    # check's args are: an answer for an argument the tool has not would never be given
    for i, a in placed:
        report_arguments(spec, a.when, doc, (*path, "answers", i, "when"), diags)
    return spec


def bind_tool(tool: ToolSpec, values: dict[str, Any]) -> ToolSpec:
    """``tool`` (compiled for one case) for another case: its templates read ``values``."""
    answers = tuple(ToolAnswer(a.when, a.returns, a.span, a.error, bound(a.template, values))
                    for a in tool.answers)
    table = tool.table
    if table is not None:
        # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
        from .world import bind_action

        table = bind_action(table, values)
    return ToolSpec(tool.name, tool.description, tool.input_schema, tool.action, tool.confirm,
                    tool.returns, tool.span, bound(tool.template, values), answers, tool.error,
                    tool.has_returns, tool.args_declared, table, tool.ends_conversation)


def _answer(doc: Document, path: DataPath, name: str, i: int, item: Mapping[str, Any],
            diags: Collector, values: dict[str, Any] | None) -> ToolAnswer | None:
    what = f"answer {i + 1} of the tool '{name}'"
    if "returns" in item and "error" in item:
        diags.error(doc.key_span((*path, "error")), "S107",
                    f"{what} has both 'returns' and 'error'",
                    "an answer either returns something or fails: keep one of them")
        return None
    if "returns" not in item and "error" not in item:
        diags.error(doc.key_span((*path, "when")), "S104",
                    f"{what} is missing 'returns' (or 'error')",
                    "say what the tool gives back for these arguments, e.g. returns: "
                    "{found: true}, or error: \"Patient not found\"")
        return None
    key = "error" if "error" in item else "returns"
    value = item[key]
    template = _template(doc, (*path, key), value, f"{key} of {what}", diags, values)
    return ToolAnswer(when=dict(item["when"]), returns=item.get("returns"),
                      span=doc.span(path), error=item.get("error"), template=template)


def _template(doc: Document, path: DataPath, value: Any, what: str,
              diags: Collector, values: dict[str, Any] | None = None) -> Any:
    """What renders ``value`` over a call (None: it holds no template); each template
    string that does not compile is reported at its own place."""
    ok = True
    for sub, source in template_strings(value):
        trouble = check_template(source)
        if trouble is None:
            continue
        ok = False
        inside = "" if not sub else " (at " + ", ".join(
            f"item {k + 1}" if isinstance(k, int) else f"'{k}'" for k in sub) + ")"
        diags.error(
            doc.span_in_string((*path, *sub), line_offset(source, trouble.line)),
            "E208",
            f"the template in {what}{inside} {trouble.verb}: {trouble.message}",
            trouble.hint("templates use {{ args.name }} for an argument; check the braces"),
        )
    return data_template(value, values) if ok else None


def _check_input_schema(doc: Document, path: DataPath, name: str, schema: Any,
                        diags: Collector) -> bool:
    """Whether ``schema`` is a valid JSON Schema (E214 where it is not)."""
    problem = schemacheck.schema_problem(schema)
    if problem is None:
        return True
    where = list(problem.where)
    at = doc.span((*path, "input_schema", *where))
    said = problem.message
    if where and where[-1] == "type" and isinstance(problem.instance, str):
        types = ["string", "number", "integer", "boolean", "object", "array", "null"]
        said = (f"'{problem.instance}' is not a JSON Schema type"
                f"{did_you_mean(problem.instance, types)}")
    diags.error(at, "E214", f"input_schema of the tool '{name}' is not a valid JSON "
                            f"Schema: {said}",
                "types are string, number, integer, boolean, object, array and null; "
                "see https://json-schema.org/understanding-json-schema/")
    return False
