"""Explain: say why an expression was false, with the values of its main parts.

Like pytest's rewritten assertions: ``weekday(date(call('book').args.date)) < 5`` that is
false is reported with ``weekday(...) = 6; call('book').args.date = "2026-10-04"``. Only
parts outside conditions are evaluated (a part inside ``calls[...]`` has no meaning on its
own), each with its own compiled closure; a part that cannot be evaluated is left out.
This runs only when a check fails, so it costs nothing on attempts that pass.
"""

from __future__ import annotations

from typing import Any

from .compile import Program
from .errors import EvalError
from .nodes import BoolOp, Call, Compare, Const, ListOf, Node, Not, snippet
from .runtime import Env, display

MAX_SHOWN = 4  # values in one explanation


def why_false(program: Program, env: Env) -> str:
    """``": answer matches '18' is false (answer = "...")"`` — to follow "it was false"."""
    return _Explainer(program, env).explain()


class _Explainer:
    def __init__(self, program: Program, env: Env) -> None:
        self.program = program
        self.env = env
        self.about_calls = False  # a called('x') or call('x') is among the culprits

    def src(self, node: Node) -> str:
        return snippet(self.program.source, node.loc)

    def value(self, node: Node) -> Any:
        fn = self.program.closures.get(id(node))
        if fn is None:  # pragma: no cover - every node has a closure
            raise EvalError("not compiled")
        self.env.reset()
        return fn(self.env)

    def explain(self) -> str:
        root = self.program.root
        lead = ""
        focus = root
        if isinstance(root, BoolOp) and root.op == "and":
            for o in root.operands:
                if self._safe(o) is not True:
                    focus = o
                    lead = f": {self.src(o)} is false"
                    break
        parts = self.shown(self.culprits(focus, True))
        if self.about_calls and len(parts) < MAX_SHOWN:
            names = [c["name"] for c in self.env.values["calls"]]
            parts.append("calls made: " + (", ".join(names) if names else "none"))
        return f"{lead} ({'; '.join(parts)})" if parts else lead

    def _safe(self, node: Node) -> Any:
        try:
            return self.value(node)
        except EvalError:
            return None

    def culprits(self, node: Node, want: bool) -> list[Node]:
        """Parts whose values tell why ``node`` was not ``want``."""
        match node:
            case BoolOp(op=op, operands=operands):
                if (op == "and") == want:  # one operand decided it: the first that did
                    for o in operands:
                        if self._safe(o) is (not want):
                            return self.culprits(o, want)
                    return []
                return [c for o in operands for c in self.culprits(o, want)]
            case Not(operand=operand):
                return self.culprits(operand, not want)
            case Compare(left=left, right=right):
                return [left, self.inner(left), right, self.inner(right)]
            case Call(func=func, args=args):
                if func in ("called", "call"):
                    self.about_calls = True
                if id(node) in self.program.typed.conditions:
                    args = args[:1]
                return [n for a in args for n in (a, self.inner(a))]
        return [node]

    def inner(self, node: Node) -> Node:
        """The data under a chain of functions: ``weekday(date(X))`` → ``X``."""
        while isinstance(node, Call) and id(node) not in self.program.typed.conditions:
            args = [a for a in node.args if not _literal(a)]
            if len(args) != 1:
                break
            node = args[0]
        return node

    def shown(self, nodes: list[Node]) -> list[str]:
        out: list[str] = []
        seen = {self.src(self.program.root)}
        for n in nodes:
            if _literal(n):
                continue
            text = self.src(n)
            if text in seen:
                continue
            seen.add(text)
            try:
                v = self.value(n)
            except EvalError:
                continue
            out.append(f"{text} = {display(v, 60)}")
            if len(out) == MAX_SHOWN:
                break
        return out


def _literal(node: Node) -> bool:
    if isinstance(node, Const):
        return True
    return isinstance(node, ListOf) and all(_literal(i) for i in node.items)


