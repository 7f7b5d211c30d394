"""Explain: say why an expression was false, with the values of its main parts.

Like pytest's rewritten assertions: ``weekday(date(call('book').args.date)) < 5`` that is
false is reported with ``weekday(...) = 6; call('book').args.date = "2026-10-04"``; an
``all(calls, action == 'read')`` that is false names the first call that is not, with
its ``action``. Each part is evaluated with its own compiled closure; a part that cannot
be evaluated is left out. This runs only when a check fails, so it costs nothing on
attempts that pass.
"""

from __future__ import annotations

from typing import Any

from .compile import Program
from .errors import EvalError
from .nodes import BoolOp, Compare, FuncCall, Node, Not, is_literal, snippet
from .runtime import Bindings, display

MAX_SHOWN = 4  # values in one explanation
MAX_ITEMS = 3  # items of a list explained for any(...)
# Functions whose value already sums up their argument: count(calls) = 2 says enough,
# the list of calls itself would only be noise.
_SUMMARIES = frozenset({"len", "count", "sum", "min", "max", "any", "all", "first", "last"})

Part = tuple[Node, bool]  # a node, and whether it is the data under the previous part


def why_false(program: Program, env: Bindings) -> str:
    """``": answer matches '18' is false (answer = "...")"`` — to follow "it was false"."""
    return _Explainer(program, env).explain()


class _Explainer:
    def __init__(self, program: Program, env: Bindings) -> None:
        self.program = program
        self.env = env
        self.about_calls = False  # a called('x') or call('x') is among the culprits
        self.notes: list[str] = []  # explanations of conditions over items

    def src(self, node: Node) -> str:
        return snippet(self.program.source, node.loc)

    def whole(self, node: Node) -> str:
        """The node's text, unshortened: what tells two parts apart."""
        return " ".join(self.program.source[node.loc.start:node.loc.end].split())

    def value(self, node: Node) -> Any:
        self.env.reset()
        return self.program.closures[id(node)](self.env)

    def safe(self, node: Node) -> Any:
        try:
            return self.value(node)
        except EvalError:
            return None

    def explain(self) -> str:
        root = self.program.root
        lead = ""
        focus = root
        if isinstance(root, BoolOp) and root.op == "and":
            for o in root.operands:
                if self.safe(o) is not True:
                    focus = o
                    lead = f": {self.src(o)} is false"
                    break
        parts = self.shown(self.culprits(focus, True), {self.whole(root)})
        parts.extend(self.notes)
        if self.about_calls and len(parts) < MAX_SHOWN:
            names = [c["name"] for c in self.env.values["calls"]]
            parts.append("calls made: " + (", ".join(names) if names else "none"))
        return f"{lead} ({'; '.join(parts)})" if parts else lead

    def culprits(self, node: Node, want: bool) -> list[Part]:
        """Parts whose values tell why ``node`` was not ``want``."""
        match node:
            case BoolOp(op=op, operands=operands):
                if (op == "and") == want:  # one operand decided it: the first that did
                    for o in operands:
                        if self.safe(o) is (not want):
                            return self.culprits(o, want)
                    return []
                return [c for o in operands for c in self.culprits(o, want)]
            case Not(operand=operand):
                return self.culprits(operand, not want)
            case Compare(left=left, right=right):
                return [(left, False), (self.inner(left), True),
                        (right, False), (self.inner(right), True)]
            case FuncCall(func=func, args=args):
                if func in ("called", "call"):
                    self.about_calls = True
                if id(node) in self.program.typed.conditions:
                    if func in ("any", "all"):
                        self.items(node, want, only_first=(func == "all") == want)
                    return [(args[0], False)] if func == "count" else []
                return [p for a in args for p in ((a, False), (self.inner(a), True))]
        return [(node, False)]

    def items(self, node: FuncCall, want: bool, only_first: bool) -> None:
        """Name the items that made ``any``/``all`` come out other than ``want``: those for
        which the condition was ``not want`` — the first one when it alone decided (a
        failing item of ``all``), a few when every item did (``any`` that found none)."""
        seq, cond = node.args
        try:
            values = self.value(seq)
        except EvalError:
            return
        if type(values) is not list:
            return
        stack = self.env.items
        level = len(stack)
        shown = 0
        for i, item in enumerate(values):
            stack.append(item)
            try:
                if self.safe(cond) is not (not want):
                    continue
                parts = self.shown(self.culprits(cond, want), set())
            finally:
                del stack[level:]
            label = f"{self.src(seq)}[{i}]"
            if isinstance(item, dict) and isinstance(item.get("name"), str):
                label += f" ({item['name']})"
            self.notes.append(f"{label}: {', '.join(parts)}" if parts else label)
            shown += 1
            if only_first or shown == MAX_ITEMS:
                break

    def inner(self, node: Node) -> Node:
        """The data under a chain of functions: ``weekday(date(X))`` → ``X``."""
        while isinstance(node, FuncCall) and node.func not in _SUMMARIES \
                and id(node) not in self.program.typed.conditions:
            args = [a for a in node.args if not is_literal(a)]
            if len(args) != 1:
                break
            node = args[0]
        return node

    def shown(self, parts: list[Part], seen: set[str]) -> list[str]:
        out: list[str] = []
        last = ""
        for n, under in parts:
            if is_literal(n):
                continue
            key = self.whole(n)
            if key in seen:
                continue
            seen.add(key)
            text = self.src(n)
            try:
                v = display(self.value(n), 60)
            except EvalError:
                continue
            if under and v == last:  # trim(answer) and answer: the same text twice
                continue
            last = v
            out.append(f"{text} = {v}")
            if len(out) == MAX_SHOWN:
                break
        return out


