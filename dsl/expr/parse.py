"""Parse: expression text → the nodes of ``dsl.expr.nodes``.

The grammar is ``grammar/expr.lark`` (LALR). The parser is built once per process; Lark's
tree (with positions) is turned into frozen nodes by an explicit :class:`Transformer`
applied after parsing. A syntax error becomes one :class:`~dsl.expr.errors.Problem` (code
X301) written for the person who wrote the expression: the usual mistakes — ``=`` for
``==``, ``&&`` and ``||``, a quote or a bracket never closed, two comparisons chained — are
recognised from the unexpected token and its neighbours, and said in words.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import math
import re
from typing import Any

from lark import Lark, Token, Transformer, Tree, v_args
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken, VisitError

from ..source.resources import read_text
from .errors import Problem, ProblemsFound
from .limits import MAX_DEPTH, MAX_EXPR_CHARS, MAX_LITERAL_CHARS, MAX_NUMBER_CHARS
from .nodes import (
    Arith,
    Bind,
    BoolOp,
    Compare,
    Const,
    Field,
    FuncCall,
    IfElse,
    ListOf,
    Loc,
    Name,
    Neg,
    Node,
    Not,
    ObjectOf,
    Subscript,
    depth,
)

GRAMMAR = "expr.lark"
# the parser built from GRAMMAR, saved: python -m dsl._buildtools.exprparser
TABLES = "expr.lark.json"


def build_parser(grammar: str) -> Lark:
    """The LALR parser of the grammar text (about 50 ms to build)."""
    return Lark(
        grammar,
        parser="lalr",
        lexer="basic",  # keywords are always keywords: `and b` is reported at 'and'
        maybe_placeholders=True,
    )


@functools.cache
def parser() -> Lark:
    """The LALR parser of ``grammar/expr.lark``, once per process: loaded from the tables
    saved beside the grammar (``grammar/expr.lark.json``, 4 ms) when they were made from
    this very grammar by this version of Lark, else built (50 ms). The tables are plain
    JSON read by Lark's own loader — never a pickle."""
    grammar = read_text("grammar", GRAMMAR)
    try:
        saved = json.loads(read_text("grammar", TABLES))
    except (FileNotFoundError, ValueError):
        saved = None
    if isinstance(saved, dict) and saved.get("key") == tables_key(grammar):
        with contextlib.suppress(Exception):  # tables Lark cannot read: build instead
            return Lark.load(from_json(saved["parser"]))
    return build_parser(grammar)


def tables_key(grammar: str) -> str:
    """What the saved tables must have been made from: the grammar and Lark's version."""
    # why: Lark, only to build the parser's tables
    import lark

    digest = hashlib.sha256(grammar.encode("utf-8")).hexdigest()
    return f"lark {lark.__version__} · sha256 {digest}"


def tables_json(grammar: str) -> dict[str, Any]:
    """The saved form of the parser of ``grammar`` (what grammar/expr.lark.json holds)."""
    # why: Lark, only to build the parser's tables
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = build_parser(grammar).memo_serialize([TerminalDef, Rule])
    return {"key": tables_key(grammar), "parser": to_json({"data": data, "memo": memo})}


def to_json(x: Any) -> Any:
    """Lark's serialized parser as JSON: mappings with keys that are not text, and tuples,
    kept as such (``{"__pairs__": [[k, v], ...]}``, ``{"__tuple__": [...]}``)."""
    if isinstance(x, dict):
        if all(isinstance(k, str) for k in x) and not {"__pairs__", "__tuple__"} & set(x):
            return {k: to_json(v) for k, v in x.items()}
        return {"__pairs__": [[to_json(k), to_json(v)] for k, v in x.items()]}
    if isinstance(x, tuple):
        return {"__tuple__": [to_json(v) for v in x]}
    if isinstance(x, list):
        return [to_json(v) for v in x]
    if x is None or isinstance(x, str | int | float | bool):
        return x
    raise TypeError(f"cannot save a {type(x).__name__} in the parser tables")


