"""Author-written templates (system prompts, tool returns), rendered in Jinja's sandbox.

Templates come from YAML files; they may only read the values we pass in. The immutable
sandbox refuses attribute access to Python internals and any mutation; missing values
render as empty text (a model that leaves out an argument gets an answer, not a crash).
Every template is bounded in the text it makes, the steps it runs and its time
(:mod:`dsl.compiler.sandbox`); a limit it passes whatever its values is reported at lint.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import re
from collections.abc import Mapping
from typing import Any

import msgspec

from .moment import say

DEFAULT_SYSTEM_PROMPT = (
    "{% if system %}{{ system }}\n\n{% endif %}Current date and time: {{ now }}."
)


class TemplateProblem(msgspec.Struct, frozen=True):
    message: str
    line: int  # 1-based line inside the template
    limit: bool = False  # it compiles, but passes a limit of dsl.compiler.sandbox
    unsafe: bool = False  # it compiles, but reads what the sandbox refuses to give

    @property
    def verb(self) -> str:
        """How a message says what is wrong: ``... does not compile: ...``."""
        if self.unsafe:
            return "is refused by the sandbox"
        return "is too costly" if self.limit else "does not compile"

    def hint(self, otherwise: str) -> str:
        """The fix to suggest: the sandbox's limits when the template passes one, else
        ``otherwise`` (what a template of that place looks like)."""
        if self.unsafe:
            return f"read the values themselves, not their Python internals ({otherwise})"
        if not self.limit:
            return otherwise
        from .sandbox import LIMITS_HINT  # Jinja is loaded already: it found the problem

        return LIMITS_HINT


def is_template(text: str) -> bool:
    return "{{" in text or "{%" in text


# ---- the templates people mostly write, without Jinja ----------------------------------------
#
# Templates people write are mostly of one small kind: text, values like ``{{ args.date }}``
# or ``{{ args.items | length }}``, and ``{% if system %}...{% endif %}`` (the default system
# prompt). Checking one with Jinja costs ~0.3 ms (and importing Jinja ~70 ms, a tenth of
# lint's budget); rendering one costs ~15 µs against ~2 µs (a fake tool's answer on every
# call of a run; a case's text on every case). So :func:`scan` splits such a template into
# its tokens exactly where Jinja's lexer splits it, and three questions are answered from
# those tokens alone: does it compile (:func:`plainly_compiles`), what does it render over a
# call (:class:`LazyTemplate`) and over a case (:class:`CaseTemplate`). Anything else —
# other statements, arguments, operators, literals, comments, a filter at render time,
# whitespace control at render time — is Jinja's. tests/compiler/test_templates.py proves
# every answer equal to Jinja's over generated templates and values (hypothesis).

_KEYWORDS = frozenset([
    "and", "or", "not", "in", "is", "if", "else", "elif", "endif", "for", "endfor",
    "block", "endblock", "extends", "include", "import", "from", "as", "with",
    "without", "macro", "endmacro", "call", "endcall", "filter", "endfilter", "set",
    "endset", "raw", "endraw", "recursive", "true", "false", "none", "True", "False",
    "None",
])
# The names the sandbox defines itself (``{{ range }}`` renders a function): a template
# that reads one is Jinja's (a test keeps the list equal to both environments' globals).
JINJA_GLOBALS = frozenset(["range", "dict", "cycler", "joiner", "namespace"])
# built-in filters that need no argument (all of them in Jinja's sandbox; a test checks)
PLAIN_FILTERS = frozenset([
    "abs", "capitalize", "count", "e", "escape", "first", "float", "int", "last",
    "length", "list", "lower", "reverse", "round", "sort", "string", "striptags",
    "title", "tojson", "trim", "unique", "upper", "urlencode", "wordcount",
])
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
_WS = r"[ \t\n]*"
_OPEN = re.compile(r"\{[{%#]")
_TAG = re.compile(
    rf"\{{\{{(-?){_WS}({_DOTTED})((?:{_WS}\|{_WS}{_NAME})*){_WS}(-?)\}}\}}"
    rf"|\{{%(-?){_WS}(if|elif|else|endif)(?:[ \t\n]+(not[ \t\n]+)?({_DOTTED}))?{_WS}(-?)%\}}")
# Jinja's lexer reads every \r\n and \r as \n (its newline_sequence, which we keep).
_NEWLINES = re.compile(r"\r\n?")


class Value(msgspec.Struct, frozen=True):
    """``{{ args.date | length }}``: the names of the value and its filters; ``trimmed``
    when a ``-`` strips the text beside it."""

    path: tuple[str, ...]
    filters: tuple[str, ...]
    trimmed: bool


class Branch(msgspec.Struct, frozen=True):
    """``{% if [not] name %}``, ``{% elif ... %}``, ``{% else %}`` or ``{% endif %}``."""

    head: str
    negated: bool
    path: tuple[str, ...] | None
    trimmed: bool


Token = str | Value | Branch


@functools.lru_cache(maxsize=4096)
def scan(source: str) -> tuple[Token, ...] | None:
    """``source`` as Jinja's lexer splits it — text (its newlines as Jinja reads them),
    values and ``if`` statements — when it holds nothing else, its names are plain names
    (no keyword, no global of the sandbox), its filters need no argument and its ``if``
    statements nest; None otherwise. ``Booked {{ args.date }}`` gives
    ``("Booked ", Value(("args", "date"), (), False))``."""
    source = _NEWLINES.sub("\n", source)
    tokens: list[Token] = []
    depth: list[bool] = []  # per open if: has its else been seen?
    pos = 0
    while (opener := _OPEN.search(source, pos)) is not None:
        m = _TAG.match(source, opener.start())
        if m is None:
            return None
        if opener.start() > pos:
            tokens.append(source[pos:opener.start()])
        pos = m.end()
        if m.group(2) is not None:
            path = tuple(m.group(2).split("."))
            filters = tuple(f.strip(" \t\n") for f in m.group(3).split("|")[1:])
            if not _plain(path) or not all(f in PLAIN_FILTERS for f in filters):
                return None
            tokens.append(Value(path, filters, bool(m.group(1) or m.group(4))))
            continue
        head, dotted = m.group(6), m.group(8)
        trimmed = bool(m.group(5) or m.group(9))
        if head in ("if", "elif"):
            if dotted is None or not _plain(tuple(dotted.split("."))):
                return None
            if head == "if":
                depth.append(False)
            elif not depth or depth[-1]:
                return None
            tokens.append(Branch(head, m.group(7) is not None, tuple(dotted.split(".")),
                                 trimmed))
            continue
        if dotted is not None or m.group(7) is not None or not depth:
            return None
        if head == "else":
            if depth[-1]:
                return None
            depth[-1] = True
        else:
            depth.pop()
        tokens.append(Branch(head, False, None, trimmed))
    if depth:
        return None
    if pos < len(source):
        tokens.append(source[pos:])
    return tuple(tokens)


# Python's own attributes of the values a template reads (text, numbers, lists, mappings,
# null): the sandbox refuses every one — ``{{ message.__class__ }}`` fails each attempt —
# so lint refuses them where they are written (:func:`check_template`)
INTERNAL_ATTRIBUTES = frozenset(
    a for t in (str, int, float, bool, list, tuple, dict, type(None))
    for a in dir(t) if a.startswith("_"))


def internal_attribute(name: str) -> bool:
    """A field no template may read: one of Python's internals (``__class__``,
    ``__globals__``) rather than a key of the data (``args._id`` is a key)."""
    return name in INTERNAL_ATTRIBUTES or (name.startswith("__") and name.endswith("__"))


def _plain(path: tuple[str, ...]) -> bool:
    return (path[0] not in JINJA_GLOBALS and not any(part in _KEYWORDS for part in path)
            and not any(internal_attribute(part) for part in path[1:]))


def plainly_compiles(source: str) -> bool:
    """True only when Jinja certainly compiles ``source``: :func:`scan` reads it."""
    return scan(source) is not None


def renders_alone(tokens: tuple[Token, ...]) -> bool:
    """Whether :func:`render_tokens` can render these tokens: no filter and no ``-``."""
    return not any((isinstance(t, Branch) and t.trimmed)
                   or (isinstance(t, Value) and (t.trimmed or t.filters)) for t in tokens)


_UNDEFINED = object()  # a missing field: empty text and false, as ChainableUndefined is
_PLAIN_VALUES = (str, int, float, bool, type(None))


def render_tokens(tokens: tuple[Token, ...], names: Mapping[str, Any],
                  more: Mapping[str, Any] | None = None, *, strict: bool = False
                  ) -> str | None:
    """What the sandbox renders for ``tokens`` (:func:`renders_alone`) over ``names``
    (then ``more``), or None when that needs Jinja: a name it is not given (Jinja may know
    it), a field of something other than a plain mapping or one a mapping has as a method
    (``items``), a value shown that is not text, a number, a boolean or None, a missing
    field when ``strict`` (StrictUndefined raises), or text past the sandbox's limit."""
    out: list[str] = []
    # per open if: (the text around it shows, a branch of it was shown already)
    stack: list[tuple[bool, bool]] = []
    showing = True
    for token in tokens:
        match token:
            case str():
                if showing:
                    out.append(token)
            case Value(path=path):
                if not showing:
                    continue
                found = _look_up(path, names, more, strict)
                if found is None:
                    return None
                value = found[0]
                if value is _UNDEFINED:
                    continue
                if not isinstance(value, _PLAIN_VALUES):
                    return None
                out.append(str(value))
            case Branch(head="endif"):
                showing = stack.pop()[0]  # as the text around the if
            case Branch(head=head, negated=negated, path=path):
                if head == "if":
                    stack.append((showing, False))
                around, taken = stack[-1]
                if head == "else":
                    shown = around and not taken
                elif taken or not around:
                    shown = False
                else:  # if, elif
                    found = _look_up(path or (), names, more, strict)
                    if found is None:
                        return None
                    shown = bool(found[0] is not _UNDEFINED and found[0]) != negated
                stack[-1] = (around, taken or shown)
                showing = shown
    text = "".join(out)
    return text if len(text) <= MAX_RENDERED_CHARS else None


