"""Templates (dsl/compiler/templates.py): author-written text rendered in Jinja's sandbox,
and the templates people mostly write (text, ``{{ args.date }}``, ``{% if system %}``)
checked and rendered without Jinja by one tokenizer (``scan``) — proved equal to Jinja,
newlines included, over generated templates and values (hypothesis)."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl.compiler.moment import parse_moment
from dsl.compiler.templates import (
    DEFAULT_SYSTEM_PROMPT,
    JINJA_GLOBALS,
    MAX_RENDERED_CHARS,
    PLAIN_FILTERS,
    CaseTemplate,
    LazyTemplate,
    _compiled,
    check_template,
    compile_template,
    default_system,
    environment,
    plainly_compiles,
    render_system,
    render_tool_output,
    scan,
    single_name,
    strict_environment,
)

AT = parse_moment("2026-09-29T10:00:00-03:00")
SETTINGS = settings(max_examples=600, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def jinja_checks(source: str) -> bool:
    """Whether the sandbox compiles ``source``, asking Jinja alone (what check_template
    answers when its tokenizer does not read the template)."""
    from jinja2 import TemplateSyntaxError

    from dsl.compiler.sandbox import static_problem

    env = environment()
    try:
        tree = env.parse(source)
        if static_problem(tree) is not None:
            return False
        env.compile(tree, raw=True)
    except TemplateSyntaxError:
        return False
    return True


def outcome(render: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
    """("ok", text) or ("raised", the exception's class and words)."""
    try:
        return ("ok", render(*args, **kwargs))
    except Exception as exc:  # what Jinja raises, compared as such
        return ("raised", f"{type(exc).__name__}: {exc}")


# ---- generated templates and values ---------------------------------------------------

PIECES = st.sampled_from([
    *"{}%#-|.ab _\n\r'\"(", "\r\n", "\r\r\n", "\n\r", "{{", "}}", "{%", "%}", "{{-", "-}}",
    "{%-", "-%}", "{#", "#}", "args", "not ", "in", " if ", "if ", "elif ", "else",
    "endif", "for", "x.y", " | ", "length", "upper", "nofilter", "true", "loop", "range",
    "{{ args.a }}", "{{ args.items }}", "{{args.b.c}}", "{{ system }}", "{{ a }}",
    "{{ args.a | length }}", "{{- a }}", "{{ a -}}", "{% if a %}", "{% if not args.a %}",
    "{% endif %}", "{% else %}", "{% elif b %}", "{% elif args.b %}", "{{ missing }}",
    "{{ args.missing.deeper }}", "Booked ", "é🦷", "\t",
])
TEMPLATES = st.lists(PIECES, max_size=20).map("".join)
# templates that are mostly of the kind the tokenizer reads, so the property is about it
COMMON = st.lists(st.sampled_from([
    "Booked ", "\r\n", "\n", "\r", " ", "é", "{{ args.a }}", "{{args.b}}", "{{ args.b.c }}",
    "{{ a }}", "{{ system }}", "{{ args.items }}", "{{ args.missing }}", "{{ args.a.b.c }}",
    "{% if a %}", "{% if not args.a %}", "{% elif b %}", "{% else %}", "{% endif %}",
    "{{ b }}", "}}", "{", "%",
]), max_size=14).map("".join)
CONDITIONS = st.sampled_from(["a", "not a", "b", "args.a", "not args.b", "args.b.c", "system",
                              "missing", "args.missing"])
LEAVES = st.sampled_from(["x", "\r\n", " ", "{{ a }}", "{{ args.a }}", "{{ args.b.c }}",
                          "{{ system }}", "{{ args.missing }}"])


def _if_block(body: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.builds(
        lambda c, then, elifs, other: (
            f"{{% if {c} %}}{then}" + "".join(f"{{% elif {e} %}}{b}" for e, b in elifs)
            + (f"{{% else %}}{other}" if other is not None else "") + "{% endif %}"),
        CONDITIONS, body, st.lists(st.tuples(CONDITIONS, body), max_size=2),
        st.none() | body)


# well-formed nested ifs, so every branch of the rule is taken
BLOCKS = st.recursive(LEAVES, lambda inner: st.one_of(
    _if_block(inner), st.lists(inner, min_size=1, max_size=3).map("".join)), max_leaves=10)

SCALARS = st.one_of(
    st.text(alphabet=st.sampled_from(list("ab é\r\n{}%🦷")), max_size=6), st.integers(),
    st.floats(allow_nan=True), st.booleans(), st.none())
VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3),
    st.dictionaries(st.sampled_from(["a", "b", "c", "items", "keys", "date"]), inner,
                    max_size=4)), max_leaves=8)
