"""Jinja's immutable sandbox with limits: a template may not make more text, count further,
loop longer or run longer than the constants below allow.

Jinja's sandbox keeps a template away from Python's internals, but not from the machine:
``{{ 'A' * 3000000000 }}`` asks for 3 GB and nested ``range(100000)`` loops run for hours.
Here every way a template can make a large value or spin is bounded:

* **Operators** ``*``, ``+``, ``%`` and ``**`` are intercepted (``intercepted_binops``):
  repetition is refused *before* it allocates when the result would pass
  MAX_TEMPLATE_CHARS, powers that would make huge numbers are refused, and printf-style
  widths are checked.
* **Calls** (``environment.call``: methods, macros, globals) and **loop steps** (every
  ``{% for %}`` iterates through a counting filter, added to the tree when it is parsed)
  count against MAX_TEMPLATE_STEPS and the render's deadline, MAX_RENDER_S. Integer
  arguments above MAX_TEMPLATE_CHARS (``'a'.ljust(10**9)``, ``(1).to_bytes(10**9)``) are
  refused, as are results larger than it.
* **Filters** that pad, repeat or multiply (``center``, ``indent``, ``format``,
  ``replace``, ``join``, ``batch``, ``slice``) check their arguments first; ``range`` is
  capped at MAX_RANGE numbers; ``lipsum`` is gone; ``~`` results are measured.
* **Output**: a render streams its pieces and stops past MAX_TEMPLATE_CHARS.

A limit raises :class:`TemplateLimit` (a plain ``Exception``): at run time a tool's
template that fails that way answers the model with an error and the run goes on. What can
be known without rendering — a constant repetition, a constant ``range(10**6)``, constant
nested loops — is reported by :func:`static_problem` at lint, at the template's line.
"""

from __future__ import annotations

import contextvars
import functools
import math
import re
import time
from collections.abc import Iterable, Iterator
from typing import Any

from jinja2 import Template, nodes
from jinja2.filters import (
    do_batch,
    do_center,
    do_format,
    do_indent,
    do_replace,
    sync_do_join,
    sync_do_slice,
)
from jinja2.nodes import Impossible
from jinja2.runtime import Context
from jinja2.sandbox import ImmutableSandboxedEnvironment, SandboxedFormatter
from jinja2.utils import pass_context, pass_eval_context
from jinja2.visitor import NodeTransformer
from markupsafe import Markup

MAX_TEMPLATE_CHARS = 10_000_000  # characters (or items) one value or one render may hold
MAX_TEMPLATE_STEPS = 100_000  # loop iterations plus calls in one render
MAX_RANGE = 10_000  # numbers in one range()
MAX_RENDER_S = 2.0  # wall time of one render
MAX_INT_BITS = 100_000  # the largest number a template may make (about 30,000 digits)
LIMITS_HINT = (f"a template may make at most {MAX_TEMPLATE_CHARS:,} characters, count to "
               f"{MAX_RANGE:,} and run {MAX_TEMPLATE_STEPS:,} loop steps and calls; write "
               "large fixed data out instead")


class TemplateLimit(Exception):
    """A template asked for more than a limit allows; the message says which."""


class _Budget:
    __slots__ = ("deadline", "steps")

    def __init__(self) -> None:
        self.steps = 0
        self.deadline = time.monotonic() + MAX_RENDER_S


_BUDGET: contextvars.ContextVar[_Budget | None] = contextvars.ContextVar(
    "scenarist_template_budget", default=None)


def _tick() -> None:
    budget = _BUDGET.get()
    if budget is None:  # Jinja's optimizer, at compile time: nothing to count
        return
    budget.steps += 1
    if budget.steps > MAX_TEMPLATE_STEPS:
        raise TemplateLimit(f"the template ran more than {MAX_TEMPLATE_STEPS:,} loop steps "
                            "and calls")
    if budget.steps & 63 == 0 and time.monotonic() > budget.deadline:
        raise TemplateLimit(f"the template ran longer than {MAX_RENDER_S:g} s")