def from_json(x: Any) -> Any:
    """The inverse of :func:`to_json`."""
    if isinstance(x, dict):
        if "__pairs__" in x:
            return {from_json(k): from_json(v) for k, v in x["__pairs__"]}
        if "__tuple__" in x:
            return tuple(from_json(v) for v in x["__tuple__"])
        return {k: from_json(v) for k, v in x.items()}
    if isinstance(x, list):
        return [from_json(v) for v in x]
    return x


def parse(text: str) -> Node:
    """Parse one expression; raise ProblemsFound (X301 syntax, X305 limits)."""
    if len(text) > MAX_EXPR_CHARS:
        raise _one("X305", f"the expression has {len(text):,} characters; at most "
                           f"{MAX_EXPR_CHARS:,} are allowed", MAX_EXPR_CHARS,
                   "split it into several expect checks")
    if not text.strip():
        raise _one("X301", "the expression is empty", 0,
                   "write a condition, for example: count(calls) <= 2")
    try:
        tree = parser().parse(text)
    except UnexpectedInput as exc:
        raise ProblemsFound([syntax_problem(exc, text)]) from None
    # Lark's transformer recurses once per level of the tree: refuse deep trees first.
    deep = _tree_depth(tree)
    if deep is not None:
        raise _too_deep(deep)
    try:
        node: Node = _ToNodes(text).transform(tree)
    except VisitError as exc:  # an error raised by our transformer, wrapped by Lark
        if isinstance(exc.orig_exc, ProblemsFound):
            raise exc.orig_exc from None
        raise
    levels, deepest = depth(node)
    if levels > MAX_DEPTH:
        raise _too_deep(deepest.loc.start)
    return node


def _one(code: str, message: str, offset: int, hint: str = "") -> ProblemsFound:
    return ProblemsFound([Problem(code, message, offset, hint)])


def _too_deep(offset: int) -> ProblemsFound:
    return _one("X305", f"the expression is nested more than {MAX_DEPTH} levels deep", offset,
                "split it into several expect checks")


def _tree_depth(tree: Tree[Token]) -> int | None:
    """The offset of a place nested deeper than the limit allows, or None."""
    limit = 2 * MAX_DEPTH + 4  # Lark's tree has about two levels per level of nodes
    stack: list[tuple[Tree[Token], int]] = [(tree, 1)]
    while stack:
        t, d = stack.pop()
        if d > limit:
            return _first_offset(t)
        stack.extend((c, d + 1) for c in t.children if isinstance(c, Tree))
    return None


def _first_offset(t: Tree[Token]) -> int:
    node: Any = t
    while isinstance(node, Tree) and node.children:
        node = next((c for c in node.children if c is not None), None)
    return int(node.start_pos or 0) if isinstance(node, Token) else 0


# ---------------------------------------------------------------- tree → nodes

_ESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "t": "\t"}
_ESCAPE = re.compile(r"\\(.)")


def unquote(raw: str) -> str:
    """The value of a quoted literal. ``\\\\ \\' \\" \\n \\t`` are escapes; a backslash
    before anything else is kept, so patterns like ``'\\d+'`` read as written."""
    return _ESCAPE.sub(lambda m: _ESCAPES.get(m.group(1), m.group(0)), raw[1:-1])


def raw_offset(raw: str, index: int) -> int:
    """Where character ``index`` of ``unquote(raw)`` is in ``raw`` (quotes included)."""
    i, n = 1, 0
    while i < len(raw) - 1 and n < index:
        i += 2 if raw[i] == "\\" and raw[i + 1] in _ESCAPES else 1
        n += 1
    return i


def _loc(meta: Any, children: list[Any]) -> Loc:
    """A rule's place: from its first to its last token. Lark can propagate positions
    itself, but deriving them here from the children halves the time of a parse."""
    if not meta.empty:
        return Loc(meta.start_pos, meta.end_pos)
    start: int | None = None
    end = 0
    for c in _leaves(children):
        if start is None:
            start = c.start
        end = c.end
    return Loc(start or 0, end)