def _look_up(path: tuple[str, ...], names: Mapping[str, Any],
             more: Mapping[str, Any] | None, strict: bool) -> tuple[Any] | None:
    """``(value,)`` of ``args.date`` (``_UNDEFINED`` for a missing field), or None when
    Jinja must say."""
    if not path:
        return None
    name = path[0]
    if name in names:
        value = names[name]
    elif more is not None and name in more:
        value = more[name]
    else:
        return None
    for field in path[1:]:
        if value is _UNDEFINED:
            continue
        if type(value) is not dict or hasattr(dict, field):
            return None
        value = value.get(field, _UNDEFINED)
        if value is _UNDEFINED and strict:
            return None
    return (value,)


def check_template(source: str) -> TemplateProblem | None:
    """What is wrong with a template, or None when it compiles. Common templates are
    recognised without Jinja (:func:`plainly_compiles`); for the others Jinja generates
    the template's code (every check it makes at compile time) but Python's compiler is
    not run."""
    if plainly_compiles(source):
        return None
    # why: Jinja is heavy and only needed when a text really is a template (most are plain)
    from jinja2 import TemplateSyntaxError

    from .sandbox import static_problem

    env = environment()
    try:
        tree = env.parse(source)
        limit = static_problem(tree)
        if limit is not None:
            return TemplateProblem(limit[0], limit[1], limit=True)
        unsafe = _internal_read(tree)
        if unsafe is not None:
            return unsafe
        env.compile(tree, raw=True)
    except TemplateSyntaxError as exc:
        return TemplateProblem(exc.message or str(exc), exc.lineno or 1)
    return None