def size(value: Any) -> int:
    """Characters of a text, items of a list (counting the items' own sizes), 1 for
    anything else; stops counting past MAX_TEMPLATE_CHARS."""
    if isinstance(value, str | bytes):
        return len(value)
    if not isinstance(value, list | tuple | dict | set | frozenset):
        return 1
    total = 0
    stack: list[Any] = [value]
    while stack and total <= MAX_TEMPLATE_CHARS:
        v = stack.pop()
        if isinstance(v, str | bytes):
            total += len(v)
        elif isinstance(v, dict):
            total += 1
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple | set | frozenset):
            total += 1
            stack.extend(v)
        else:
            total += 1
    return total


def _too_big(what: str, n: int) -> TemplateLimit:
    return TemplateLimit(f"{what} would make {n:,} characters or items; a template may "
                         f"make at most {MAX_TEMPLATE_CHARS:,}")


def _checked(value: Any, what: str) -> Any:
    n = size(value)
    if n > MAX_TEMPLATE_CHARS:
        raise _too_big(what, n)
    return value


# ------------------------------------------------------------------ operators

def check_repeat(left: Any, right: Any) -> None:
    """``left * right`` when one side is a text or list and the other a number."""
    for seq, n in ((left, right), (right, left)):
        if isinstance(seq, str | bytes | list | tuple) and isinstance(n, int) \
                and not isinstance(n, bool):
            total = size(seq) * max(n, 0)
            if total > MAX_TEMPLATE_CHARS:
                raise _too_big(f"repeating a value {n:,} times", total)


def check_power(base: Any, exponent: Any) -> None:
    if isinstance(base, int) and isinstance(exponent, int) and exponent > 0 \
            and abs(base) > 1 and exponent * math.log2(abs(base)) > MAX_INT_BITS:
        raise TemplateLimit(f"{base} ** {exponent:,} makes a number with more than "
                            f"{MAX_INT_BITS:,} bits")


def check_multiply(left: Any, right: Any) -> None:
    check_repeat(left, right)
    if isinstance(left, int) and isinstance(right, int) \
            and left.bit_length() + right.bit_length() > MAX_INT_BITS:
        raise TemplateLimit(f"the template multiplies numbers into more than "
                            f"{MAX_INT_BITS:,} bits")


# %-formatting: the flags, the width and the precision of each conversion
_PRINTF = re.compile(r"%(?:\([^)]*\))?[-#0 +]*(\*|\d+)?(?:\.(\*|\d*))?[hlL]?[a-zA-Z%]")
# a format spec's width and precision: [[fill]align][sign][z][#][0][width][,_][.precision]
_SPEC = re.compile(r"(?:.?[<>=^])?[-+ ]?z?#?0?(\d*)[,_]?(?:\.(\d+))?")


def check_printf(fmt: Any) -> None:
    if not isinstance(fmt, str):
        return
    for m in _PRINTF.finditer(fmt):
        for part in m.groups():
            if part == "*":
                raise TemplateLimit("the template takes a %-format width from its values "
                                    "('*'); write the width out")
            if part and int(part) > MAX_TEMPLATE_CHARS:
                raise _too_big(f"the format {m.group(0)[:20]!r}", int(part))


def check_spec(spec: str) -> None:
    m = _SPEC.match(spec)
    for part in m.groups() if m else ():
        if part and int(part) > MAX_TEMPLATE_CHARS:
            raise _too_big(f"the format spec {spec[:20]!r}", int(part))


def check_width(width: Any, what: str) -> None:
    if isinstance(width, int) and width > MAX_TEMPLATE_CHARS:
        raise _too_big(what, width)


# ------------------------------------------------------------------ calls

