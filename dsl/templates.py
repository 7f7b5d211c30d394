"""Author-written templates (system prompts, tool returns), rendered in Jinja's sandbox.

Templates come from YAML files; they may only read the values we pass in. The immutable
sandbox refuses attribute access to Python internals and any mutation; missing values
render as empty text (a model that leaves out an argument gets an answer, not a crash).
"""

from __future__ import annotations

import datetime as dt
import functools
import json
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
