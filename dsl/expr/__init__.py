"""The expression language of ``expect:`` checks (docs/expressions.md).

Small, safe and total: an expression reads an attempt's data and says true or false. It
is never handed to Python's ``eval``; it goes through four stages, each a module::

    text ──parse──▶ nodes ──typecheck──▶ types ──compile──▶ closures ──run──▶ value
                                                                  └──explain──▶ why false

``grammar/expr.lark`` is its syntax, ``functions`` its fixed library, ``types`` the shape of
an attempt's data, ``limits`` its safety limits. Usage::

    program = compile_expression("count(calls) <= 2")   # ProblemsFound, at lint time
    status, reason = verdict(program, env_for(attempt))  # "pass" | "fail" | "error"
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .compile import Program, compile_expression, constant, problems_of
from .errors import EvalError, Problem, ProblemsFound
from .explain import why_false
from .nodes import snippet
from .runtime import Bindings, env_for, what
from .types import GLOBALS, ITEM, KEYWORDS

__all__ = [
    "RESERVED",
    "Bindings",
    "EvalError",
    "NamedCheck",
    "Problem",
    "ProblemsFound",
    "Program",
    "compile_expression",
    "constant",
    "env_for",
    "problems_of",
    "verdict",
]

Status = Literal["pass", "fail", "error"]

# Words that cannot name a check in scenarist.yaml: `- expect: answer` must stay readable
# as the expression it looks like.
RESERVED = frozenset({*GLOBALS, *KEYWORDS, ITEM})


@dataclass(frozen=True, slots=True)
class NamedCheck:
    """A check defined once under ``checks:`` in scenarist.yaml and used by name in
    scenarios (``- expect: books_a_weekday``). ``program`` is None when the expression
    has errors; those are reported at scenarist.yaml's line and column."""

    name: str
    source: str
    program: Program | None


def verdict(program: Program, env: Bindings) -> tuple[Status, str]:
    """Run ``program`` on one attempt: pass, fail (with the values that made it false) or
    error (it could not be evaluated: the reason says why)."""
    text = program.text
    try:
        value = program.evaluate(env)
    except EvalError as exc:
        message = exc.message
        whole = snippet(program.source, program.root.loc) + ": "
        if message.startswith(whole):  # the failing part is the whole expression
            message = message[len(whole):]
        return "error", f"could not evaluate {text}: {message}"
    if value is True:
        return "pass", f"{text} is true"
    if value is False:
        return "fail", f"expected {text} to be true; it was false{why_false(program, env)}"
    return "error", f"{text} gave {what(value)}, not true or false"