def _check_str_method(text: str, name: str, args: tuple[Any, ...],
                      kwargs: dict[str, Any]) -> None:
    if name == "replace" and len(args) >= 2:
        count = args[2] if len(args) > 2 else kwargs.get("count", -1)
        check_replace(text, args[0], args[1], count)
    elif name == "join" and args:
        check_join(text, args[0])
    elif name == "expandtabs":
        tab = args[0] if args else kwargs.get("tabsize", 8)
        if isinstance(tab, int):
            n = len(text) + text.count("\t") * max(tab, 0)
            if n > MAX_TEMPLATE_CHARS:
                raise _too_big("expandtabs()", n)
    elif name == "translate" and args and isinstance(args[0], dict):
        longest = max((size(v) for v in args[0].values()), default=1)
        if len(text) * longest > MAX_TEMPLATE_CHARS:
            raise _too_big("translate()", len(text) * longest)


def check_replace(text: Any, old: Any, new: Any, count: Any = -1) -> None:
    s, o, n = str(text), str(old), str(new)
    hits = s.count(o) if o else len(s) + 1
    if isinstance(count, int) and count >= 0:
        hits = min(hits, count)
    total = len(s) + hits * (len(n) - len(o))
    if total > MAX_TEMPLATE_CHARS:
        raise _too_big("replace()", total)


def check_join(sep: Any, items: Any) -> list[Any]:
    values = list(items)
    total = sum(size(v) for v in values) + size(str(sep)) * max(len(values) - 1, 0)
    if total > MAX_TEMPLATE_CHARS:
        raise _too_big("join()", total)
    return values


class _Formatter(SandboxedFormatter):
    """str.format with its widths checked before they pad."""

    def format_field(self, value: Any, format_spec: str) -> Any:
        check_spec(format_spec)
        return super().format_field(value, format_spec)


def bounded_range(*args: int) -> range:
    """``range`` with at most MAX_RANGE numbers."""
    numbers = range(*args)
    if len(numbers) > MAX_RANGE:
        raise TemplateLimit(f"range() of {len(numbers):,} numbers; a template may count "
                            f"to at most {MAX_RANGE:,}")
    return numbers


# ------------------------------------------------------------------ filters

@pass_context
def _loop(context: Context, iterable: Any) -> Iterator[Any]:
    """Every ``{% for %}`` iterates through this (added when the template is parsed)."""
    for item in iterable:
        _tick()
        yield item


@pass_context
def _text(context: Context, value: str) -> str:
    """Every ``a ~ b`` result passes here."""
    if len(value) > MAX_TEMPLATE_CHARS:
        raise _too_big("joining text with ~", len(value))
    return value


def _center(value: Any, width: int = 80) -> str:
    check_width(width, "center()")
    return do_center(value, width)


def _indent(s: Any, width: int | str = 4, first: bool = False, blank: bool = False) -> str:
    pad = width if isinstance(width, int) else len(str(width))
    lines = str(s).count("\n") + 1
    if len(str(s)) + lines * max(pad, 0) > MAX_TEMPLATE_CHARS:
        raise _too_big("indent()", len(str(s)) + lines * pad)
    return do_indent(s, width, first, blank)


def _format(value: Any, *args: Any, **kwargs: Any) -> str:
    check_printf(value)
    return _checked(do_format(value, *args, **kwargs), "format()")  # type: ignore[no-any-return]


@pass_eval_context
def _replace(eval_ctx: Any, s: Any, old: Any, new: Any, count: int | None = None) -> str:
    check_replace(s, old, new, -1 if count is None else count)
    return do_replace(eval_ctx, s, old, new, count)


@pass_eval_context
def _join(eval_ctx: Any, value: Any, d: str = "", attribute: Any = None) -> str:
    if attribute is None:
        value = check_join(d, value)
    return _checked(sync_do_join(eval_ctx, value, d, attribute), "join()")  # type: ignore[no-any-return]


def _batch(value: Any, linecount: int, fill_with: Any = None) -> Iterable[list[Any]]:
    check_width(linecount, "batch()")
    return do_batch(value, linecount, fill_with)