def _internal_read(tree: Any) -> TemplateProblem | None:
    """The first place a template reads one of Python's internal attributes
    (``message.__class__``, ``args['__init__']``): the sandbox refuses it at every render,
    whatever the values, so it is said where it is written."""
    # why: Jinja is heavy and only needed when a text really is a template (most are plain)
    from jinja2 import nodes

    def internal(node: Any) -> str | None:
        if isinstance(node, nodes.Getattr):
            name = node.attr
        elif isinstance(node.arg, nodes.Const) and isinstance(node.arg.value, str):
            name = node.arg.value
        else:
            return None
        return name if internal_attribute(name) else None

    for node in tree.find_all((nodes.Getattr, nodes.Getitem)):
        name = internal(node)
        # the first one written: in a.__class__.__mro__, __class__ (the inner node)
        inner = [node.node, *node.node.find_all((nodes.Getattr, nodes.Getitem))]
        if name is not None and not any(isinstance(n, (nodes.Getattr, nodes.Getitem))
                                        and internal(n) for n in inner):
            of = _dotted(node.node)
            return TemplateProblem(f"it reads '{name}'" + (f" of {of}" if of else "")
                                   + ", one of Python's internal attributes, which no "
                                   "template may read", node.lineno or 1, unsafe=True)
    return None


def _dotted(node: Any) -> str:
    """``args.date`` for a name or a dotted path of names; "" for anything else."""
    # why: Jinja is heavy and only needed when a text really is a template (most are plain)
    from jinja2 import nodes

    parts = []
    while isinstance(node, nodes.Getattr):
        parts.append(node.attr)
        node = node.node
    if not isinstance(node, nodes.Name):
        return ""
    return ".".join([node.name, *reversed(parts)])


