"""dsl/source/schemacheck.py: the one JSON Schema engine (jsonschema-rs says yes or no,
jsonschema words a no).

* jsonschema-rs's yes/no is jsonschema's on our schemas, the case corpus, thousands of
  mutated scenario and suite files, and random schemas with random data;
* whatever jsonschema-rs answers, lint's words are the words jsonschema alone gives (the
  corners where the two engines differ — a pattern's ``$`` before a final newline, YAML's
  ``.inf`` — are pinned here);
* an author's schema is judged (E214), its arguments worded (``problems``, the function a
  tool call's refusal uses), a schema compiled once, nothing fetched from the network;
* no other module of Scenarist imports either engine.
"""

from __future__ import annotations

import ast
import copy
import http.server
import json
import math
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from dsl.checks import REGISTRY
from dsl.source import schemacheck
from dsl.source.load import load_text, read_file
from dsl.source.validate import _diagnose, checker, validate, validator
from tests.conftest import REPO

SCHEMAS = ("scenario.schema.json", "suite.schema.json", "labels.schema.json")
SETTINGS = settings(max_examples=500, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@pytest.mark.parametrize("name", SCHEMAS)
def test_our_schemas_compile(name: str) -> None:
    assert checker(name).refused is None


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


def test_the_engines_agree_on_the_corpus() -> None:
    disagree = []
    valid = 0
    for name, data in CORPUS:
        slow = validator(name).is_valid(data)
        valid += slow
        if checker(name).is_valid(data) != slow:
            disagree.append(data)
    assert disagree == []
    assert 0 < valid < len(CORPUS)


# ---------------------------------------------------------------- mutated files

WORDS = ["", "x", "18:00", "list_business_hours", "read", "openai", "any", "a b",
         "2026-09-29T10:00:00-03:00", "http://x/v1", "non_empty", "contains", "Ñandú",
         "myapp.agent:build", "-dash", "a.b/c"]
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 12) | st.floats(-2, 2, allow_nan=False)
    | st.integers(-2**70, 2**70) | st.sampled_from(WORDS),
    lambda inner: st.lists(inner, max_size=3)
    | st.dictionaries(st.sampled_from(["name", "text", "tools", "threshold", "mode", "args",
                                       "times", "pattern", "contains", "calls", "kind",
                                       "x", "ignore_case", "action", "always", "then",
                                       "runs", "min_pass", "at", "say"]), inner, max_size=3),
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


def _mutated(data: st.DataObject) -> tuple[str, Any]:
    name, base = data.draw(st.sampled_from(CORPUS))
    doc = copy.deepcopy(base)
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(_paths(doc)))
        how = data.draw(st.sampled_from(["replace", "delete", "wrap", "add", "text"]))
        doc = _mutate(doc, path, how, data.draw(JSON))
    return name, doc


@SETTINGS
@given(st.data())
def test_the_engines_agree_on_mutated_files(data: st.DataObject) -> None:
    name, doc = _mutated(data)
    assert checker(name).is_valid(doc) == validator(name).is_valid(doc)


@SETTINGS
@given(st.data())
def test_lint_says_of_a_mutated_file_what_jsonschema_alone_says(data: st.DataObject) -> None:
    """The words: validate (jsonschema-rs first, then jsonschema item by item) gives the
    diagnostics jsonschema's errors over the whole document give, word for word."""
    name, data_ = _mutated(data)
    if not isinstance(data_, dict):
        return
    doc = load_text(json.dumps(data_, ensure_ascii=False), "s.yaml")
    assert doc.data == data_
    what = "the scenario" if name == "scenario.schema.json" else "scenarist.yaml"
    checks = REGISTRY if name == "scenario.schema.json" else {}
    got = validate(doc, name, what, checks=checks)
    alone = _diagnose(doc, list(validator(name).iter_errors(doc.data)), what, checks)
    assert sorted(got, key=lambda d: d.sort_key()) == sorted(alone, key=lambda d: d.sort_key())


# ---------------------------------------------------------------- where the engines differ