def _slice(value: Any, slices: int, fill_with: Any = None) -> Iterable[list[Any]]:
    if isinstance(slices, int) and slices > MAX_RANGE:
        raise TemplateLimit(f"slice() into {slices:,} parts; at most {MAX_RANGE:,}")
    return sync_do_slice(value, slices, fill_with)


GUARDED_FILTERS: dict[str, Any] = {
    "center": _center, "indent": _indent, "format": _format, "replace": _replace,
    "join": _join, "batch": _batch, "slice": _slice,
    "_scenarist_loop": _loop, "_scenarist_text": _text,
}


# ------------------------------------------------------------------ the environment

class _Guard(NodeTransformer):
    """Routes every loop through the step counter and every ``~`` through a size check."""

    def visit_For(self, node: nodes.For) -> nodes.Node:
        self.generic_visit(node)
        node.iter = nodes.Filter(node.iter, "_scenarist_loop", [], [], None, None,
                                 lineno=node.lineno)
        return node

    def visit_Concat(self, node: nodes.Concat) -> nodes.Node:
        self.generic_visit(node)
        return nodes.Filter(node, "_scenarist_text", [], [], None, None, lineno=node.lineno)


class BoundedEnvironment(ImmutableSandboxedEnvironment):
    """The environment every author's template is compiled in (see the module's doc)."""

    intercepted_binops = frozenset(["*", "**", "+", "%"])

    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.filters.update(GUARDED_FILTERS)
        self.globals["range"] = bounded_range
        self.globals.pop("lipsum", None)
        self.template_class = BoundedTemplate

    def _parse(self, source: str, name: str | None, filename: str | None) -> nodes.Template:
        tree = super()._parse(source, name, filename)
        guarded: nodes.Template = _Guard().visit(tree)
        return guarded

    def call_binop(self, context: Context, operator: str, left: Any, right: Any) -> Any:
        if operator == "*":
            check_multiply(left, right)
        elif operator == "**":
            check_power(left, right)
        elif operator == "%":
            check_printf(left)
        result = super().call_binop(context, operator, left, right)
        if operator != "**" and isinstance(result, str | list | tuple):
            _checked(result, f"the operator {operator}")
        return result

    def call(self, context: Context, obj: Any, /, *args: Any, **kwargs: Any) -> Any:
        _tick()
        owner = getattr(obj, "__self__", None)
        if isinstance(owner, str | bytes | int) and not isinstance(owner, bool):
            # a builtin method: its numbers are widths and lengths (ljust, zfill, to_bytes)
            name = getattr(obj, "__name__", "a method")
            for v in (*args, *kwargs.values()):
                if isinstance(v, int) and not isinstance(v, bool) \
                        and v > MAX_TEMPLATE_CHARS:
                    raise _too_big(f"{name}({v:,})", v)
            if isinstance(owner, str):
                _check_str_method(owner, name, args, kwargs)
        result = super().call(context, obj, *args, **kwargs)
        if isinstance(result, str | bytes | list | tuple | dict):
            _checked(result, f"{getattr(obj, '__name__', 'a call')}()")
        return result

    def wrap_str_format(self, value: Any) -> Any:
        wrapped = super().wrap_str_format(value)
        f_self = getattr(value, "__self__", None)
        if wrapped is None or isinstance(f_self, Markup) or not isinstance(f_self, str):
            return wrapped
        formatter = _Formatter(self)
        is_map = value.__name__ == "format_map"

        def guarded(*args: Any, **kwargs: Any) -> str:
            if is_map:
                if kwargs or len(args) != 1:
                    raise TypeError("format_map() takes exactly one argument")
                return str(formatter.vformat(f_self, (), args[0]))
            return str(formatter.vformat(f_self, args, kwargs))

        guarded.__name__ = value.__name__
        return guarded