class LazyTemplate:
    """A template that was checked when the scenario compiled, and is compiled the first
    time it renders (lint never renders, so it never pays for Jinja's compiler); the
    templates :func:`scan` reads render without Jinja, exactly as Jinja renders them.
    ``values``: a case's values (dsl/compiler/cases.py), which it reads beside the call's own
    names (``args``, ``now``, ``at``: those win)."""

    __slots__ = ("source", "tokens", "values")

    def __init__(self, source: str, values: dict[str, Any] | None = None) -> None:
        self.source = source
        self.values = values
        tokens = scan(source)
        self.tokens = tokens if tokens is not None and renders_alone(tokens) else None

    def render(self, *args: Any, **kwargs: Any) -> str:
        if self.tokens is not None and not args:
            out = render_tokens(self.tokens, kwargs, self.values)
            if out is not None:
                return out
        compiled = _compiled(self.source)
        if self.values:
            kwargs = {**self.values, **kwargs}
        return str(compiled.render(*args, **kwargs))

    def __repr__(self) -> str:
        return f"LazyTemplate({self.source!r})"


# sandbox.MAX_TEMPLATE_CHARS (a test keeps them equal): importing the sandbox imports Jinja
MAX_RENDERED_CHARS = 10_000_000


class DataTemplate:
    """Fixed data (a mapping or a list) whose strings may be templates: each template
    renders over the call, and the data is sent as JSON. ``{"id": "{{ args.id }}"}`` over
    ``{"id": "RX-1"}`` gives ``{"id": "RX-1"}``."""

    __slots__ = ("data",)

    def __init__(self, data: Any) -> None:
        """``data``: the returns value with each template string replaced by its
        :class:`LazyTemplate` (see :func:`template_leaves`)."""
        self.data = data

    def render(self, **values: Any) -> str:
        return json.dumps(_render_leaves(self.data, values), ensure_ascii=False)

    def __repr__(self) -> str:
        return f"DataTemplate({self.data!r})"


def _render_leaves(data: Any, values: dict[str, Any]) -> Any:
    if isinstance(data, LazyTemplate):
        return data.render(**values)
    if isinstance(data, dict):
        return {k: _render_leaves(v, values) for k, v in data.items()}
    if isinstance(data, list):
        return [_render_leaves(v, values) for v in data]
    return data


def template_strings(data: Any, path: tuple[str | int, ...] = ()
                     ) -> list[tuple[tuple[str | int, ...], str]]:
    """Every string of ``data`` (a string, or strings inside mappings and lists) that is a
    template, with its path inside ``data``."""
    if isinstance(data, str):
        return [(path, data)] if is_template(data) else []
    out: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(data, dict):
        for k, v in data.items():
            out.extend(template_strings(v, (*path, k)))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out.extend(template_strings(v, (*path, i)))
    return out


def data_template(data: Any, values: dict[str, Any] | None = None) -> Any:
    """What renders ``data`` over a call: a :class:`LazyTemplate` for a template string,
    a :class:`DataTemplate` for a mapping or list that holds templates, None when nothing
    in it is a template. (Check each string with :func:`check_template` first.)
    ``values``: the case's values its templates may read too."""
    if isinstance(data, str):
        return LazyTemplate(data, values) if is_template(data) else None
    if not template_strings(data):
        return None
    return DataTemplate(_with_leaves(data, values))


def bound(template: Any, values: dict[str, Any]) -> Any:
    """A tool's template (:func:`data_template`'s) reading ``values`` instead."""
    if isinstance(template, LazyTemplate):
        return LazyTemplate(template.source, values)
    if isinstance(template, DataTemplate):
        return DataTemplate(_rebound(template.data, values))
    return template


def _rebound(data: Any, values: dict[str, Any]) -> Any:
    if isinstance(data, LazyTemplate):
        return LazyTemplate(data.source, values)
    if isinstance(data, dict):
        return {k: _rebound(v, values) for k, v in data.items()}
    if isinstance(data, list):
        return [_rebound(v, values) for v in data]
    return data


def _with_leaves(data: Any, values: dict[str, Any] | None) -> Any:
    if isinstance(data, str):
        return LazyTemplate(data, values) if is_template(data) else data
    if isinstance(data, dict):
        return {k: _with_leaves(v, values) for k, v in data.items()}
    if isinstance(data, list):
        return [_with_leaves(v, values) for v in data]
    return data