NAMES = st.dictionaries(st.sampled_from(["args", "a", "b", "system"]), VALUES, max_size=4)


@SETTINGS
@given(st.one_of(TEMPLATES, COMMON, BLOCKS))
def test_the_tokenizer_says_compiles_exactly_when_jinja_does(source: str) -> None:
    if plainly_compiles(source):
        assert jinja_checks(source), source
    assert (check_template(source) is None) == jinja_checks(source), source


@SETTINGS
@given(st.one_of(TEMPLATES, COMMON, BLOCKS), NAMES)
def test_a_tools_template_renders_exactly_what_jinja_renders(source: str,
                                                               names: dict[str, Any]) -> None:
    if not jinja_checks(source):
        return
    names = {**names, "at": AT, "now": "Tuesday 29 September 2026, 10:00 (UTC-03:00)"}
    assert outcome(LazyTemplate(source).render, **names) == \
        outcome(_compiled(source).render, **names), source


@SETTINGS
@given(st.one_of(TEMPLATES, COMMON, BLOCKS), NAMES, NAMES)
def test_a_cases_values_over_a_tools_template_render_as_jinja_renders(
        source: str, case: dict[str, Any], names: dict[str, Any]) -> None:
    if not jinja_checks(source):
        return
    expected = outcome(_compiled(source).render, **{**case, **names})
    assert outcome(LazyTemplate(source, case).render, **names) == expected, source


@SETTINGS
@given(st.one_of(TEMPLATES, COMMON, BLOCKS), NAMES)
def test_a_template_over_a_case_renders_exactly_what_jinja_renders(
        source: str, values: dict[str, Any]) -> None:
    if not jinja_checks(source):
        return
    template = CaseTemplate(source)
    jinja = strict_environment().from_string(source)
    assert outcome(template.render, values) == outcome(jinja.render, values), source
    from jinja2 import meta

    env = strict_environment()
    assert template.names == meta.find_undeclared_variables(env.parse(source)) - set(
        env.globals), source


# ---- what the tokenizer reads, and the cases found by hand ---------------------------

COMMON_TEMPLATES = [
    "Booked {{ args.date }} at {{ args.time }}.",
    '{"order": "{{ args.order }}", "status": "shipped", "eta": "2026-10-02"}',
    "Order {{ args.order }} ships on {{args.date}}.",
    "{{ at }} / {{ now }}",
    "trailing newline {{ args.order }}\n",
    DEFAULT_SYSTEM_PROMPT,
    "{% if not args.x %}none{% elif args.y %}y{% else %}z{% endif %}",
]


@pytest.mark.parametrize("source", COMMON_TEMPLATES)
def test_the_templates_people_write_render_without_jinja(source: str) -> None:
    assert LazyTemplate(source).tokens is not None
    assert CaseTemplate(source).tokens is not None


@pytest.mark.parametrize("source", [
    "{{ args.order | upper }}",  # a filter: Jinja renders it
    "{{- args.order -}}",  # whitespace control
    "{# comment #}{{ args.order }}",
    "{{ true }}",
    "{{ range }}",  # the sandbox's own names
    "{% for x in args %}{% endfor %}",
    "no template at all {{",
])
def test_anything_else_is_rendered_by_jinja(source: str) -> None:
    assert LazyTemplate(source).tokens is None


