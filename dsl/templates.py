"""Author-written templates (system prompts, tool returns), rendered in Jinja's sandbox.

Templates come from YAML files; they may only read the values we pass in. The immutable
sandbox refuses attribute access to Python internals and any mutation; missing values
render as empty text (a model that leaves out an argument gets an answer, not a crash).
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


def is_template(text: str) -> bool:
    return "{{" in text or "{%" in text


# A template that only inserts values, ``Booked {{ args.date }} at {{ args.time }}.``: text
# without ``{%`` or ``{#``, and ``{{ name.name }}`` with plain names that are not Jinja's
# operators. Jinja compiles every such template; checking one needs no Jinja at all.
_NAME = r"(?!(?:and|or|not|in|is|if|else)\b)[A-Za-z_][A-Za-z0-9_]*"
_TEXT = r"(?:[^{]|\{(?![{%#]))*"
_PLAIN_TEMPLATE = re.compile(
    rf"{_TEXT}(?:\{{\{{ ?{_NAME}(?:\.{_NAME})* ?\}}\}}{_TEXT})*\Z"
)


def check_template(source: str) -> TemplateProblem | None:
    """What is wrong with a template, or None when it compiles. Jinja generates the
    template's code (every check Jinja makes at compile time) but the Python compiler is
    not run, and templates that only insert values are recognised without Jinja."""
    if _PLAIN_TEMPLATE.match(source):
        return None
    from jinja2 import TemplateSyntaxError

    try:
        environment().compile(source, raw=True)
    except TemplateSyntaxError as exc:
        return TemplateProblem(exc.message or str(exc), exc.lineno or 1)
    return None


class LazyTemplate:
    """A template that was checked when the scenario compiled, and is compiled the first
    time it renders (lint never renders, so it never pays for Jinja's compiler)."""

    __slots__ = ("_compiled", "source")

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: Any = None

    def render(self, *args: Any, **kwargs: Any) -> str:
        if self._compiled is None:
            self._compiled = environment().from_string(self.source)
        return str(self._compiled.render(*args, **kwargs))

    def __repr__(self) -> str:
        return f"LazyTemplate({self.source!r})"


@functools.cache
def environment() -> Any:
    from jinja2 import ChainableUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    env = ImmutableSandboxedEnvironment(
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


def as_tool_text(value: Any) -> str:
    """Fixed ``returns`` data as the text the model receives."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)
