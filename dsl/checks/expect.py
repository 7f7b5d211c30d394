"""The ``expect`` check: an expression of the expression language must be true.

``- expect: "count(calls) <= 2 and '18:00' in answer"`` — inline;
``- expect: books_a_weekday`` — a check defined under ``checks:`` in scenarist.yaml;
``- expect: {name: books a weekday, expr: "..."}`` — inline, with a name for the report.

In a scenario with cases, ``case.NAME`` reads the case's value NAME (``case`` is typed from
the cases' values): the check then carries that case's values.

Problems in the expression are reported at the YAML file's line and column of the
offending character (``Document.span_in_string``); for a named check, at scenarist.yaml's.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from ..compiler.cases import missing_in_expression
from ..errors import did_you_mean, quoted_list
from ..model import AttemptData, Outcome
from ..source.load import DataPath
from .registry import CheckContext, check, schema_doc

if TYPE_CHECKING:
    from ..expr import NamedCheck, Program
# The expression language (dsl.expr: its parser, types and functions) is imported by the
# functions below, when a suite has an expect: check (issue 27: ~10 ms of every command)

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SCORES = {"pass": 1.0, "fail": 0.0}

EXPR_SCHEMA: dict[str, Any] = {
    "type": "string",
    "minLength": 1,
    **schema_doc(
        "An expression that must be true: the values answer, calls, pending, tools, at, "
        "latency_ms, tokens, steps; operators and, or, not, == != < <= > >=, in, matches, "
        "+ - * / %; functions such as count, called, call, len, lower, json, date, weekday. "
        "See docs/expressions.md.",
        "count(calls) <= 2 and '18:00' in answer",
        "weekday(date(call('book_table').args.date)) < 5",
    ),
}

EXPECT_SCHEMA: dict[str, Any] = {
    "type": ["string", "object"],
    **schema_doc(
        "An expression that must be true (see docs/expressions.md), the name of a check "
        "defined under `checks:` in scenarist.yaml, or `{name, expr}` to give the "
        "expression a name for the report.",
        "count(calls) <= 2 and '18:00' in answer",
        "books_a_weekday",
        {"name": "books a weekday", "expr": "weekday(date(call('book_table').args.date)) < 5"},
    ),
    "minLength": 1,
    "if": {"type": "object"},
    "then": {
        "required": ["expr"],
        "additionalProperties": False,
        "properties": {
            "name": {
                "type": "string",
                "minLength": 1,
                **schema_doc("What the expression checks, in words, as the report shows it.",
                             "books a weekday"),
            },
            "expr": EXPR_SCHEMA,
        },
    },
}


class Expect(msgspec.Struct, frozen=True):
    title: str  # the check's name (named checks and {name, expr}); "" when inline
    program: Program
    case: dict[str, Any] | None = None  # the values of the scenario's case (case.NAME)


def prepare_expect(param: Any, ctx: CheckContext) -> Expect | None:
    sub: tuple[str, ...] = ()
    if isinstance(param, dict):
        source, title, sub = str(param["expr"]), str(param.get("name", "")), ("expr",)
    else:
        source, title = str(param), ""
    # why: the expression language (Lark); not for plan, lint, run, recheck or checks
    from ..expr import RESERVED, ProblemsFound, compile_expression, constant

    path: DataPath = (*ctx.path, *sub)
    named: Mapping[str, NamedCheck] = ctx.named_checks
    word = source.strip()
    if _NAME.fullmatch(word):
        found = named.get(word)
        if found is not None:
            if found.program is None:
                return None  # its problems are reported where it is defined
            _warn_tools(found.program, ctx, path, found.name)
            _warn_live(found.program, ctx, path, found.name)
            return Expect(title or found.name, found.program)
        if word not in RESERVED:
            _unknown_check(word, source.index(word), named, ctx, path)
            return None
    binding = ctx.extra.get("case")
    tables = ctx.extra.get("world")
    world = None
    if tables:
        # why: the world, only for a suite with one; not for plan, lint, run, recheck or checks
        from ..compiler.world import world_type

        world = world_type(tables)
    try:
        known: _Known | None = binding.programs.get(source) if binding is not None else None
        if known is None:
            program = compile_expression(source, named,
                                         case=binding.type if binding is not None else None,
                                         world=world)
            known = _Known(program, _reads_case(program))
            if binding is not None:
                binding.programs[source] = known
        program = known.program
    except ProblemsFound as exc:
        for p in exc.problems:
            at = ctx.doc.span_in_string(path, p.offset)
            if p.severity == "warning":
                ctx.warning(p.code, p.message, p.hint, at=at)
            else:
                ctx.error(p.code, p.message, p.hint, at=at)
        return None
    _warn_tools(program, ctx, path, "")
    _warn_live(program, ctx, path, "")
    same = constant(program)
    if same is not None:
        ctx.warning(same.code, same.message, same.hint,
                    at=ctx.doc.span_in_string(path, same.offset))
    if binding is None or not known.reads_case:
        return Expect(title, program)
    values = binding.take([name for name, _ in program.case_refs])
    lacking = [(name, offset) for name, offset in program.case_refs if name not in values]
    for name, offset in lacking:
        missing_in_expression(binding.info, name, ctx.doc.span_in_string(path, offset),
                              ctx.diagnostics)
    return None if lacking else Expect(title, program, values)


class _Known(NamedTuple):
    """An expression compiled for the cases of one file (``CaseBinding.programs``), and
    whether it reads ``case``: the same for each of them."""

    program: Program
    reads_case: bool


def _reads_case(program: Program) -> bool:
    # why: the expression language (Lark); not for plan, lint, run, recheck or checks
    from ..expr.typecheck import GlobalRef
    from ..expr.types import CASE

    return any(isinstance(r, GlobalRef) and r.name == CASE
               for r in program.typed.refs.values())


def _unknown_check(word: str, offset: int, named: Mapping[str, NamedCheck], ctx: CheckContext,
                   path: DataPath) -> None:
    # why: the expression language (Lark); not for plan, lint, run, recheck or checks
    from ..expr.types import GLOBALS

    at = ctx.doc.span_in_string(path, offset)
    if named:
        ctx.error(
            "E217",
            f"there is no check named '{word}' in scenarist.yaml"
            f"{did_you_mean(word, [*named, *GLOBALS])}",
            f"the checks defined under checks: are {quoted_list(sorted(named), 'and')}",
            at=at,
        )
        return
    ctx.error(
        "E217",
        f"'{word}' is neither a check defined in scenarist.yaml nor a value an expression "
        f"can use{did_you_mean(word, GLOBALS)}",
        "define it under checks: in scenarist.yaml, or write an expression such as "
        "count(calls) <= 2 (see docs/expressions.md)",
        at=at,
    )


def _warn_tools(program: Program, ctx: CheckContext, path: DataPath, named: str) -> None:
    """W413 for called('x') / call('x') naming a tool the scenario does not have: the agent
    is not offered it (it may still call a tool by that name, so the value is not fixed)."""
    for func, tool, offset in program.tool_refs:
        if tool in ctx.tools or tool in ctx.broken_tools:
            continue
        value = "false" if func == "called" else "null"
        have = quoted_list(sorted(ctx.tools), "and") or "none"
        where = f"the check '{named}' uses {func}('{tool}'), but " if named else ""
        ctx.warning(
            "W413",
            f"{where}the scenario has no tool '{tool}': the agent is not offered it, so "
            f"{func}('{tool}') is {value} unless the agent calls a tool it was not given by "
            f"that name{did_you_mean(tool, ctx.tools)}",
            f"the scenario's tools are {have}",
            at=ctx.span(*path[len(ctx.path):]) if named else
            ctx.doc.span_in_string(path, offset),
        )


def _warn_live(program: Program, ctx: CheckContext, path: DataPath, named: str) -> None:
    """W414 for a value only a live attempt measures (``latency_ms``): the same transcript
    passes on replay (the cassette's latency) or recheck (the run's) and fails live, or the
    other way round, as the endpoint's speed varies. Not when the item says it is meant
    (``allow: {W414: why}``)."""
    for name, offset in program.live_refs[:1]:
        where = f"the check '{named}' reads {name}, which" if named else f"{name}"
        ctx.warning(
            "W414",
            f"{where} is measured only when the attempt runs live: the verdict depends on "
            "how fast the endpoint was that day, not on what the agent did (a replay checks "
            "the latency its cassette recorded, a recheck the run's)",
            "check what the agent did instead (steps, calls); or, for a latency budget, mark "
            "the check: allow: {W414: \"why\"} beside expect:",
            at=ctx.span(*path[len(ctx.path):]) if named else
            ctx.doc.span_in_string(path, offset),
        )


def describe_expect(param: Any) -> str:
    if isinstance(param, dict):
        return f"expect: {param.get('name') or param.get('expr')}"
    text = " ".join(str(param).split())
    return f"expect: {text if len(text) <= 80 else text[:79] + '…'}"


@check(
    "expect",
    doc="An expression about the attempt is true (docs/expressions.md).",
    schema=EXPECT_SCHEMA,
    examples=(
        "expect: \"count(calls) <= 2 and '18:00' in answer\"",
        "expect: \"weekday(date(call('book_table').args.date)) < 5\"",
        "expect: books_a_weekday          # defined under checks: in scenarist.yaml",
        "expect: {name: books a weekday, expr: \"weekday(date(call('book_table')"
        ".args.date)) < 5\"}",
    ),
    prepare=prepare_expect,
    group="expression",
    details="The expression is checked when the scenario is linted: unknown names, wrong "
    "types and syntax errors are reported at their line and column. When it is false, "
    "the reason shows the values of its main parts; when it cannot be evaluated on an "
    "attempt (an index out of range, a text that is not a number), the check ends as "
    "*error* with the reason.",
    describe=describe_expect,
)
def expect(p: Expect, a: AttemptData) -> Outcome:
    # why: the expression language (Lark); not for plan, lint, run, recheck or checks
    from ..expr import env_for, verdict
    from ..expr.types import CASE

    env = env_for(a)
    if p.case is not None:
        env.values[CASE] = p.case  # every check of one attempt has the attempt's case
    status, reason = verdict(p.program, env)
    if p.title:
        reason = f"{p.title}: {reason}"
    return Outcome(status, reason, _SCORES.get(status))