def _leaves(children: list[Any]) -> list[Loc]:
    out: list[Loc] = []
    for c in children:
        if isinstance(c, Token):
            out.append(Loc(c.start_pos or 0, c.end_pos or 0))
        elif isinstance(c, Loc):
            out.append(c)
        elif isinstance(c, list | tuple):
            out.extend(_leaves(list(c)))
        elif c is not None and hasattr(c, "loc"):
            out.append(c.loc)
    return out


def _tok_loc(tok: Token) -> Loc:
    return Loc(tok.start_pos or 0, tok.end_pos or 0)


@v_args(meta=True)
class _ToNodes(Transformer[Token, Node]):
    """Lark tree → nodes. One method per rule (or alias) of grammar/expr.lark."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def number(self, meta: Any, children: list[Token]) -> Node:
        raw = str(children[0])
        if len(raw) > MAX_NUMBER_CHARS:
            raise _one("X305", f"this number has {len(raw)} digits; at most "
                               f"{MAX_NUMBER_CHARS} are allowed", _loc(meta, children).start)
        if any(c in raw for c in ".eE"):
            value: float | int = float(raw)
            if not math.isfinite(value):
                raise _one("X305", f"the number {raw} is too large", _loc(meta, children).start)
        else:
            value = int(raw)
        return Const(value, _loc(meta, children))

    def string(self, meta: Any, children: list[Token]) -> Node:
        raw = str(children[0])
        value = unquote(raw)
        if len(value) > MAX_LITERAL_CHARS:
            raise _one("X305", f"this text has {len(value):,} characters; at most "
                               f"{MAX_LITERAL_CHARS:,} are allowed in an expression",
                       _loc(meta, children).start)
        return Const(value, _loc(meta, children))

    def true(self, meta: Any, children: list[Token]) -> Node:
        return Const(True, _loc(meta, children))

    def false(self, meta: Any, children: list[Token]) -> Node:
        return Const(False, _loc(meta, children))

    def null(self, meta: Any, children: list[Token]) -> Node:
        return Const(None, _loc(meta, children))

    def paren(self, meta: Any, children: list[Any]) -> Node:
        # The brackets belong to the node's place: `(a or b)` is quoted with them.
        inner: Node = children[1]
        return dataclasses.replace(inner, loc=_loc(meta, children))

    def name(self, meta: Any, children: list[Token]) -> Node:
        return Name(str(children[0]), _loc(meta, children))

    def arguments(self, meta: Any, children: list[Node]) -> list[Node]:
        return children

    def bind(self, meta: Any, children: list[Any]) -> Node:
        value, _as, name = children
        return Bind(value, str(name), _loc(meta, children), _tok_loc(name))

    def call(self, meta: Any, children: list[Any]) -> Node:
        func, _lpar, args, _rpar = children
        return FuncCall(str(func), tuple(args or ()), _loc(meta, children), _tok_loc(func))

    def entries(self, meta: Any, children: list[Any]) -> list[tuple[str, Node]]:
        return children

    def entry(self, meta: Any, children: list[Any]) -> tuple[str, Node]:
        key, _colon, value = children
        name = unquote(str(key)) if key.type == "STRING" else str(key)
        return name, value

    def object_of(self, meta: Any, children: list[Any]) -> Node:
        _lbrace, entries, _rbrace = children
        return ObjectOf(tuple(entries or ()), _loc(meta, children))

    def if_else(self, meta: Any, children: list[Any]) -> Node:
        then, _if, condition, _else, otherwise = children
        return IfElse(then, condition, otherwise, _loc(meta, children))

    def list_of(self, meta: Any, children: list[Any]) -> Node:
        _lsqb, items, _rsqb = children
        return ListOf(tuple(items or ()), _loc(meta, children))

    def field(self, meta: Any, children: list[Any]) -> Node:
        target, name = children
        return Field(target, str(name), _loc(meta, children), _tok_loc(name))

    def subscript(self, meta: Any, children: list[Any]) -> Node:
        target, _lsqb, inner, _rsqb = children
        return Subscript(target, inner, _loc(meta, children))

    def neg(self, meta: Any, children: list[Any]) -> Node:
        op, operand = children
        return Neg(operand, _loc(meta, children), _tok_loc(op))

    def not_op(self, meta: Any, children: list[Any]) -> Node:
        op, operand = children
        return Not(operand, _loc(meta, children), _tok_loc(op))

    def _fold(self, children: list[Any]) -> Node:
        node: Node = children[0]
        for i in range(1, len(children), 2):
            op, right = children[i], children[i + 1]
            node = Arith(str(op), node, right, Loc(node.loc.start, right.loc.end),
                         _tok_loc(op))
        return node

    def sum(self, meta: Any, children: list[Any]) -> Node:
        return self._fold(children)

    def product(self, meta: Any, children: list[Any]) -> Node:
        return self._fold(children)

    def comp_op(self, meta: Any, children: list[Token]) -> tuple[str, Loc]:
        return " ".join(str(t) for t in children), _loc(meta, children)

    def comparison(self, meta: Any, children: list[Any]) -> Node:
        left, (op, op_loc), right = children
        return Compare(op, left, right, _loc(meta, children), op_loc)

    def and_test(self, meta: Any, children: list[Any]) -> Node:
        return BoolOp("and", tuple(children[::2]), _loc(meta, children))

    def or_test(self, meta: Any, children: list[Any]) -> Node:
        return BoolOp("or", tuple(children[::2]), _loc(meta, children))


# ---------------------------------------------------------------- friendly syntax errors

# Tokens that only begin a value: when the parser expects one of them, a value is missing.
# ('[', '-' and 'not' may also follow a value: calls[0], a - b, a not in b.)
_VALUE_ONLY = {"NAME", "NUMBER", "STRING"}
_COMPARISONS = {"EQ", "NE", "LT", "LE", "GT", "GE", "IN", "MATCHES"}
_CLOSE = {"(": ")", "[": "]", "{": "}"}
_OPEN = {")": "(", "]": "[", "}": "{"}
_VALUE_HINT = ("a value is a name such as answer, a number, a text in quotes, a list in [ ] "
               "or a function such as len(answer)")
_OPERATOR_HINT = ("values are joined by an operator: == != < <= > >= in matches + - * / or "
                  "the words and, or")
_SMART_QUOTES = "‘’‚“”„«»"
# Words people write for an operator the language spells differently.
_WORD_FIXES = {
    "contains": "to look for a text inside another, write 'text' in answer",
    "contain": "to look for a text inside another, write 'text' in answer",
    "includes": "to look for a text inside another, write 'text' in answer",
    "has": "to look for a text inside another, write 'text' in answer",
    "is": "'is' is not an operator: to compare use '==' (and '!=' for 'is not')",
    "equals": "to compare use '=='",
    "eq": "to compare use '=='",
    "AND": "write 'and' in lower case",
    "And": "write 'and' in lower case",
    "OR": "write 'or' in lower case",
    "Or": "write 'or' in lower case",
    "NOT": "write 'not' in lower case",
    "Not": "write 'not' in lower case",
    "IN": "write 'in' in lower case",
    "then": "there is no if/then: write the condition itself, e.g. not called('x') or "
            "'sorry' in answer",
}


def syntax_problem(exc: UnexpectedInput, text: str) -> Problem:
    """Turn Lark's error into a Problem that says what is wrong in words."""
    if isinstance(exc, UnexpectedCharacters):
        return _bad_character(text, exc.pos_in_stream or 0)
    if isinstance(exc, UnexpectedToken):
        return _bad_token(text, exc.token, set(exc.expected))
    return Problem("X301", "this expression cannot be read",  # pragma: no cover
                   exc.pos_in_stream or 0)


