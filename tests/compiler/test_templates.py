"""Templates in tool returns and system prompts, in Jinja's sandbox."""

from __future__ import annotations

import pytest

from dsl.compiler.moment import parse_moment
from dsl.compiler.templates import compile_template, render_system, render_tool_output

AT = parse_moment("2026-09-29T10:00:00-03:00")


def test_tool_template_renders_arguments_and_tolerates_missing_ones() -> None:
    t = compile_template("Booked {{ args.date }} at {{ args.time }}{{ args.x.y }}.")
    assert render_tool_output(t, {"date": "2026-10-06", "time": "15:00"}, AT) == \
        "Booked 2026-10-06 at 15:00."
    assert render_tool_output(t, None, AT) == "Booked  at ."
    assert render_tool_output(compile_template("{{ args | tojson }}"), {"a": "<b>"}, AT) == \
        '{"a": "\\u003cb\\u003e"}'


@pytest.mark.parametrize("source", [
    "{{ args.__class__.__mro__[1].__subclasses__() }}",
    "{{ ''.__class__.__base__.__subclasses__() }}",
    "{{ cycler.__init__.__globals__.os }}",
    "{% set x = args.update({'a': 1}) %}{{ x }}",
])
def test_tool_templates_cannot_reach_python(source: str) -> None:
    from jinja2.exceptions import SecurityError, UndefinedError

    t = compile_template(source)
    try:
        out = render_tool_output(t, {"a": 1}, AT)
    except (SecurityError, UndefinedError):
        return
    assert "class" not in out
    assert "module" not in out
    assert "function" not in out


def test_system_prompt_default() -> None:
    from dsl.compiler.templates import DEFAULT_SYSTEM_PROMPT

    t = compile_template(DEFAULT_SYSTEM_PROMPT)
    assert render_system(t, "", AT) == \
        "Current date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00)."
    assert render_system(t, "Sé breve.", AT) == \
        "Sé breve.\n\nCurrent date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00)."


@pytest.mark.parametrize("system", [
    "", "Sé breve.", "  padded  \n", "\n\nlines\nand {{ braces }} {% raw %}", "0", " ",
    "tabs\t\there", "emoji 🦷 and\r\ncarriage returns\n\n",
])
def test_the_default_system_prompt_without_jinja_is_jinjas_text(system: str) -> None:
    from dsl.compiler.templates import DEFAULT_SYSTEM_PROMPT, default_system

    for at in (AT, parse_moment("2027-02-28T23:59:00+05:45")):
        assert default_system(system, at) == render_system(
            compile_template(DEFAULT_SYSTEM_PROMPT), system, at)
