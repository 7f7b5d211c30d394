"""Text and ``{{ name.field }}`` templates (a fake tool's ``returns: 'Booked {{ args.date }}'``)
render without Jinja (issue 27): exactly what the sandbox renders, on every kind of value
and every template that is not of that kind left to Jinja."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from dsl.compiler.templates import LazyTemplate, _compiled, value_parts

AT = dt.datetime(2026, 9, 29, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
ARGS: list[Any] = [
    {"order": "1234", "date": "2026-10-01"},
    {"order": 1234, "date": None},
    {"order": 12.5, "date": True},
    {"order": "ünïcode \u2603 {{ not a template }}", "date": ""},
    {"order": ["a", "list"], "date": {"a": "dict"}},
    {},
    {"items": "shadowed by dict.items"},
]
SIMPLE = [
    "{{ args.order }}",
    "Order {{ args.order }} ships on {{args.date}}.",
    '{"order": "{{ args.order }}", "status": "shipped"}',
    "{{ args.missing }} and {{ args.order }}",
    "{{ args.items }}",
    "{{ at }} / {{ now }}",
    "trailing newline {{ args.order }}\n",
    "{{ args }}",
]
NOT_SIMPLE = [
    "{{ args.order | upper }}",
    "{% if args.order %}yes{% endif %}",
    "{{- args.order -}}",
    "{# comment #}{{ args.order }}",
    "{{ args.order.deeper }}",
    "{{ true }}",
    "no template at all",
]


@pytest.mark.parametrize("source", SIMPLE + NOT_SIMPLE)
@pytest.mark.parametrize("args", ARGS, ids=range(len(ARGS)))
def test_renders_as_jinja_renders(source: str, args: Any) -> None:
    kw = {"args": args, "at": AT, "now": "Tuesday, 29 September 2026, 10:00"}
    assert LazyTemplate(source).render(**kw) == str(_compiled(source).render(**kw))


def test_which_templates_skip_jinja() -> None:
    assert all(value_parts(s) is not None for s in SIMPLE)
    assert all(value_parts(s) is None for s in NOT_SIMPLE)
    assert value_parts("Booked {{ args.date }}") == ("Booked ", ("args", "date"), "")


def test_a_case_value_is_read_and_the_call_wins() -> None:
    t = LazyTemplate("{{ name }} {{ args.order }}", {"name": "Ana", "args": {"order": "x"}})
    assert t.render(args={"order": "1"}) == "Ana 1"


def test_the_limit_is_the_sandboxs() -> None:
    from dsl.compiler.sandbox import MAX_TEMPLATE_CHARS
    from dsl.compiler.templates import MAX_RENDERED_CHARS

    assert MAX_RENDERED_CHARS == MAX_TEMPLATE_CHARS
    big = "x" * (MAX_TEMPLATE_CHARS // 2 + 1)
    with pytest.raises(Exception, match=r"10,000,000|characters"):
        LazyTemplate("{{ args.a }}{{ args.a }}").render(args={"a": big})
