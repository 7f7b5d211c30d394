"""schemas/*.json are what dsl/_buildtools/schemagen.py builds (run `python -m dsl._buildtools.schemagen` after
changing a check or the suite's format), and they describe `expect` and `checks:`."""

from __future__ import annotations

from pathlib import Path

from dsl._buildtools.schemagen import build, dump
from dsl.source.resources import read_text, resource_path

SCHEMAS = Path(__file__).resolve().parents[2] / "schemas"


def test_schemas_are_regenerated() -> None:
    for name, schema in build().items():
        assert (SCHEMAS / name).read_text("utf-8") == dump(schema), \
            f"{name} is stale: run python -m dsl._buildtools.schemagen"


def test_expect_and_named_checks_are_in_the_schemas() -> None:
    built = build()
    expect = built["scenario.schema.json"]["$defs"]["params"]["expect"]
    assert expect["type"] == ["string", "object"]
    assert expect["then"]["required"] == ["expr"]
    assert set(expect["then"]["properties"]) == {"name", "expr"}
    assert expect["markdownDescription"].startswith("**expect** — ")
    checks = built["suite.schema.json"]["properties"]["checks"]
    assert checks["additionalProperties"]["type"] == "string"
    assert checks["propertyNames"] == {"pattern": "^[A-Za-z_][A-Za-z0-9_]*$"}


def test_the_grammar_ships_as_a_resource() -> None:
    assert resource_path("grammar", "expr.lark").name == "expr.lark"
    assert "?start: expr" in read_text("grammar", "expr.lark")
