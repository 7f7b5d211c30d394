"""Compile: typed nodes → one Python closure per node, called with an :class:`Bindings`.

No Python source is generated and nothing is ``eval``'d: each node becomes a small
function that calls its children's functions and applies the language's rule. The static
types decide which rule is compiled (a known call's field is a dict lookup; JSON data gets
the general, checked path), so the common cases are a few function calls each.

A value the rule cannot handle raises :class:`~dsl.expr.errors.EvalError` with a message
that names the part of the expression as the author wrote it (``calls[2]: calls has 2
items, so there is no item 2``).
"""

from __future__ import annotations

import datetime as dt
import decimal
import functools
import math
import operator
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..source.saferegex import REGEX_TIMEOUT_S
from .errors import EvalError, Problem, ProblemsFound
from .functions import FUNCTIONS, ArgValueError, Function
from .limits import MAX_TEXT_CHARS
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
    Name,
    Neg,
    Node,
    Not,
    ObjectOf,
    Subscript,
    is_literal,
    snippet,
)
from .runtime import (
    DATE_GETTERS,
    NOT_JSON,
    NUMS,
    Bindings,
    display,
    equal,
    exact,
    kind,
    number_in,
    plain,
    read_json,
    same,
    what,
)
from .typecheck import GlobalRef, ItemFieldRef, ItemRef, Typed, typecheck
from .types import Type

Fn = Callable[[Bindings], Any]

_SIMPLE: frozenset[type] = frozenset({str, int, float, bool, type(None), dt.date})
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge,
}


@dataclass(frozen=True, slots=True)
class Program:
    """A compiled expression, ready to run on any number of attempts."""

    source: str
    root: Node
    type: Type
    text: str  # the source as a reason quotes it: on one line, shortened
    fn: Fn
    closures: Mapping[int, Fn]  # id(node) → its closure (for explanations)
    typed: Typed
    tool_refs: tuple[tuple[str, str, int], ...]  # (called|call, tool, offset)
    case_refs: tuple[tuple[str, int], ...] = ()  # case.NAME: (NAME, offset)
    live_refs: tuple[tuple[str, int], ...] = ()  # latency_ms: (NAME, offset)

    def evaluate(self, env: Bindings) -> Any:
        """The expression's value on ``env``; raises EvalError."""
        env.reset()
        return self.fn(env)


def compile_expression(source: str, named_checks: Collection[str] = (),
                       *, condition: bool = True, case: Type | None = None,
                       world: Type | None = None,
                       names: tuple[tuple[str, Type], ...] | None = None) -> Program:
    """Parse, check and compile; raise ProblemsFound with every problem found.

    ``named_checks`` are the suite's check names (used in "did you mean" messages);
    ``condition=False`` accepts an expression of any type (tests, docs); ``case`` is the
    type of ``case`` in a scenario with cases (``types.case_of``); ``world``, of ``world``
    and ``world_before`` in a scenario with a world (``types.world_of``); ``names``, the
    values it reads instead of an attempt's, with their types (a table tool's rules read
    ``args``, ``row`` and ``world``: dsl/compiler/rules.py).

    A Program is immutable, so the same text compiles once per process: suites repeat
    their expressions from file to file (and a scenario's cases share theirs), and parsing
    is most of linting one."""
    return _compile_once(source, tuple(named_checks), condition, case, world, names)


@functools.lru_cache(maxsize=4096)
def _compile_once(source: str, named_checks: tuple[str, ...], condition: bool,
                  case: Type | None, world: Type | None = None,
                  names: tuple[tuple[str, Type], ...] | None = None) -> Program:
    from .parse import parse  # Lark is imported only when there is an expression

    root = parse(source)
    typed = typecheck(root, source, named_checks, condition, case, world,
                      dict(names) if names is not None else None)
    if typed.problems:
        raise ProblemsFound(sorted(typed.problems, key=lambda p: p.offset))
    compiler = _Compiler(typed)
    fn = compiler.fn(root)
    return Program(source, root, typed.type_of(root), shown(source), fn, compiler.closures,
                   typed, tuple(typed.tool_refs), tuple(typed.case_refs),
                   tuple(typed.live_refs))


