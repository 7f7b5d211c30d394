"""Small pieces: moments, templates in their sandbox, Retry-After, cassette keys."""

from __future__ import annotations

import datetime as dt

import pytest

from dsl.moment import MomentError, parse_moment, say
from dsl.targets.cassette import request_key
from dsl.targets.openai import backoff_seconds, retry_after_seconds
from dsl.templates import compile_template, render_system, render_tool_output


def test_moment_is_said_in_its_own_offset() -> None:
    at = parse_moment("2026-09-29T10:00:00-03:00")
    assert say(at) == "Tuesday 29 September 2026, 10:00 (UTC-03:00)"
    assert say(parse_moment("2026-12-24T18:30:00Z")) == "Thursday 24 December 2026, 18:30 (UTC+00:00)"
    assert say(parse_moment("2026-01-05T08:00:00+05:30")) == "Monday 5 January 2026, 08:00 (UTC+05:30)"


@pytest.mark.parametrize(("text", "code"), [
    ("2026-09-29T10:00:00", "E203"), ("2026-09-29", "E209"), ("mañana", "E209")])
def test_bad_moments(text: str, code: str) -> None:
    with pytest.raises(MomentError) as info:
        parse_moment(text)
    assert info.value.code == code


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
    from dsl.templates import DEFAULT_SYSTEM_PROMPT

    t = compile_template(DEFAULT_SYSTEM_PROMPT)
    assert render_system(t, "", AT) == \
        "Current date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00)."
    assert render_system(t, "Sé breve.", AT) == \
        "Sé breve.\n\nCurrent date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00)."


def test_retry_after() -> None:
    now = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds("0.2") == 0.2
    assert retry_after_seconds("Mon, 30 Nov 2026 12:00:05 GMT", now) == 5.0
    assert retry_after_seconds("Mon, 30 Nov 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_backoff_grows_with_jitter() -> None:
    for i in range(4):
        b = 0.5 * 2**i
        for _ in range(50):
            assert b / 2 <= backoff_seconds(i, 500) <= b


def test_cassette_key_ignores_order_but_not_content() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 1}
    b = {"seed": 1, "messages": [{"role": "user", "content": "hi"}], "model": "m"}
    assert request_key(a) == request_key(b)
    assert request_key(a) != request_key({**a, "seed": 2})
    assert request_key(a) == request_key({**a, "stream": False})