@pytest.mark.parametrize(("path", "value"), [
    (("id",), "clinic.hours\n"),  # a block scalar's final newline: `$` matches before it
    (("targets", "t", "entry"), "módulo:build"),  # \w: Unicode in re, ASCII in ECMA-262
])
def test_where_jsonschema_rs_is_stricter_jsonschema_decides_and_nothing_is_said(
        path: tuple[str, ...], value: str) -> None:
    name = "scenario.schema.json" if path == ("id",) else "suite.schema.json"
    data: dict[str, Any] = ({"given": {"at": "2026-09-29T10:00:00-03:00"}, "when": "Hola",
                             "then": ["non_empty"]} if path == ("id",) else
                            {"targets": {"t": {"kind": "python", "entry": "a:b"}}})
    node = data
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    assert validator(name).is_valid(data)
    assert not checker(name).is_valid(data)
    doc = load_text(json.dumps(data, ensure_ascii=False), "s.yaml")
    assert validate(doc, name, "the scenario", checks=REGISTRY) == []


def test_yaml_infinity_is_no_number_to_either_where_a_number_is_wanted() -> None:
    doc = load_text("given: {at: '2026-09-29T10:00:00-03:00'}\nwhen: Hola\nthen:\n"
                    "  - calls_in_order: {tools: [a], threshold: .inf}\n", "s.yaml")
    assert doc.data["then"][0]["calls_in_order"]["threshold"] == math.inf
    assert not checker("scenario.schema.json").is_valid(doc.data)
    (d,) = validate(doc, "scenario.schema.json", "the scenario", checks=REGISTRY)
    assert (d.code, d.message) == ("S105", "'threshold' in the check 'calls_in_order' must "
                                           "be at most 1; got Infinity")


def test_a_value_that_is_not_json_fits_nothing_and_is_worded_by_jsonschema() -> None:
    text = {"type": "string"}
    assert not schemacheck.is_valid(text, "\ud800")  # a lone surrogate: not UTF-8
    assert schemacheck.problems(text, "\ud800") == []  # jsonschema: it is text
    schema = {"type": "object", "properties": {"a": {"type": "string"}}}
    assert not schemacheck.is_valid(schema, {1: "a"})  # a key that is not text
    assert schemacheck.problems(schema, {1: "a"}) == []
    assert schemacheck.problems(schema, {"a": 1}) == ["'a': 1 is not of type 'string'"]


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
        st.tuples(st.just("prefixItems"), st.lists(inner, min_size=1, max_size=2)),
        st.tuples(st.just("contains"), inner),
        st.tuples(st.sampled_from(["minItems", "maxItems", "minLength", "maxLength",
                                   "minProperties", "maxProperties"]), st.integers(0, 3)),
        st.tuples(st.just("uniqueItems"), st.booleans()),
        st.tuples(st.sampled_from(["minimum", "maximum", "exclusiveMinimum",
                                   "exclusiveMaximum"]), st.integers(-2, 2) | st.just(0.5)),
        st.tuples(st.just("multipleOf"), st.sampled_from([1, 2, 0.5])),
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
def test_the_engines_agree_on_random_schemas(schema: Any, instances: list[Any]) -> None:
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError:
        assume(False)
    check = schemacheck.checker(schema)
    assert check.refused is None
    slow = Draft202012Validator(schema)
    for x in instances:
        assert check.is_valid(x) == slow.is_valid(x), (schema, x)


@SETTINGS
@given(SCHEMA | st.dictionaries(st.sampled_from(
    ["type", "minimum", "required", "enum", "pattern", "items", "x", "minLength", "title",
     "examples", "uniqueItems", "allOf", "properties"]), INSTANCES | st.just("[a-"),
    max_size=3))
def test_the_engines_agree_on_which_schemas_are_valid(schema: Any) -> None:
    try:
        Draft202012Validator.check_schema(schema)
        valid = True
    except SchemaError:
        valid = False
    assert (schemacheck.schema_problem(schema) is None) == valid, schema


# ---------------------------------------------------------------- an author's schema


@pytest.mark.parametrize(("schema", "where", "message"), [
    ({"type": "date"}, ("type",), "'date' is not valid under any of the given schemas"),
    ({"properties": {"a": {"pattern": "[a-"}}}, ("properties", "a", "pattern"),
     "'[a-' is not a 'regex'"),
    ({"required": "day"}, ("required",), "'day' is not of type 'array'"),
    # jsonschema finds nothing wrong here, jsonschema-rs cannot resolve it: its words
    ({"$ref": "#/$defs/missing"}, (), "Pointer '/$defs/missing' does not exist"),
])
def test_an_invalid_schema_is_said_where_it_is_wrong(schema: Any, where: tuple[Any, ...],
                                                     message: str) -> None:
    problem = schemacheck.schema_problem(schema)
    assert problem is not None
    assert (problem.where, problem.message) == (where, message)


