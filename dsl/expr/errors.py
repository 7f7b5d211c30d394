"""What can go wrong with an expression.

* :class:`Problem` — found while compiling (lint time): a code (X301–X305, E204, W404), a
  message for the person who wrote the expression, a hint, and the 0-based ``offset`` of
  the offending character inside the expression. The caller (``dsl.checks.expect`` or
  ``dsl.compiler.suite``) turns the offset into the YAML file's line and column.
* :class:`ProblemsFound` — raised inside the compiler to stop at the first syntax error or
  to carry the problems of a whole expression; never escapes :func:`dsl.expr.compile_expression`.
* :class:`EvalError` — raised while evaluating on one attempt (an index out of range,
  ``number('abc')``, a regex that ran out of time). The ``expect`` check turns it into an
  outcome with status ``error`` and this message as its reason.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Problem:
    """One compile-time problem in an expression."""

    code: str  # X301 syntax, X302 unknown name, X303 types, X304 arguments, X305 limits
    message: str
    offset: int  # 0-based, in the expression's text
    hint: str = ""
    severity: Literal["error", "warning"] = "error"


class ProblemsFound(Exception):
    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("; ".join(p.message for p in self.problems))


class EvalError(Exception):
    """The expression could not be evaluated on this attempt; the message says why."""

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else "the expression could not be evaluated"
