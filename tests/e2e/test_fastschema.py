"""The fast paths agree with the slow ones they stand in for.

* ``dsl.source.fastschema.compile_schema`` answers "valid?" exactly as jsonschema's
  Draft202012Validator does: on our schemas, the case corpus, thousands of mutated
  scenarios, and random schemas with random data.
* ``plainly_valid_schema`` never accepts an input_schema that jsonschema's
  ``check_schema`` rejects.
* ``check_template``'s Jinja-free path never accepts a template Jinja cannot compile.
"""

from __future__ import annotations

import copy
import math
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from dsl.compiler.templates import PLAIN_FILTERS, check_template, compile_template, plainly_compiles
from dsl.source.fastschema import VALIDATION_KEYWORDS, compile_schema, plainly_valid_schema
from dsl.source.load import read_file
from dsl.source.resources import load_schema
from tests.conftest import REPO

SCHEMAS = ("scenario.schema.json", "suite.schema.json")
SETTINGS = settings(max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def test_the_keyword_list_is_jsonschemas() -> None:
    assert set(Draft202012Validator.VALIDATORS) == VALIDATION_KEYWORDS


@pytest.mark.parametrize("name", SCHEMAS)
def test_our_schemas_compile(name: str) -> None:
    assert compile_schema(load_schema(name)) is not None


def _corpus() -> list[tuple[str, Any]]:
    out = []
    for p in sorted((REPO / "tests" / "cases").rglob("*.yaml")) + sorted(
            (REPO / "scenarios").rglob("*.yaml")):
        doc = read_file(p)
        if doc.data is not None:
            kind = "suite.schema.json" if p.name == "scenarist.yaml" else "scenario.schema.json"
            out.append((kind, doc.data))
    return out


CORPUS = _corpus()


def test_fast_and_jsonschema_agree_on_the_corpus() -> None:
    disagree = []
    valid = 0
    for name, data in CORPUS:
        fast = compile_schema(load_schema(name))
        assert fast is not None
        slow = Draft202012Validator(load_schema(name)).is_valid(data)
        valid += slow
        if fast(data) != slow:
            disagree.append(data)
    assert disagree == []
    assert 0 < valid < len(CORPUS)


# ---------------------------------------------------------------- mutated scenarios

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(-2, 2, allow_nan=False)
    | st.sampled_from(["", "x", "18:00", "list_business_hours", "read", "openai", "any",
                       "2026-09-29T10:00:00-03:00", "http://x/v1", "a b", "non_empty"]),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["name", "text", "tools", "threshold", "mode", "args",
                                       "times", "pattern", "contains", "calls", "kind",
                                       "x", "ignore_case", "action"]), inner, max_size=3),
    max_leaves=6,
)


def _paths(data: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _mutate(data: Any, path: tuple[Any, ...], how: str, value: Any) -> Any:
    if not path:
        return value if how == "replace" else data
    parent = data
    for k in path[:-1]:
        parent = parent[k]
    last = path[-1]
    if how == "replace":
        parent[last] = value
    elif how == "delete":
        del parent[last]
    elif how == "wrap":
        parent[last] = [parent[last]]
    elif how == "add" and isinstance(parent[last], dict):
        parent[last][str(value)[:12]] = value
    elif how == "text":
        parent[last] = str(parent[last])
    return data


@SETTINGS
@given(st.data())
def test_fast_and_jsonschema_agree_on_mutated_files(data: st.DataObject) -> None:
    name, base = data.draw(st.sampled_from(CORPUS))
    doc = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3))):
        paths = _paths(doc)
        path = data.draw(st.sampled_from(paths))
        how = data.draw(st.sampled_from(["replace", "delete", "wrap", "add", "text"]))
        doc = _mutate(doc, path, how, data.draw(JSON))
    fast = compile_schema(load_schema(name))
    assert fast is not None
    assert fast(doc) == Draft202012Validator(load_schema(name)).is_valid(doc)


# ---------------------------------------------------------------- random schemas

SCALARS = st.none() | st.booleans() | st.integers(-3, 3) | st.sampled_from(
    [0.5, 1.0, 2.0, "", "a", "ab", "b1"])
INSTANCES = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["a", "b", "c", "ab"]), inner, max_size=3),
    max_leaves=8,
)
TYPES = st.sampled_from(["string", "integer", "number", "boolean", "null", "array",
                         "object"])


def _schemas(inner: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    keyword = st.one_of(
        st.tuples(st.just("type"), TYPES | st.lists(TYPES, min_size=1, max_size=3,
                                                    unique=True)),
        st.tuples(st.just("enum"), st.lists(SCALARS, min_size=1, max_size=3)),
        st.tuples(st.just("const"), INSTANCES),
        st.tuples(st.just("properties"), st.dictionaries(st.sampled_from(["a", "b"]), inner,
                                                         max_size=2)),
        st.tuples(st.just("required"), st.lists(st.sampled_from(["a", "b", "c"]),
                                                unique=True, max_size=2)),
        st.tuples(st.just("additionalProperties"), inner),
        st.tuples(st.just("patternProperties"), st.dictionaries(
            st.sampled_from(["^a", "b$", "[0-9]"]), inner, max_size=1)),
        st.tuples(st.just("propertyNames"), inner),
        st.tuples(st.just("items"), inner),
        st.tuples(st.sampled_from(["minItems", "maxItems", "minLength", "maxLength",
                                   "minProperties", "maxProperties"]), st.integers(0, 3)),
        st.tuples(st.just("uniqueItems"), st.booleans()),
        st.tuples(st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                   "exclusiveMaximum"]), st.integers(-2, 2) | st.just(0.5)),
        st.tuples(st.just("pattern"), st.sampled_from(["^a", "b", "^[a-z]+$", "1"])),
        st.tuples(st.sampled_from(["allOf", "anyOf", "oneOf"]),
                  st.lists(inner, min_size=1, max_size=3)),
        st.tuples(st.sampled_from(["not", "if", "then", "else"]), inner),
        st.tuples(st.just("dependentRequired"), st.dictionaries(
            st.sampled_from(["a", "b"]), st.lists(st.sampled_from(["a", "b", "c"]),
                                                  unique=True, max_size=2), max_size=2)),
        st.tuples(st.just("description"), st.just("annotations are ignored")),
    )
    return st.booleans() | st.lists(keyword, max_size=4).map(dict)