def test_a_valid_schema_has_no_problem() -> None:
    assert schemacheck.schema_problem({
        "type": "object", "$defs": {"day": {"type": "string", "enum": ["mon", "tue"]}},
        "properties": {"day": {"$ref": "#/$defs/day"}}, "required": ["day"]}) is None


@pytest.fixture
def schema_server() -> Iterator[tuple[str, list[str]]]:
    asked: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/int.json", asked
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_a_reference_to_another_document_is_never_fetched(
        schema_server: tuple[str, list[str]]) -> None:
    url, asked = schema_server
    schema = {"type": "object", "properties": {"n": {"$ref": url}}}
    check = schemacheck.checker(schema)
    assert check.refused is not None  # unresolvable offline: not a schema to trust
    assert not check.is_valid({"n": 1})
    assert schemacheck.schema_problem(schema) is not None
    assert asked == []


# ---------------------------------------------------------------- a tool call's arguments

BOOK = {"type": "object", "properties": {"date": {"type": "string"},
                                         "time": {"type": "string", "pattern": "^[0-2][0-9]:"
                                                                               "[0-5][0-9]$"},
                                         "room": {"enum": ["a", "b"]}},
        "required": ["date", "time"], "additionalProperties": False}


@pytest.mark.parametrize(("args", "said"), [
    ({"date": "2026-10-01", "time": "10:00"}, []),
    ({"date": 5, "time": "10:00"}, ["'date': 5 is not of type 'string'"]),
    ({"time": "10:00"}, ["'date' is a required property"]),
    ({"date": "x", "time": "25h"}, ["'time': '25h' does not match '^[0-2][0-9]:[0-5][0-9]$'"]),
    ({"date": "x", "time": "10:00", "room": "c"}, ["'room': 'c' is not one of ['a', 'b']"]),
    ({"date": "x", "time": "10:00", "who": 1},
     ["Additional properties are not allowed ('who' was unexpected)"]),
    ({"date": 1}, ["'date': 1 is not of type 'string'", "'time' is a required property"]),
])
def test_the_problems_of_arguments_name_the_argument_and_what_was_expected(
        args: dict[str, Any], said: list[str]) -> None:
    assert schemacheck.problems(BOOK, args) == said


def test_a_pattern_only_jsonschema_rs_reads_is_worded_by_jsonschema_rs() -> None:
    schema = {"type": "object", "properties": {"name": {"type": "string",
                                                        "pattern": "^\\p{L}+$"}}}
    assert schemacheck.schema_problem(schema) is None  # jsonschema-rs decides: valid
    assert schemacheck.problems(schema, {"name": "Ana"}) == []
    assert schemacheck.problems(schema, {"name": "4na"}) == [
        "'name': \"4na\" does not match \"^\\p{L}+$\""]


def test_a_schema_is_compiled_once_per_object() -> None:
    schema = {"type": "object", "required": ["a"]}
    one = schemacheck.checker(schema)
    assert schemacheck.checker(schema) is one
    assert schemacheck.checker(dict(schema)) is not one  # another object: its own
    alone = schemacheck.checker(schema, without=("required",))
    assert alone is not one
    assert schemacheck.checker(schema, without=("required",)) is alone
    assert not one.is_valid({})
    assert alone.is_valid({})


def test_the_kept_checkers_are_bounded() -> None:
    schemas = [{"minimum": i} for i in range(schemacheck.MAX_KEPT + 10)]
    for s in schemas:
        assert schemacheck.is_valid(s, 10**6)
    assert len(schemacheck._KEPT) <= schemacheck.MAX_KEPT


@pytest.mark.parametrize(("one", "two", "same"), [
    (1, 1.0, True), (True, 1, False), ([1, {"a": True}], [1.0, {"a": True}], True),
    ({"a": 1, "b": 2}, {"b": 2, "a": 1}, True), ("1", 1, False), (None, False, False),
    (["a"], ("a",), True),
])
def test_json_equality(one: Any, two: Any, same: bool) -> None:
    assert schemacheck.same_json(one, two) == same


# ---------------------------------------------------------------- one place


def test_no_other_module_imports_either_engine() -> None:
    importers = set()
    for path in sorted((REPO / "dsl").rglob("*.py")):
        tree = ast.parse(path.read_text("utf-8"))
        for node in ast.walk(tree):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if any(n.split(".")[0] in ("jsonschema", "jsonschema_rs") for n in names):
                importers.add(str(path.relative_to(REPO)))
    assert importers == {str(Path("dsl/source/schemacheck.py"))}