def _bad_character(text: str, pos: int) -> Problem:
    ch = text[pos]
    nxt = text[pos + 1] if pos + 1 < len(text) else ""
    prev = text[pos - 1] if pos > 0 else ""
    if ch == "=":
        if prev == "=":  # '===': '==' was read, then one '=' too many
            start = pos - 2 if pos >= 2 and text[pos - 2] == "=" else pos - 1
            return Problem("X301", "'===' is not an operator; to compare use '=='", start)
        if nxt == ">":
            return Problem("X301", "'=>' is not an operator; for 'at least' use '>='", pos)
        if nxt == "<":
            return Problem("X301", "'=<' is not an operator; for 'at most' use '<='", pos)
        return Problem("X301", "'=' compares nothing; to compare use '=='", pos,
                       "two equal signs ask whether two values are the same: "
                       "call('book').args.time == '15:00'")
    if ch in "&|":
        op = ch * 2 if nxt == ch else ch
        word = "and" if ch == "&" else "or"
        what = "require both conditions" if ch == "&" else "accept either condition"
        return Problem("X301", f"'{op}' is not an operator; to {what} use '{word}'", pos,
                       f"for example: called('search') {word} called('book')")
    if ch == "!":
        return Problem("X301", "'!' is not an operator; to negate a condition use 'not'",
                       pos, "'!=' (with the equal sign) means 'is not equal'")
    if ch in "'\"":
        other = '"' if ch == "'" else "'"
        return Problem("X301", f"this text has no closing quote: add {ch} at its end", pos,
                       f"a text begins and ends with the same quote, on one line; to put a "
                       f"{ch} inside it, write \\{ch} or put the text between {other} quotes")
    if ch in _SMART_QUOTES:
        return Problem("X301", f"'{ch}' is a typographic quote; write texts between straight "
                               "quotes ' or \"", pos,
                       "word processors change quotes as you type; type the quote again "
                       "in a plain text editor")
    shown = ch if ch.isprintable() else f"U+{ord(ch):04X}"
    return Problem("X301", f"the character '{shown}' cannot be used here", pos,
                   "outside quotes an expression has only names, numbers, operators and "
                   "brackets; put texts in quotes, e.g. '18:00'")