SCHEMA = st.recursive(st.booleans() | st.just({}), _schemas, max_leaves=6)


@SETTINGS
@given(SCHEMA, st.lists(INSTANCES, min_size=1, max_size=6))
def test_fast_and_jsonschema_agree_on_random_schemas(schema: Any, instances: list[Any]
                                                     ) -> None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        assume(False)
    fast = compile_schema(schema)
    assert fast is not None
    slow = Draft202012Validator(schema)
    for x in instances:
        assert fast(x) == slow.is_valid(x), (schema, x)


@SETTINGS
@given(SCHEMA | st.dictionaries(st.sampled_from(
    ["type", "minimum", "required", "enum", "pattern", "items", "format", "$ref", "x",
     "minLength", "title", "examples", "uniqueItems", "allOf"]), INSTANCES | st.just("[a-"),
    max_size=3))
def test_plainly_valid_schemas_are_valid(schema: Any) -> None:
    if plainly_valid_schema(schema):
        Draft202012Validator.check_schema(schema)


def test_plainly_valid_schema_examples() -> None:
    assert plainly_valid_schema({"type": "object", "properties": {"day": {"type": "string"}},
                                 "required": ["day"]})
    assert not plainly_valid_schema({"type": "date"})
    assert not plainly_valid_schema({"pattern": "[a-"})
    assert not plainly_valid_schema({"minimum": math.nan})
    assert not plainly_valid_schema({"$ref": "#/x"})  # not judged here: jsonschema decides


def test_unsupported_keywords_fall_back() -> None:
    assert compile_schema({"prefixItems": [{"type": "string"}]}) is None
    assert compile_schema({"$ref": "https://example.com/s.json"}) is None
    assert compile_schema({"properties": {"a": {"$id": "x"}}}) is None


def test_recursive_references() -> None:
    schema = {"$defs": {"node": {"type": "object", "properties": {
        "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}}}, "required": ["kids"]}},
        "$ref": "#/$defs/node"}
    fast = compile_schema(schema)
    assert fast is not None
    assert fast({"kids": [{"kids": []}]})
    assert not fast({"kids": [{"kid": []}]})


# ---------------------------------------------------------------- templates

TEMPLATE_TEXT = st.lists(st.sampled_from([
    *"{}%#-|.ab _\n'\"(", "{{", "}}", "{%", "%}", "{{-", "-}}", "{%-", "-%}", "{#", "#}",
    "args", "not ", "in", " if ", "if ", "elif ", "else", "endif", "for", "x.y", " | ",
    "length", "upper", "nofilter", "true", "loop", "{{ args.a }}", "{% if a %}",
    "{% endif %}", "{% else %}", "{% elif b %}"]), max_size=24).map("".join)


@SETTINGS
@given(TEMPLATE_TEXT)
def test_the_jinja_free_path_accepts_only_what_jinja_compiles(source: str) -> None:
    if plainly_compiles(source):
        assert not hasattr(compile_template(source), "message"), source


def test_plain_filters_exist_in_the_sandbox() -> None:
    from dsl.compiler.templates import environment

    assert set(PLAIN_FILTERS) <= set(environment().filters)


@pytest.mark.parametrize("source", [
    "Booked {{ args.date }} at {{ args.time }}.",
    "{% if system %}{{ system }}\n\n{% endif %}Current date and time: {{ now }}.",
    "In transit; expected {{ args.code | length }} days.",
    "{%- if not args.x -%}none{% elif args.y %}y{% else %}z{% endif %}",
])
def test_common_templates_need_no_jinja(source: str) -> None:
    assert plainly_compiles(source)


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


def test_a_lazy_template_renders_like_a_compiled_one() -> None:
    from dsl.compiler.moment import parse_moment
    from dsl.compiler.templates import LazyTemplate, render_tool_output

    at = parse_moment("2026-09-29T10:00:00-03:00")
    lazy = LazyTemplate("Booked {{ args.date }}.")
    assert render_tool_output(lazy, {"date": "2026-10-06"}, at) == "Booked 2026-10-06."
    assert render_tool_output(lazy, {"date": "x"}, at) == "Booked x."


def test_example_suite_has_no_schema_the_fast_path_refuses() -> None:
    suite = read_file(Path(REPO / "scenarios" / "scenarist.yaml"))
    for tool in suite.data["tools"].values():
        if "input_schema" in tool:
            assert plainly_valid_schema(tool["input_schema"])
