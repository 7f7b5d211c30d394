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
from dataclasses import dataclass
from typing import Any

from .moment import say

DEFAULT_SYSTEM_PROMPT = (
    "{% if system %}{{ system }}\n\n{% endif %}Current date and time: {{ now }}."
)


@dataclass(frozen=True, slots=True)
class TemplateProblem:
    message: str
    line: int  # 1-based line inside the template
    limit: bool = False  # it compiles, but passes a limit of dsl.compiler.sandbox

    @property
    def verb(self) -> str:
        """How a message says what is wrong: ``... does not compile: ...``."""
        return "is too costly" if self.limit else "does not compile"

    def hint(self, otherwise: str) -> str:
        """The fix to suggest: the sandbox's limits when the template passes one, else
        ``otherwise`` (what a template of that place looks like)."""
        if not self.limit:
            return otherwise
        from .sandbox import LIMITS_HINT  # Jinja is loaded already: it found the problem

        return LIMITS_HINT


def is_template(text: str) -> bool:
    return "{{" in text or "{%" in text


# Templates people write are mostly of one small kind: text, values like
# ``{{ args.date }}`` or ``{{ args.items | length }}``, and ``{% if system %}...{% endif %}``
# (the default system prompt). Jinja compiles every template of that kind, so checking one
# needs no Jinja (whose import alone costs a tenth of lint's budget); anything else — other
# statements, arguments, operators, comments — is given to Jinja itself.
_KEYWORDS = frozenset([
    "and", "or", "not", "in", "is", "if", "else", "elif", "endif", "for", "endfor",
    "block", "endblock", "extends", "include", "import", "from", "as", "with",
    "without", "macro", "endmacro", "call", "endcall", "filter", "endfilter", "set",
    "endset", "raw", "endraw", "recursive", "true", "false", "none", "True", "False",
    "None",
])
_NAME = r"[A-Za-z_][A-Za-z0-9_]*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
_WS = r"[ \t\n]*"
# built-in filters that need no argument (all of them in Jinja's sandbox; a test checks)
PLAIN_FILTERS = frozenset([
    "abs", "capitalize", "count", "e", "escape", "first", "float", "int", "last",
    "length", "list", "lower", "reverse", "round", "sort", "string", "striptags",
    "title", "tojson", "trim", "unique", "upper", "urlencode", "wordcount",
])
_OPEN = re.compile(r"\{[{%#]")
_VALUE = re.compile(rf"\{{\{{-?{_WS}({_DOTTED})((?:{_WS}\|{_WS}{_NAME})*){_WS}-?\}}\}}")
_STATEMENT = re.compile(
    rf"\{{%-?{_WS}(if|elif|else|endif)(?:[ \t\n]+(not[ \t\n]+)?({_DOTTED}))?{_WS}-?%\}}")


def _plain_name(text: str) -> bool:
    return not any(part in _KEYWORDS for part in text.split("."))


def plainly_compiles(source: str) -> bool:
    """True only when Jinja certainly compiles ``source``: text with ``{{ name.name }}``
    values (optionally through argument-less filters) and properly nested
    ``{% if [not] name %}``, ``{% elif ... %}``, ``{% else %}``, ``{% endif %}``."""
    stack: list[bool] = []  # per open if: has its else been seen?
    pos = 0
    while (opener := _OPEN.search(source, pos)) is not None:
        at = opener.start()
        if (m := _VALUE.match(source, at)) is not None:
            filters = [f.strip(" \t\n|") for f in m.group(2).split("|")[1:]]
            if not _plain_name(m.group(1)) or not all(f in PLAIN_FILTERS for f in filters):
                return False
        elif (m := _STATEMENT.match(source, at)) is not None:
            head, name = m.group(1), m.group(3)
            if head in ("if", "elif"):
                if name is None or not _plain_name(name):
                    return False
                if head == "if":
                    stack.append(False)
                elif not stack or stack[-1]:
                    return False
            elif name is not None or m.group(2) is not None or not stack:
                return False
            elif head == "else":
                if stack[-1]:
                    return False
                stack[-1] = True
            else:
                stack.pop()
        else:
            return False
        pos = m.end()
    return not stack


def check_template(source: str) -> TemplateProblem | None:
    """What is wrong with a template, or None when it compiles. Common templates are
    recognised without Jinja (:func:`plainly_compiles`); for the others Jinja generates
    the template's code (every check it makes at compile time) but Python's compiler is
    not run."""
    if plainly_compiles(source):
        return None
    from jinja2 import TemplateSyntaxError

    from .sandbox import static_problem

    env = environment()
    try:
        tree = env.parse(source)
        limit = static_problem(tree)
        if limit is not None:
            return TemplateProblem(limit[0], limit[1], limit=True)
        env.compile(tree, raw=True)
    except TemplateSyntaxError as exc:
        return TemplateProblem(exc.message or str(exc), exc.lineno or 1)
    return None


class LazyTemplate:
    """A template that was checked when the scenario compiled, and is compiled the first
    time it renders (lint never renders, so it never pays for Jinja's compiler).
    ``values``: a case's values (dsl/compiler/cases.py), which it reads beside the call's own
    names (``args``, ``now``, ``at``: those win)."""

    __slots__ = ("parts", "source", "values")

    def __init__(self, source: str, values: dict[str, Any] | None = None) -> None:
        self.source = source
        self.values = values
        self.parts = value_parts(source)

    def render(self, *args: Any, **kwargs: Any) -> str:
        if self.parts is not None and not args:
            # text and {{ args.order }}: without Jinja, as Jinja renders it (issue 27: a
            # fake tool's answer on every call of a run; a test compares the two)
            out = _render_parts(self.parts, kwargs, self.values)
            if out is not None:
                return out
        compiled = _compiled(self.source)
        if self.values:
            kwargs = {**self.values, **kwargs}
        return str(compiled.render(*args, **kwargs))

    def __repr__(self) -> str:
        return f"LazyTemplate({self.source!r})"