def _describe(tok: Token) -> str:
    if tok.type == "NAME":
        return f"the name '{tok}'"
    if tok.type == "NUMBER":
        return f"the number {tok}"
    if tok.type == "STRING":
        return f"the text {tok}"
    return f"'{tok}'"


def _tokens_before(text: str, pos: int) -> list[Token]:
    out: list[Token] = []
    try:
        for t in parser().lex(text):
            if (t.start_pos or 0) >= pos:
                break
            out.append(t)
    except UnexpectedInput:
        pass
    return out


def _brackets(text: str) -> tuple[list[tuple[str, int]], tuple[str, int] | None]:
    """Brackets left open at the end, and the first closing bracket that matches none."""
    stack: list[tuple[str, int]] = []
    i = 0
    while i < len(text):
        c = text[i]
        if c in "'\"":
            j = i + 1
            while j < len(text) and text[j] not in (c, "\n"):
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            continue
        if c in "([{":
            stack.append((c, i))
        elif c in ")]}":
            if stack and stack[-1][0] == _OPEN[c]:
                stack.pop()
            else:
                return stack, (c, i)
        i += 1
    return stack, None


def _bad_token(text: str, tok: Token, expected: set[str]) -> Problem:
    at_end = tok.type == "$END"
    pos = len(text) if at_end else (tok.start_pos or 0)
    before = _tokens_before(text, pos)
    prev = before[-1] if before else None
    opens, stray = _brackets(text)
    wants_value = bool(expected & _VALUE_ONLY)

    if "ELSE" in expected and "IF" not in expected:
        return Problem("X301", "'if' needs 'else' and the value otherwise", pos,
                       "write VALUE if CONDITION else OTHER, e.g. 'payment' if amount > 0 "
                       "else 'refund'")
    if at_end:
        if prev is not None and expected == {"NAME"}:
            return Problem("X301", "a field name is expected after '.'", prev.start_pos or 0,
                           "for example: call('book').args.date")
        if opens:
            c, i = opens[-1]
            return Problem("X301", f"this '{c}' is never closed; add '{_CLOSE[c]}'", i,
                           f"every '{c}' needs a matching '{_CLOSE[c]}' after what it "
                           "groups")
        if prev is not None and wants_value:
            return Problem("X301", f"the expression ends too early: a value is expected after "
                                   f"{_describe(prev)}", prev.start_pos or 0, _VALUE_HINT)
        return Problem("X301", "the expression ends too early", pos)  # pragma: no cover

    if stray is not None and tok.type in ("RPAR", "RSQB", "RBRACE") and stray[1] == pos:
        c = stray[0]
        if opens:
            o, _ = opens[-1]
            return Problem("X301", f"this '{c}' does not match the '{o}' before it; close "
                                   f"that one with '{_CLOSE[o]}' first", pos)
        return Problem("X301", f"this '{c}' has no matching '{_OPEN[c]}'", pos,
                       f"remove it, or add the '{_OPEN[c]}' where the group begins")
    if expected == {"NAME"}:
        return Problem("X301", f"a field name is expected after '.', not {_describe(tok)}",
                       pos, "for example: call('book').args.date")

    if wants_value:
        if tok.type == "GT" and prev is not None and prev.type == "LT" \
                and prev.end_pos == tok.start_pos:
            return Problem("X301", "'<>' is not an operator; for 'is not equal' use '!='",
                           prev.start_pos or 0)
        if prev is None:
            return Problem("X301", f"the expression cannot begin with {_describe(tok)}", pos,
                           _VALUE_HINT)
        if tok.type == "NOT":
            return Problem("X301", f"'not' cannot come right after {_describe(prev)}; put the "
                                   "negated condition in brackets: (not ...)", pos)
        return Problem("X301", f"a value is expected after {_describe(prev)}, not "
                               f"{_describe(tok)}", pos, _VALUE_HINT)

    # A value was complete and something other than an operator follows it.
    if tok.type == "COMMA":
        return Problem("X301", "a ',' can only separate the arguments of a function or the "
                               "items of a list", pos,
                       "to require two conditions, join them with 'and'")
    if prev is not None and prev.type == "STRING" and tok.type == "NAME" \
            and prev.end_pos == tok.start_pos:
        q = str(prev)[0]
        return Problem("X301", f"the text {prev} ends at the {q} before '{tok}'", pos - 1,
                       f"to write a {q} inside a text, put a backslash before it (\\{q}) or "
                       f"put the text between the other quotes")
    chained = tok.type in _COMPARISONS or (tok.type == "NOT" and "IN" not in expected)
    if chained and "EQ" not in expected:
        return Problem("X301", f"comparisons cannot be chained: '{tok}' follows another "
                               "comparison", pos,
                       "compare one pair at a time and join them with 'and', e.g. "
                       "1 <= count(calls) and count(calls) <= 3")
    if prev is not None and prev.type == "NOT" and "IN" in expected:
        return Problem("X301", "after a value, 'not' can only begin 'not in'", prev.start_pos or 0,
                       "for example: 'sorry' not in answer; to negate a condition, put 'not' "
                       "before it: not called('cancel')")
    if tok.type == "NAME" and str(tok) in _WORD_FIXES:
        return Problem("X301", f"unexpected word '{tok}'; {_WORD_FIXES[str(tok)]}", pos)
    return Problem("X301", f"an operator is missing before {_describe(tok)}", pos,
                   _OPERATOR_HINT)
