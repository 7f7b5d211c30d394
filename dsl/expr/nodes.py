"""The expression's syntax tree: frozen dataclasses, each with its place in the text.

``parse`` builds them from Lark's tree; ``types`` checks them; ``compile`` turns them into
closures. Every node has ``loc``, the 0-based ``[start, end)`` character range it covers in
the expression, so a problem can be shown with a caret under the right character and a
value can be explained with the author's own words (``source[loc.start:loc.end]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Loc:
    """Where a node is in the expression: character offsets, 0-based, end excluded."""

    start: int
    end: int


Scalar = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Const:
    """A literal: ``'text'``, ``"text"``, ``12``, ``1.5``, ``true``, ``false``, ``null``."""

    value: Scalar
    loc: Loc


@dataclass(frozen=True, slots=True)
class ListOf:
    """A list written in the expression: ``['monday', 'tuesday']``."""

    items: tuple[Node, ...]
    loc: Loc


@dataclass(frozen=True, slots=True)
class Name:
    """A value by name: ``answer``, ``calls``; inside ``[...]`` also an item's field."""

    name: str
    loc: Loc


@dataclass(frozen=True, slots=True)
class Field:
    """``target.name``."""

    target: Node
    name: str
    loc: Loc
    name_loc: Loc


@dataclass(frozen=True, slots=True)
class Subscript:
    """``target[inner]``: an index (``calls[0]``, ``args['start-date']``) or a selection
    by a condition (``calls[name == 'book']``). The type checker decides which."""

    target: Node
    inner: Node
    loc: Loc


@dataclass(frozen=True, slots=True)
class FuncCall:
    """``func(args...)``: a function from the fixed library (``dsl.expr.functions``)."""

    func: str
    args: tuple[Node, ...]
    loc: Loc
    func_loc: Loc


@dataclass(frozen=True, slots=True)
class Not:
    operand: Node
    loc: Loc
    op_loc: Loc


@dataclass(frozen=True, slots=True)
class Neg:
    operand: Node
    loc: Loc
    op_loc: Loc


@dataclass(frozen=True, slots=True)
class BoolOp:
    """``a and b and c`` / ``a or b``: kept flat, evaluated left to right, stopping as
    soon as the result is known."""

    op: str  # "and" | "or"
    operands: tuple[Node, ...]
    loc: Loc


@dataclass(frozen=True, slots=True)
class Compare:
    """``==  !=  <  <=  >  >=  in  not in  matches``."""

    op: str
    left: Node
    right: Node
    loc: Loc
    op_loc: Loc


@dataclass(frozen=True, slots=True)
class Arith:
    """``+  -  *  /  %``."""

    op: str
    left: Node
    right: Node
    loc: Loc
    op_loc: Loc


@dataclass(frozen=True, slots=True)
class Bind:
    """``list as name``: the first argument of a function that goes through a list's items
    (``count``, ``any``, ``all``, ``sum``, ``map``), naming each item ``name`` in the
    condition or value that follows — so that a condition nested inside it can still read
    it: ``all(args.item_ids as id, count(row.items, item_id == id) >= 1)``."""

    value: Node
    name: str
    loc: Loc
    name_loc: Loc


@dataclass(frozen=True, slots=True)
class ObjectOf:
    """A mapping written in the expression: ``{transaction_type: 'refund', amount: 12.5}``."""

    entries: tuple[tuple[str, Node], ...]
    loc: Loc


@dataclass(frozen=True, slots=True)
class IfElse:
    """``then if condition else otherwise``: only the side the condition picks is worked
    out."""

    then: Node
    condition: Node
    otherwise: Node
    loc: Loc


Node = (Const | ListOf | Name | Field | Subscript | FuncCall | Not | Neg | BoolOp | Compare
        | Arith | Bind | ObjectOf | IfElse)


def children(node: Node) -> tuple[Node, ...]:
    """The direct sub-expressions of ``node``, left to right."""
    match node:
        case Const() | Name():
            return ()
        case ListOf(items=items):
            return items
        case Field(target=t):
            return (t,)
        case Bind(value=v):
            return (v,)
        case ObjectOf(entries=entries):
            return tuple(v for _, v in entries)
        case IfElse(then=t, condition=c, otherwise=o):
            return (t, c, o)
        case Subscript(target=t, inner=i):
            return (t, i)
        case FuncCall(args=args):
            return args
        case Not(operand=o) | Neg(operand=o):
            return (o,)
        case BoolOp(operands=ops):
            return ops
        case Compare(left=left, right=right) | Arith(left=left, right=right):
            return (left, right)


def depth(node: Node) -> tuple[int, Node]:
    """The nesting depth of ``node`` and its deepest node, without recursion (the tree
    may be deeper than Python's stack allows when it comes from hostile input)."""
    best, deepest = 1, node
    stack: list[tuple[Node, int]] = [(node, 1)]
    while stack:
        n, d = stack.pop()
        if d > best:
            best, deepest = d, n
        stack.extend((c, d + 1) for c in children(n))
    return best, deepest


def is_literal(node: Node) -> bool:
    """A value written out in the expression: ``'x'``, ``2``, ``[1, 'a']``."""
    if isinstance(node, Const):
        return True
    return isinstance(node, ListOf) and all(is_literal(i) for i in node.items)


_CALL_HEAD = re.compile(r"[^\W\d]\w*\(")


def snippet(source: str, loc: Loc, limit: int = 40) -> str:
    """A node as the author wrote it, on one line and shortened for messages:
    ``weekday(date(call('book_table').args.date))`` becomes ``weekday(...)``."""
    text = " ".join(source[loc.start : loc.end].split())
    if len(text) <= limit:
        return text
    head = _CALL_HEAD.match(text)
    if head and text.endswith(")") and _closes_at_end(text, head.end() - 1):
        return head.group(0) + "...)"
    return text[: limit - 1] + "…"


def _closes_at_end(text: str, open_at: int) -> bool:
    """Whether the '(' at ``open_at`` is closed by the last character (quotes ignored)."""
    level, quote = 0, ""
    for i in range(open_at, len(text)):
        c = text[i]
        if quote:
            if c == quote and text[i - 1] != "\\":
                quote = ""
        elif c in "'\"":
            quote = c
        elif c == "(":
            level += 1
        elif c == ")":
            level -= 1
            if level == 0:
                return i == len(text) - 1
    return False