@functools.lru_cache(maxsize=1024)
def _compiled(source: str) -> Any:
    """A tool's template, compiled once per process (a thousand cases share it)."""
    return environment().from_string(source)


# ---- templates over a case's values (dsl/compiler/cases.py) ------------------------------------

def single_name(source: str) -> str | None:
    """The name when ``source`` is exactly one ``{{ name }}`` (a body template then sends
    the value itself: a list, a number), else None."""
    tokens = scan(source)
    if tokens is not None and len(tokens) == 1 and type(tokens[0]) is Value:
        value = tokens[0]
        if len(value.path) == 1 and not value.filters and not value.trimmed:
            return value.path[0]
    return None


class CaseTemplate:
    """A template over a case's values, strict: every name it reads must be a value of the
    case (:attr:`names`, checked before it renders). The templates :func:`scan` reads render
    without Jinja, exactly as Jinja renders them; anything else in the sandbox of
    :func:`strict_environment`, with its limits."""

    __slots__ = ("_compiled", "names", "source", "tokens")

    def __init__(self, source: str) -> None:
        """``source`` must compile (:func:`check_template`)."""
        self.source = source
        tokens = scan(source)
        self._compiled: Any = None
        self.tokens: tuple[Token, ...] | None = None
        if tokens is not None:
            self.names = frozenset(t.path[0] for t in tokens
                                   if not isinstance(t, str) and t.path is not None)
            if renders_alone(tokens):
                self.tokens = tokens
        else:
            # why: Jinja is heavy and only needed when a text really is a template (most are plain)
            from jinja2 import meta

            env = strict_environment()
            found = meta.find_undeclared_variables(env.parse(source))
            self.names = frozenset(found - set(env.globals))

    def render(self, values: dict[str, Any]) -> str:
        """The text for one case; raises what Jinja raises (a limit, an undefined field)."""
        if self.tokens is not None:
            out = render_tokens(self.tokens, values, strict=True)
            if out is not None:
                return out
        if self._compiled is None:
            self._compiled = strict_environment().from_string(self.source)
        return str(self._compiled.render(values))


@functools.cache
def strict_environment() -> Any:
    """The sandbox (dsl/compiler/sandbox.py, with its limits) for templates over a case's values:
    an undefined name or field is an error, never empty text."""
    # why: Jinja is heavy and only needed when a text really is a template (most are plain)
    from jinja2 import StrictUndefined

    from .sandbox import BoundedEnvironment

    env = BoundedEnvironment(undefined=StrictUndefined, autoescape=False,
                             keep_trailing_newline=True)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    return env


@functools.cache
def environment() -> Any:
    # why: Jinja is heavy and only needed when a text really is a template (most are plain)
    from jinja2 import ChainableUndefined

    from .sandbox import BoundedEnvironment

    env = BoundedEnvironment(
        undefined=ChainableUndefined, autoescape=False, keep_trailing_newline=True
    )
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    return env


def compile_template(source: str) -> Any:
    """A compiled template, or a TemplateProblem saying what is wrong and on which line."""
    # why: Jinja is heavy and only needed when a text really is a template (most are plain)
    from jinja2 import TemplateSyntaxError

    try:
        return environment().from_string(source)
    except TemplateSyntaxError as exc:
        return TemplateProblem(exc.message or str(exc), exc.lineno or 1)


def render_tool_output(template: Any, args: Any, at: dt.datetime) -> str:
    return str(template.render(args=args if isinstance(args, dict) else {}, at=at,
                               now=say(at)))


def render_system(template: Any, system: str, at: dt.datetime) -> str:
    return str(template.render(system=system, now=say(at), at=at)).strip()


def default_system(system: str, at: dt.datetime) -> str:
    """:data:`DEFAULT_SYSTEM_PROMPT` rendered for a scenario as :func:`render_system`
    renders it (most targets keep the default prompt, and a run need not import Jinja
    before its first request: :func:`scan` reads it)."""
    return _DEFAULT_SYSTEM.render(system=system, now=say(at), at=at).strip()


_DEFAULT_SYSTEM = LazyTemplate(DEFAULT_SYSTEM_PROMPT)


def as_tool_text(value: Any) -> str:
    """Fixed ``returns`` data as the text the model receives."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def line_offset(text: str, line: int) -> int:
    """The offset in ``text`` where its 1-based ``line`` starts."""
    offset = 0
    for _ in range(line - 1):
        nl = text.find("\n", offset)
        if nl < 0:
            break
        offset = nl + 1
    return offset
