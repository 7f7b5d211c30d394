"""A check's settings as form fields, read from the registry (dsl/studio/fields.py): every
registered check gets a shape, and a check registered tomorrow gets its fields with no
change to the studio."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dsl.checks import REGISTRY
from dsl.checks.registry import CheckType
from dsl.studio.fields import describe, shortest, values_of


def test_every_check_has_a_shape_and_the_main_ones_their_words() -> None:
    shapes = {name: describe(name, c.schema) for name, c in REGISTRY.items()}
    assert all(s.kind in ("flag", "fields", "world", "yaml") for s in shapes.values())
    labels = {n: [(f.label, f.kind) for f in s.fields] for n, s in shapes.items()}
    assert labels["contains"][:2] == [("Value", "texts"), ("Ignore case", "bool")]
    assert all(kind == "bool" for _, kind in labels["contains"][2:])  # issue 33's, for free
    assert labels["same_world_as"] == [("Same world as", "rows")]
    assert labels["calls"] == [("Tool", "tool"), ("Arguments", "map"), ("Times", "integer")]
    assert labels["not_calls"] == [("Tool", "tool"), ("Arguments", "map")]
    assert labels["tool_correctness"] == [("Tools", "tools"), ("Mode", "enum"),
                                          ("Threshold", "number")]
    assert labels["asks_to_confirm"] == [("Tool", "tool")]
    assert shapes["world"].kind == "world"
    assert shapes["non_empty"].kind == "flag"


@pytest.mark.parametrize(("name", "param", "values"), [
    ("contains", "x", {"text": "x"}),
    ("contains", ["a", "b"], {"text": ["a", "b"]}),
    ("contains", {"text": "x", "ignore_case": True}, {"text": "x", "ignore_case": True}),
    ("calls", "t", {"name": "t"}),
    ("json", True, {}),
    ("not_calls", ["a", {"name": "b"}], None),
])
def test_values_and_back_in_the_shortest_form(name: str, param: object,
                                              values: dict[str, object] | None) -> None:
    shape = describe(name, REGISTRY[name].schema)
    assert values_of(shape, param) == values
    if values is not None:
        assert shortest(shape, values) == param


@pytest.fixture
def a_new_check() -> Iterator[str]:
    schema = {"type": ["string", "object"], "if": {"type": "object"}, "then": {
        "required": ["word"], "additionalProperties": False,
        "properties": {"word": {"type": "string"}, "at_least": {"type": "integer"},
                       "politely": {"type": "boolean"}}}}
    REGISTRY["says_often"] = CheckType("says_often", "says a word often", schema, (),
                                       lambda p, c: p, lambda p, a: None)  # type: ignore
    try:
        yield "says_often"
    finally:
        del REGISTRY["says_often"]


def test_a_new_check_gets_its_fields_for_free(a_new_check: str) -> None:
    shape = describe(a_new_check, REGISTRY[a_new_check].schema)
    assert [(f.key, f.label, f.kind) for f in shape.fields] == [
        ("word", "Value", "text"), ("at_least", "At least", "integer"),
        ("politely", "Politely", "bool")]
    assert shortest(shape, {"word": "hi", "at_least": 2}) == {"word": "hi", "at_least": 2}
    assert shortest(shape, {"word": "hi"}) == "hi"