class BoundedTemplate(Template):
    """A template whose render streams its output and counts it, with a fresh budget of
    steps and time."""

    def render(self, *args: Any, **kwargs: Any) -> str:
        token = _BUDGET.set(_Budget())
        try:
            out: list[str] = []
            total = 0
            for piece in self.generate(*args, **kwargs):
                total += len(piece)
                if total > MAX_TEMPLATE_CHARS:
                    raise TemplateLimit(f"the template's output passed "
                                        f"{MAX_TEMPLATE_CHARS:,} characters")
                out.append(piece)
            return "".join(out)
        finally:
            _BUDGET.reset(token)


@functools.lru_cache(maxsize=1024)
def _expression(env: BoundedEnvironment, source: str) -> Any:
    return env.compile_expression(source, undefined_to_none=False)


def expression_value(env: BoundedEnvironment, source: str, values: dict[str, Any]) -> Any:
    """The value of one Jinja expression (what ``{{ source }}`` shows, but as the value
    itself: a number stays a number, a list a list), with a fresh budget of steps and
    time. Raises what the expression raises (a limit, a type error)."""
    token = _BUDGET.set(_Budget())
    try:
        value = _expression(env, source)(**values)
        _checked(value, "the value")
        return value
    finally:
        _BUDGET.reset(token)


# ------------------------------------------------------------------ at lint

def static_problem(tree: nodes.Template) -> tuple[str, int] | None:
    """A limit that a template passes whatever its values: (message, line) or None.
    Constant repetitions, powers, formats, ranges and nested constant loops."""
    for node in tree.find_all((nodes.Mul, nodes.Pow, nodes.Mod, nodes.Call, nodes.Filter,
                               nodes.For)):
        try:
            _static(node)
        except TemplateLimit as exc:
            return str(exc), node.lineno or 1
    return None


def _const(node: nodes.Node) -> Any:
    if not isinstance(node, nodes.Expr):
        raise Impossible
    return node.as_const()  # raises Impossible unless the node is a constant


def _static(node: nodes.Node) -> None:
    try:
        if isinstance(node, nodes.Mul):
            check_multiply(_const(node.left), _const(node.right))
        elif isinstance(node, nodes.Pow):
            check_power(_const(node.left), _const(node.right))
        elif isinstance(node, nodes.Mod):
            check_printf(_const(node.left))
        elif isinstance(node, nodes.Call) and isinstance(node.node, nodes.Name) \
                and node.node.name == "range":
            bounded_range(*(_const(a) for a in node.args))
        elif isinstance(node, nodes.For):
            steps = _loop_steps(node)
            if steps > MAX_TEMPLATE_STEPS:
                raise TemplateLimit(f"these loops run {steps:,} steps; a template may run "
                                    f"at most {MAX_TEMPLATE_STEPS:,}")
        elif isinstance(node, nodes.Filter) and node.name in ("center", "batch") \
                and node.args:
            check_width(_const(node.args[0]), f"{node.name}()")
        elif isinstance(node, nodes.Filter) and node.name == "format" and node.node:
            check_printf(_const(node.node))
    except (Impossible, TypeError, ValueError, OverflowError):
        return


def _loop_steps(loop: nodes.For) -> int:
    """The steps a loop runs, its inner loops' included, when it and they go over
    constant ranges (a loop over anything else counts once)."""
    inner = sum(_loop_steps(child) for child in _inner_loops(loop))
    return _loop_count(loop) * (1 + inner)


def _inner_loops(node: nodes.Node) -> Iterator[nodes.For]:
    for child in node.iter_child_nodes():
        if isinstance(child, nodes.For):
            yield child
        else:
            yield from _inner_loops(child)


def _loop_count(loop: nodes.For) -> int:
    """How many times a loop over a constant ``range(...)`` runs (1 when unknown)."""
    it = loop.iter
    if isinstance(it, nodes.Filter) and it.name == "_scenarist_loop" and it.node is not None:
        it = it.node
    if isinstance(it, nodes.Call) and isinstance(it.node, nodes.Name) \
            and it.node.name == "range":
        try:
            return len(range(*(_const(a) for a in it.args)))
        except (Impossible, TypeError, ValueError, OverflowError):
            return 1
    return 1

