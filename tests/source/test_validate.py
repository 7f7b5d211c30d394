"""Validate: a document against its JSON Schema, every problem located and said for the
person who wrote the file — one message per jsonschema keyword (validate.KEYWORDS)."""

from __future__ import annotations

import pytest

from dsl.checks import REGISTRY
from dsl.source.load import load_text
from dsl.source.validate import KEYWORDS, VALID, Shape, validate

BASE = "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hola\n"


def problems(text: str, schema: str = "scenario.schema.json") -> list[tuple[str, ...]]:
    doc = load_text(text, "s.yaml")
    return [(str(d.span), d.code, d.message, d.hint)
            for d in validate(doc, schema, "the scenario", checks=REGISTRY)]


@pytest.mark.parametrize(("text", "expected"), [
    (BASE + "then:\n  - contains: 42\n",
     ("s.yaml:5:15", "S103", "the check 'contains' must be text, a list or a mapping (key: "
      "value lines), not a number (42)", 'put it in quotes: "42"')),
    (BASE + "then:\n  - contians: x\n",
     ("s.yaml:5:5", "S101", "unknown check 'contians'; did you mean 'contains'?",
      "see the list of checks: scenarist checks, or docs/checks.md")),
    ("given:\n  at: 2026-09-29T10:00:00-03:00\nthen: []\n",
     ("s.yaml:1:1", "S104", "the scenario is missing 'when' (what the person says to the "
      "agent)", 'for example: when: "¿Hasta qué hora atienden hoy?"')),
    (BASE + "then: []\nruns: 0\n", ("s.yaml:5:7", "S105", "'runs' must be at least 1; got 0",
                                    "")),
    (BASE + "then: []\nextra: 1\n",
     ("s.yaml:5:1", "S102", "unknown key 'extra' in the scenario", "allowed keys here: "
      "cases, cases_file, description, given, id, max_steps, min_pass, min_pass_rate, runs, "
      "tags, targets, then, when")),
    (BASE + "then:\n  - contains: x\n    matches: y\n",
     ("s.yaml:6:5", "S106", "a check is one 'name: parameter' pair, but this one has 2 keys "
      "('contains' and 'matches')", "put options inside the parameter, e.g. contains: "
      "{text: \"18:00\", ignore_case: true}, and start each check with its own '-'")),
])
def test_each_problem_in_plain_words_at_its_place(text: str, expected: tuple[str, ...]) -> None:
    assert problems(text) == [expected]


def test_a_valid_document_has_no_problems_and_needs_no_jsonschema() -> None:
    assert problems(BASE + "then:\n  - contains: x\n") == []


def test_every_problem_of_a_file_is_reported_once_per_place() -> None:
    found = problems(BASE + "then:\n  - contians: x\n  - contains: 42\nruns: 0\n")
    assert [p[0] for p in found] == ["s.yaml:5:5", "s.yaml:6:15", "s.yaml:7:7"]


def test_the_keyword_table_covers_what_our_schemas_use() -> None:
    import json

    from dsl.source.resources import resource_path

    used: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            used.update(k for k in node if isinstance(k, str))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for name in ("scenario.schema.json", "suite.schema.json"):
        walk(json.loads(resource_path("schemas", name).read_text("utf-8")))
    validating = {"required", "type", "enum", "const", "minimum", "maximum", "minLength",
                  "maxLength", "minItems", "pattern", "maxProperties", "minProperties",
                  "uniqueItems", "exclusiveMinimum", "exclusiveMaximum"}
    assert (used & validating) <= set(KEYWORDS)


def _invalid_scenarios() -> list[str]:
    from pathlib import Path

    from dsl._buildtools.codedocs import EXAMPLES

    cases = Path(__file__).parents[1] / "cases" / "invalid"
    texts = [p.read_text("utf-8") for p in sorted(cases.rglob("*.yaml"))
             if p.name != "scenarist.yaml"]
    return texts + [e.bad for e in EXAMPLES.values() if e.where == "scenario"]


def test_checking_the_items_one_by_one_finds_what_the_whole_schema_finds() -> None:
    """validate gives jsonschema only the `then` items the fast check refuses (and the rest
    of the file without them): the same problems as the whole document against the whole
    schema, on every invalid case and every wrong example of docs/lint.md."""
    from dsl.source.validate import _diagnose, validator

    compared = 0
    for text in _invalid_scenarios():
        doc = load_text(text, "s.yaml")
        if doc.data is None:
            continue
        whole = _diagnose(doc, list(validator("scenario.schema.json").iter_errors(doc.data)),
                          "the scenario", REGISTRY)
        itemwise = validate(doc, "scenario.schema.json", "the scenario", checks=REGISTRY)
        assert sorted(itemwise, key=lambda d: d.sort_key()) == \
            sorted(whole, key=lambda d: d.sort_key()), text
        compared += bool(whole)
    assert compared >= 20


def test_a_shape_answers_for_a_list_as_for_each_of_its_items() -> None:
    """``broken_items`` is ``sound`` asked of every item at once: a problem in an item, or
    below it, makes it unsound; one at the list itself or beside it does not."""
    shape = Shape((), frozenset({("then", 2), ("then", 4, "contains"), ("then",), ("id",),
                                 ("given", "tools", 0, "name"), ("when", 1, "then", 0)}))
    for path in [("then",), ("given", "tools"), ("when",), ("when", 1, "then"), ("id",)]:
        assert shape.broken_items(path) == {i for i in range(6) if not shape.sound((*path, i))}
    assert shape.broken_items(("then",)) == {2, 4}
    assert (shape.sound(("then", 3)), shape.sound(("then",))) == (True, False)
    assert VALID.broken_items(("then",)) == frozenset()
    assert VALID.sound(("then", 0))