@pytest.mark.parametrize("newline", ["\r\n", "\r", "\n"])
def test_carriage_returns_render_as_jinja_reads_them(newline: str) -> None:
    """Jinja's lexer reads \\r\\n and \\r as \\n: so do the templates rendered without it
    (a fake tool's answer ``'Booked\\r\\n{{ args.date }}'`` rendered \\r\\n before)."""
    source = f"Booked{newline}{{{{ args.date }}}}{newline}"
    assert LazyTemplate(source).render(args={"date": "2026-10-06"}) == "Booked\n2026-10-06\n"
    assert CaseTemplate(f"Hola{newline}{{{{ name }}}}").render({"name": "Ana"}) == "Hola\nAna"
    # a value is text, never a template: its own \r\n stays
    assert LazyTemplate("{{ args.a }}").render(args={"a": "x\r\ny"}) == "x\r\ny"


def test_a_tools_template_tolerates_missing_values() -> None:
    t = compile_template("Booked {{ args.date }} at {{ args.time }}{{ args.x.y }}.")
    assert render_tool_output(t, {"date": "2026-10-06", "time": "15:00"}, AT) == \
        "Booked 2026-10-06 at 15:00."
    assert render_tool_output(t, None, AT) == "Booked  at ."
    assert render_tool_output(compile_template("{{ args | tojson }}"), {"a": "<b>"}, AT) == \
        '{"a": "\\u003cb\\u003e"}'
    lazy = LazyTemplate("Booked {{ args.date }}{{ args.x.y }}.")
    assert render_tool_output(lazy, {"date": "2026-10-06"}, AT) == "Booked 2026-10-06."


def test_a_template_over_a_case_is_strict_and_bounded() -> None:
    t = CaseTemplate("{{ patient.name }} {{ dose | default('?') }}")
    assert t.names == {"patient", "dose"}
    assert t.render({"patient": {"name": "Ana"}, "dose": 2}) == "Ana 2"
    with pytest.raises(Exception, match="has no attribute 'name'"):
        t.render({"patient": "Ana", "dose": 1})
    with pytest.raises(Exception, match="'dict object' has no attribute 'age'"):
        CaseTemplate("{{ patient.age }}").render({"patient": {"name": "Ana"}})
    with pytest.raises(Exception, match="repeating a value"):
        CaseTemplate("{{ x * 100000000 }}").render({"x": "ab"})


def test_text_past_the_limit_is_refused_as_the_sandbox_refuses_it() -> None:
    from dsl.compiler.sandbox import MAX_TEMPLATE_CHARS

    assert MAX_RENDERED_CHARS == MAX_TEMPLATE_CHARS
    big = "x" * (MAX_RENDERED_CHARS // 2 + 1)
    with pytest.raises(Exception, match="the template's output passed 10,000,000 characters"):
        LazyTemplate("{{ args.a }}{{ args.a }}").render(args={"a": big})


def test_the_sandboxs_own_names_and_filters_are_the_ones_the_tokenizer_knows() -> None:
    assert set(environment().globals) == JINJA_GLOBALS
    assert set(strict_environment().globals) == JINJA_GLOBALS
    assert set(PLAIN_FILTERS) <= set(environment().filters)


def test_a_body_that_is_one_name_sends_the_value_itself() -> None:
    assert single_name("{{ mcp_url }}") == "mcp_url"
    assert single_name(" {{ mcp_url }}") is None
    assert single_name("{{ a.b }}") is None
    assert single_name("{{ a | tojson }}") is None
    assert scan("Booked {{ args.date }}") is not None


@pytest.mark.parametrize(("source", "ok"), [
    ("Booked {{ args.date }} at {{ args.time }}.", True),
    ('{"order": "{{ args.order }}", "eta": {"days": 2}}', True),
    ("{{ args.x | upper }}", True),
    ("{% if args.x %}yes{% endif %}", True),
    ("{{ args.date }", False),
    ("{{ not }}", False),
    ("{% if x %}", False),
    ("{{ x | no_such_filter }}", False),  # found when Jinja generates code, not when parsing
])
def test_check_template(source: str, ok: bool) -> None:
    assert (check_template(source) is None) == ok
    assert (check_template(source) is None) == hasattr(compile_template(source), "render")


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
    for at in (AT, parse_moment("2027-02-28T23:59:00+05:45"), dt.datetime(2026, 1, 1)):
        assert default_system(system, at) == render_system(
            compile_template(DEFAULT_SYSTEM_PROMPT), system, at)