_VALUE_ONLY = re.compile(r"\{\{[ \t\n]*([A-Za-z_][A-Za-z0-9_]*)(?:\.([A-Za-z_][A-Za-z0-9_]*))?"
                         r"[ \t\n]*\}\}")
_PLAIN_VALUES = (str, int, float, bool, type(None))


def value_parts(source: str) -> tuple[Any, ...] | None:
    """``source`` as alternating text and ``(name, field or None)`` — for
    ``Booked {{ args.date }}``: ``("Booked ", ("args", "date"), "")`` — when it is only text
    and ``{{ name }}`` or ``{{ name.field }}`` values (no filters, statements, comments or
    whitespace control); None otherwise."""
    parts: list[Any] = []
    pos = 0
    for m in _VALUE_ONLY.finditer(source):
        text = source[pos:m.start()]
        if _OPEN.search(text) or m.group(1) in _KEYWORDS:
            return None
        parts += [text, (m.group(1), m.group(2))]
        pos = m.end()
    if not parts or _OPEN.search(source, pos) or "}}" in source[pos:]:
        return None
    parts.append(source[pos:])
    return tuple(parts)


def _render_parts(parts: tuple[Any, ...], kwargs: dict[str, Any],
                  values: dict[str, Any] | None) -> str | None:
    """What the sandbox (ChainableUndefined, no autoescape) renders for ``parts``, or None
    when that needs Jinja: a name it is not given, a field of something other than a plain
    mapping or one a mapping has as a method (``items``), a value other than text, a
    number, a boolean or None, or text past the sandbox's limit."""
    out: list[str] = []
    for i, part in enumerate(parts):
        if i % 2 == 0:
            out.append(part)
            continue
        name, field = part
        if name in kwargs:
            value = kwargs[name]
        elif values and name in values:
            value = values[name]
        else:
            return None
        if field is not None:
            if type(value) is not dict or hasattr(dict, field):
                return None
            value = value.get(field, "")  # a missing field is empty text (Chainable)
        if not isinstance(value, _PLAIN_VALUES):
            return None
        out.append(str(value))
    text = "".join(out)
    return text if len(text) <= MAX_RENDERED_CHARS else None


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

_NAME_ONLY = re.compile(r"\{\{[ \t\n]*([A-Za-z_][A-Za-z0-9_]*)[ \t\n]*\}\}")


def simple_parts(source: str) -> tuple[str, ...] | None:
    """``source`` as alternating text and names — ``("Hola ", "name", "!")`` for
    ``Hola {{ name }}!`` — when it is only text and ``{{ name }}`` values (no dots,
    filters, statements, comments or whitespace control); None otherwise. Such a template
    renders exactly as Jinja renders it: each name's value through ``str``."""
    parts: list[str] = []
    pos = 0
    for m in _NAME_ONLY.finditer(source):
        text = source[pos:m.start()]
        if _OPEN.search(text) or m.group(1) in _KEYWORDS:
            return None
        parts += [text, m.group(1)]
        pos = m.end()
    if _OPEN.search(source, pos):
        return None
    parts.append(source[pos:])
    return tuple(parts)


class CaseTemplate:
    """A template over a case's values, strict: every name it reads must be a value of the
    case (:attr:`names`, checked before it renders). Text and ``{{ name }}`` values render
    without Jinja (:func:`simple_parts`); anything else in the sandbox of
    :func:`strict_environment`, with its limits."""

    __slots__ = ("_compiled", "names", "parts", "source")

    def __init__(self, source: str) -> None:
        """``source`` must compile (:func:`check_template`)."""
        self.source = source
        self.parts = simple_parts(source)
        self._compiled: Any = None
        if self.parts is not None:
            self.names = frozenset(self.parts[1::2])
        else:
            from jinja2 import meta

            env = strict_environment()
            found = meta.find_undeclared_variables(env.parse(source))
            self.names = frozenset(found - set(env.globals))

    def render(self, values: dict[str, Any]) -> str:
        """The text for one case; raises what Jinja raises (a limit, an undefined field)."""
        parts = self.parts
        if parts is not None:
            if len(parts) == 3 and not parts[0] and not parts[2]:
                return str(values[parts[1]])
            return "".join(p if i % 2 == 0 else str(values[p]) for i, p in enumerate(parts))
        if self._compiled is None:
            self._compiled = strict_environment().from_string(self.source)
        return str(self._compiled.render(values))


@functools.cache
def strict_environment() -> Any:
    """The sandbox (dsl/compiler/sandbox.py, with its limits) for templates over a case's values:
    an undefined name or field is an error, never empty text."""
    from jinja2 import StrictUndefined

    from .sandbox import BoundedEnvironment

    env = BoundedEnvironment(undefined=StrictUndefined, autoescape=False,
                             keep_trailing_newline=True)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    return env


@functools.cache
def environment() -> Any:
    from jinja2 import ChainableUndefined

    from .sandbox import BoundedEnvironment

    env = BoundedEnvironment(
        undefined=ChainableUndefined, autoescape=False, keep_trailing_newline=True
    )
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    return env


def compile_template(source: str) -> Any:
    """A compiled template, or a TemplateProblem saying what is wrong and on which line."""
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
    """:data:`DEFAULT_SYSTEM_PROMPT` rendered for a scenario, without Jinja (most targets
    keep the default prompt, and a run need not import Jinja before its first request):
    the same text as :func:`render_system` gives (a test compares them)."""
    text = f"{system}\n\n" if system else ""
    return f"{text}Current date and time: {say(at)}.".strip()


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