MAX_SHOWN_CHARS = 200  # of an expression, in a reason


def shown(source: str) -> str:
    """The expression as a reason quotes it: on one line, shortened."""
    text = " ".join(source.split())
    return text if len(text) <= MAX_SHOWN_CHARS else text[: MAX_SHOWN_CHARS - 1] + "…"


def constant(program: Program) -> Problem | None:
    """A warning for an expression that never looks at the attempt (``1 < 2``): it gives
    the same result on every attempt, so the check cannot tell good ones from bad."""
    if program.typed.reads_attempt:
        return None
    start = len(program.source) - len(program.source.lstrip())
    return Problem("W404", "this expression does not look at the attempt, so it gives the same "
                           "result every time", start,
                   "use what the agent did in it: answer, calls, at, latency_ms, ...",
                   "warning")


def problems_of(source: str, named_checks: Collection[str] = (), *,
                condition: bool = True) -> tuple[Problem, ...]:
    """Every problem of an expression (empty when it compiles)."""
    try:
        compile_expression(source, named_checks, condition=condition)
    except ProblemsFound as exc:
        return exc.problems
    return ()


class _Compiler:
    def __init__(self, typed: Typed) -> None:
        self.typed = typed
        self.closures: dict[int, Fn] = {}

    def snip(self, node: Node) -> str:
        return snippet(self.typed.source, node.loc)

    def fn(self, node: Node) -> Fn:
        f = self._build(node)
        self.closures[id(node)] = f
        return f

    def _build(self, node: Node) -> Fn:
        match node:
            case Const(value=value):
                return lambda e: value
            case ListOf(items=items):
                fns = [self.fn(i) for i in items]
                return lambda e: [f(e) for f in fns]
            case Name():
                return self.name(node)
            case Field():
                return self.field(node)
            case Subscript():
                if id(node) in self.typed.selections:
                    return self.select(node)
                return self.index(node)
            case FuncCall():
                return self.call(node)
            case Not():
                return self.negation(node)
            case Neg():
                return self.minus(node)
            case BoolOp():
                return self.boolean(node)
            case Compare():
                return self.compare(node)
            case Arith():
                return self.arith(node)
            case Bind(value=value):  # only as a function's first argument (typecheck)
                return self.fn(value)
            case ObjectOf(entries=entries):
                made = [(k, self.fn(v)) for k, v in entries]
                return lambda e: {k: f(e) for k, f in made}
            case IfElse():
                return self.if_else(node)

    # -------------------------------------------------------------- names and fields

    def name(self, node: Name) -> Fn:
        ref = self.typed.refs[id(node)]
        match ref:
            case GlobalRef(name=key):
                return lambda e: e.values[key]
            case ItemRef(level=level):
                return lambda e: e.items[level]
            case ItemFieldRef(level=level, field=fld, kind="object"):
                return lambda e: e.items[level].get(fld)  # a row may lack a column
            case ItemFieldRef(level=level, field=fld, kind="date"):
                getter = DATE_GETTERS[fld]
                return lambda e: getter(e.items[level])
            case ItemFieldRef(level=level, field=fld, fallback=fallback):
                return self.json_item_field(level, fld, fallback)
        raise AssertionError(f"unresolved name {node.name}")  # pragma: no cover

    def json_item_field(self, level: int, fld: str, fallback: str | None) -> Fn:
        def run(e: Bindings) -> Any:
            item = e.items[level]
            if type(item) is dict:
                if fld in item:
                    return item[fld]
                return e.values[fallback] if fallback else None
            if fallback:
                return e.values[fallback]
            if item is None:
                return None
            raise EvalError(f"{fld}: the item {display(item)} is {kind(item)}, which has no "
                            f"field '{fld}'")

        return run

    def field(self, node: Field) -> Fn:
        t = self.typed.type_of(node.target)
        target = self.fn(node.target)
        name = node.name
        if t.kind == "object":
            def known(e: Bindings) -> Any:
                o = target(e)
                return None if o is None else o.get(name)  # a case may lack a value

            return known
        if t.kind == "date":
            getter = DATE_GETTERS[name]

            def date_field(e: Bindings) -> Any:
                d = target(e)
                return None if d is None else getter(d)

            return date_field
        if t.kind == "null":
            return lambda e: None
        where, of = self.snip(node), self.snip(node.target)

        def data_field(e: Bindings) -> Any:
            o = target(e)
            if type(o) is dict:
                return o.get(name)
            if o is None:
                return None
            if type(o) is str and t.navigable:
                o = read_json(e, o)
                if o is NOT_JSON or o is None:
                    return None
                if type(o) is dict:
                    return o.get(name)
            raise EvalError(f"{where}: {of} is {what(o)}, which has no field '{name}'")

        return data_field

    # -------------------------------------------------------------- [ ]

    def as_list(self, e: Bindings, value: Any, node: Node, navigable: bool, what_for: str) -> Any:
        """``value`` as a list to go through, or None for null; raise otherwise."""
        if type(value) is list or value is None:
            return value
        if navigable and type(value) is str:
            data = read_json(e, value)
            if data is NOT_JSON or data is None:
                return None
            if type(data) is list:
                return data
            value = data
        raise EvalError(f"{what_for}: {self.snip(node)} is {what(value)}, not a list")

    def items_meeting(self, e: Bindings, seq: list[Any], cond: Fn, where: Node) -> Iterator[bool]:
        stack = e.items
        for item in seq:
            e.tick()
            stack.append(item)
            try:
                ok = cond(e)
            finally:
                stack.pop()
            if ok is not True and ok is not False:
                raise EvalError(f"{self.snip(where)} must be true or false for each item; for "
                                f"{display(item)} it is {what(ok)}")
            yield ok

    def select(self, node: Subscript) -> Fn:
        target = self.fn(node.target)
        cond = self.fn(node.inner)
        navigable = self.typed.type_of(node.target).navigable
        where = self.snip(node)

        def run(e: Bindings) -> Any:
            seq = self.as_list(e, target(e), node.target, navigable, where)
            if seq is None:
                return None
            return [item for item, ok in zip(seq, self.items_meeting(e, seq, cond, node.inner),
                                             strict=False) if ok]

        return run

    def index(self, node: Subscript) -> Fn:
        t = self.typed.type_of(node.target)
        target = self.fn(node.target)
        inner = node.inner
        if t.kind == "object" and isinstance(inner, Const) and isinstance(inner.value, str):
            key = inner.value
            return lambda e: None if (o := target(e)) is None else o[key]
        idx = self.fn(inner)
        where, of, navigable = self.snip(node), self.snip(node.target), t.navigable

        def run(e: Bindings) -> Any:
            seq = target(e)
            i = idx(e)
            ts = type(seq)
            if ts is str and navigable:
                seq = read_json(e, seq)
                if seq is NOT_JSON:
                    return None
                ts = type(seq)
            if ts is list:
                if type(i) is float and i.is_integer():
                    i = int(i)
                if type(i) is not int:
                    raise EvalError(f"{where}: a list's index is a whole number; it was "
                                    f"{what(i)}")
                if -len(seq) <= i < len(seq):
                    return seq[i]
                n = len(seq)
                count = "no items" if n == 0 else "1 item" if n == 1 else f"{n} items"
                extra = (f" (items are counted from 0: the first is {of}[0])"
                         if i == n and n > 0 else "")
                raise EvalError(f"{where}: {of} has {count}, so there is no item {i}{extra}")
            if ts is dict:
                if type(i) is str:
                    return seq.get(i)
                raise EvalError(f"{where}: {of} is an object; its fields are read with a text, "
                                f"not {what(i)}")
            if seq is None:
                return None
            raise EvalError(f"{where}: {of} is {what(seq)}, which cannot be indexed with [ ]")

        return run

    # -------------------------------------------------------------- functions

    def call(self, node: FuncCall) -> Fn:
        f = FUNCTIONS[node.func]
        args = node.args
        if id(node) in self.typed.conditions:
            return self.call_with_condition(node, f)
        if f.name in ("called", "call") and isinstance(args[0], Const) \
                and isinstance(args[0].value, str):
            tool = args[0].value
            if f.name == "called":
                return lambda e: tool in e.first_call
            return lambda e: e.first_call.get(tool)
        fns = [self.fn(a) for a in args]
        impl, env, nulls = f.impl, f.env, f.nulls
        fail = self.argument_error

        if len(fns) == 1:
            a0 = fns[0]
            if f.name in ("len", "count"):
                def sized(e: Bindings) -> Any:
                    v = a0(e)
                    if type(v) is list:
                        return len(v)
                    try:
                        return impl(v)
                    except ArgValueError as exc:
                        raise fail(node, exc, (v,)) from None

                return sized

            def one(e: Bindings) -> Any:
                v = a0(e)
                if v is None and nulls:
                    return None
                try:
                    return impl(e, v) if env else impl(v)
                except ArgValueError as exc:
                    raise fail(node, exc, (v,)) from None

            return one

        def many(e: Bindings) -> Any:
            values = [a(e) for a in fns]
            if nulls and values[0] is None:
                return None
            try:
                return impl(e, *values) if env else impl(*values)
            except ArgValueError as exc:
                raise fail(node, exc, values) from None

        return many

    def argument_error(self, node: FuncCall, exc: ArgValueError,
                       values: Sequence[Any]) -> EvalError:
        arg = node.args[exc.index]
        v = values[exc.index]
        subject = self.snip(arg)
        if not is_literal(arg) and v is not None:
            subject = f"{subject} ({display(v, 60)})"
        message = exc.message.replace("{arg}", subject, 1).replace("{kind}", kind(v), 1)
        return EvalError(f"{self.snip(node)}: {message}")

    def call_with_condition(self, node: FuncCall, f: Function) -> Fn:
        head = node.args[0]
        listed = head.value if isinstance(head, Bind) else head
        items = self.fn(listed)
        cond = self.fn(node.args[1])
        navigable = self.typed.type_of(listed).navigable
        where = self.snip(node)
        if f.per_value is not None:
            return self.per_value(node, f, listed, items, cond)
        aggregate = f.condition
        assert aggregate is not None  # typecheck marks only functions that take one

        def run(e: Bindings) -> Any:
            seq = self.as_list(e, items(e), listed, navigable, where)
            if seq is None:
                raise EvalError(f"{where}: {self.snip(listed)} is null")
            return aggregate(self.items_meeting(e, seq, cond, node.args[1]))

        return run

    def per_value(self, node: FuncCall, f: Function, listed: Node, items: Fn,
                  value: Fn) -> Fn:
        """``sum(list, value)``, ``map(list, value)``: the value for each item, then what
        the function makes of them."""
        make = f.per_value
        assert make is not None
        navigable = self.typed.type_of(listed).navigable
        where = self.snip(node)
        fail = self.argument_error

        def run(e: Bindings) -> Any:
            seq = self.as_list(e, items(e), listed, navigable, where)
            if seq is None:
                raise EvalError(f"{where}: {self.snip(listed)} is null")
            stack = e.items
            values = []
            for item in seq:
                e.tick()
                stack.append(item)
                try:
                    values.append(value(e))
                finally:
                    stack.pop()
            try:
                return make(values)
            except ArgValueError as exc:
                raise fail(node, exc, [seq, None]) from None

        return run

    # -------------------------------------------------------------- logic

    def not_bool(self, node: Node, v: Any) -> EvalError:
        return EvalError(f"{self.snip(node)} is {what(v)}, not true or false")

    def negation(self, node: Not) -> Fn:
        operand = self.fn(node.operand)

        def run(e: Bindings) -> Any:
            v = operand(e)
            if v is True:
                return False
            if v is False:
                return True
            raise self.not_bool(node.operand, v)

        return run

    def boolean(self, node: BoolOp) -> Fn:
        fns = [(self.fn(o), o) for o in node.operands]
        stop = node.op == "or"  # the value that decides at once: true for or, false for and
        go = not stop
        not_bool = self.not_bool

        if len(fns) == 2:
            (a, na), (b, nb) = fns

            def two(e: Bindings) -> Any:
                v = a(e)
                if v is go:
                    w = b(e)
                    if w is True or w is False:
                        return w
                    raise not_bool(nb, w)
                if v is stop:
                    return stop
                raise not_bool(na, v)

            return two

        def run(e: Bindings) -> Any:
            for f, o in fns:
                v = f(e)
                if v is stop:
                    return stop
                if v is not go:
                    raise not_bool(o, v)
            return go

        return run

    def if_else(self, node: IfElse) -> Fn:
        cond, then, otherwise = self.fn(node.condition), self.fn(node.then), \
            self.fn(node.otherwise)

        def run(e: Bindings) -> Any:
            c = cond(e)
            if c is True:
                return then(e)
            if c is False:
                return otherwise(e)
            raise self.not_bool(node.condition, c)

        return run

    # -------------------------------------------------------------- comparisons

    def told(self, v: Any, node: Node) -> str:
        """A value and, unless it is written out, where it came from:
        ``the text "15:00" (call('book').args.time)``."""
        return what(v) if is_literal(node) else f"{what(v)} ({self.snip(node)})"

    def compare(self, node: Compare) -> Fn:
        op = node.op
        left = self.fn(node.left)
        if op == "matches":
            return self.matches(node, left)
        right = self.fn(node.right)
        where = self.snip(node)
        ls, rs = self.snip(node.left), self.snip(node.right)
        told = self.told
        if op in ("==", "!="):
            negate = op == "!="
            # null == null is true only when the author wrote null: two lookups that both
            # found nothing (two calls never made) must not pass by accident.
            null_written = _is_null(node.left) or _is_null(node.right)

            def eq(e: Bindings) -> Any:
                a = left(e)
                b = right(e)
                ta = type(a)
                if ta is type(b) and ta in _SIMPLE:
                    if a is None and not null_written:
                        raise EvalError(f"{where}: both {ls} and {rs} are null, so nothing was "
                                        "compared; to ask whether something is missing, "
                                        "compare it with null")
                    return (a != b) if negate else (a == b)
                r = equal(a, b)
                if r is None:
                    raise EvalError(f"{where}: cannot compare {told(a, node.left)} with "
                                    f"{told(b, node.right)}; convert one with number(...), "
                                    "text(...) or date(...)")
                return (not r) if negate else r

            return eq
        if op in _ORDER:
            cmp = _ORDER[op]
            if isinstance(node.right, Const) and type(node.right.value) in NUMS:
                # count(calls) <= 2: the most common comparison, without the general checks
                limit = node.right.value

                def to_number(e: Bindings) -> Any:
                    a = left(e)
                    if type(a) in NUMS:
                        return cmp(a, limit)
                    if type(a) is str and (d := number_in(a)) is not None:
                        return cmp(d, exact(limit))  # type: ignore[arg-type]
                    if a is None:
                        raise EvalError(f"{where}: {ls} is null, so it cannot be compared")
                    raise EvalError(f"{where}: cannot put {told(a, node.left)} and "
                                    f"{what(limit)} in order")

                return to_number

            def order(e: Bindings) -> Any:
                a = left(e)
                b = right(e)
                ta, tb = type(a), type(b)
                if (ta in NUMS and tb in NUMS) or (ta is tb and (ta is str or ta is dt.date)):
                    return cmp(a, b)
                if ta is str and tb in NUMS and (d := number_in(a)) is not None:
                    return cmp(d, exact(b))
                if tb is str and ta in NUMS and (d := number_in(b)) is not None:
                    return cmp(exact(a), d)
                if a is None or b is None:
                    side = ls if a is None else rs
                    raise EvalError(f"{where}: {side} is null, so it cannot be compared")
                raise EvalError(f"{where}: cannot put {told(a, node.left)} and "
                                f"{told(b, node.right)} in order")

            return order
        return self.contains(node, left, right)

    def contains(self, node: Compare, left: Fn, right: Fn) -> Fn:
        negate = node.op == "not in"
        where, ls, rs = self.snip(node), self.snip(node.left), self.snip(node.right)

        def run(e: Bindings) -> Any:
            a = left(e)
            b = right(e)
            tb = type(b)
            if tb is str:
                if type(a) is not str:
                    raise EvalError(f"{where}: '{node.op}' looks for a text inside {rs}; {ls} is "
                                    f"{what(a)}")
                found = a in b
            elif tb is list:
                found = any(same(a, x) for x in b)
            elif tb is dict:
                if type(a) is not str:
                    raise EvalError(f"{where}: {rs} is an object; '{node.op}' looks for a "
                                    f"field's name in it, and {ls} is {what(a)}")
                found = a in b
            elif b is None:
                raise EvalError(f"{where}: {rs} is null, so there is nothing to look in")
            else:
                raise EvalError(f"{where}: {rs} is {what(b)}; '{node.op}' looks inside a "
                                "text or a list")
            return (not found) if negate else found

        return run

    def matches(self, node: Compare, left: Fn) -> Fn:
        pattern = self.typed.patterns[id(node)]
        search = pattern.compiled.search  # the regex package's search, bounded in time
        where, ls = self.snip(node), self.snip(node.left)

        def run(e: Bindings) -> Any:
            s = left(e)
            if type(s) is not str:
                if s is None:
                    raise EvalError(f"{where}: {ls} is null, so it cannot match")
                raise EvalError(f"{where}: {ls} is {what(s)}, not text")
            try:
                return search(s, timeout=REGEX_TIMEOUT_S) is not None
            except TimeoutError:
                raise EvalError(
                    f"{where}: the pattern '{pattern.source}' took longer than "
                    f"{REGEX_TIMEOUT_S} s on a text of {len(s):,} characters; simplify it "
                    "(nested repeats like (a+)+ can take forever)") from None

        return run

    # -------------------------------------------------------------- arithmetic

    def minus(self, node: Neg) -> Fn:
        operand = self.fn(node.operand)
        src = self.snip(node.operand)

        def run(e: Bindings) -> Any:
            v = operand(e)
            if type(v) in NUMS:
                return -v
            raise EvalError(f"-{src}: {src} is {what(v)}, not a number")

        return run

    def arith(self, node: Arith) -> Fn:
        left, right = self.fn(node.left), self.fn(node.right)
        op = node.op
        where = self.snip(node)
        zero = "" if is_literal(node.right) else f": {self.snip(node.right)} is 0"

        def bad(a: Any, b: Any) -> EvalError:
            if a is None or b is None:
                return EvalError(f"{where}: {self.snip(node.left if a is None else node.right)} "
                                 "is null")
            verb = {"+": "add", "-": "subtract", "*": "multiply", "/": "divide",
                    "%": "take the remainder of"}[op]
            return EvalError(f"{where}: cannot {verb} {self.told(a, node.left)} and "
                             f"{self.told(b, node.right)}")

        # both sides numbers, numbers written as text ('135.20') or JSON data: '+' adds
        # two texts that hold numbers instead of joining them
        lt, rt = self.typed.type_of(node.left), self.typed.type_of(node.right)
        add_texts = (lt.numeric or rt.numeric) and lt.kind in ("text", "number") \
            and rt.kind in ("text", "number")

        def run(e: Bindings) -> Any:
            a = left(e)
            b = right(e)
            ta, tb = type(a), type(b)
            try:
                if ta in NUMS and tb in NUMS:
                    return _exactly(op, a, b, where, zero)
                if op == "+" and ta is str and tb is str and not add_texts:
                    if len(a) + len(b) > MAX_TEXT_CHARS:
                        raise EvalError(f"{where}: the text would have more than "
                                        f"{MAX_TEXT_CHARS:,} characters")
                    return a + b
                if (ta is str or tb is str) and (ta in NUMS or tb in NUMS or add_texts):
                    x = a if ta in NUMS else _text_number(a)
                    y = b if tb in NUMS else _text_number(b)
                    if x is not None and y is not None:
                        return _exactly(op, x, y, where, zero)
                if op == "+" and ta is list and tb is list:
                    if len(a) + len(b) > MAX_ITEMS:
                        raise EvalError(f"{where}: the list would have more than "
                                        f"{MAX_ITEMS:,} items")
                    return a + b
                if ta is dt.date and op in "+-":
                    if tb is dt.date and op == "-":
                        return (a - b).days
                    if tb in NUMS:
                        return _add_days(a, b if op == "+" else -b, where)
            except OverflowError:
                raise EvalError(f"{where}: the result is too large") from None
            raise bad(a, b)

        return run


MAX_ITEMS = 1_000_000  # items of a list built with '+'


def _text_number(v: Any) -> int | float | None:
    """The number a text holds (None for anything else)."""
    if type(v) is not str:
        return None
    d = number_in(v)
    return None if d is None else plain(d, "." not in v)


def _exactly(op: str, a: Any, b: Any, where: str, zero: str) -> int | float:
    """``a op b`` on two numbers, exactly as decimals: 0.1 + 0.2 is 0.3, 135.2 - 100.1 is
    35.1 (money stays exact to the cent); whole numbers stay whole, except through ``/``."""
    ints = type(a) is int and type(b) is int
    if op in "/%" and b == 0:
        raise EvalError(f"{where}: division by zero" + zero)
    if ints and op != "/":
        whole: int = a + b if op == "+" else a - b if op == "-" else a * b if op == "*" \
            else a % b
        return whole
    if (type(a) is float and not math.isfinite(a)) or (type(b) is float and
                                                       not math.isfinite(b)):
        raise OverflowError
    x, y = exact(a), exact(b)
    c = _EXACT
    try:
        if op == "%":  # the sign of the divisor, as Python's (and people's) remainder
            r = c.remainder(x, y)
            if r and (r < 0) != (y < 0):
                r = c.add(r, y)
        else:
            r = c.add(x, y) if op == "+" else c.subtract(x, y) if op == "-" else \
                c.multiply(x, y) if op == "*" else c.divide(x, y)
    except decimal.DecimalException:
        raise OverflowError from None
    return plain(r, False)


# enough digits for any two numbers a file or a tool holds, and their products
_EXACT = decimal.Context(prec=60, Emax=10**6, Emin=-10**6, traps=[decimal.InvalidOperation,
                                                                  decimal.DivisionByZero,
                                                                  decimal.Overflow])


def _is_null(node: Node) -> bool:
    return isinstance(node, Const) and node.value is None


def _add_days(d: dt.date, days: Any, where: str) -> dt.date:
    if type(days) is float and not days.is_integer():
        raise EvalError(f"{where}: a date moves by whole days, not {display(days)}")
    try:
        return d + dt.timedelta(days=int(days))
    except (OverflowError, ValueError):
        raise EvalError(f"{where}: the date would be out of range") from None
