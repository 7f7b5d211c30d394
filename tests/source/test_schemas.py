"""The JSON Schemas in schemas/ are generated from the registry and stay in sync."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dsl._buildtools.schemagen import build, dump

SCHEMAS = Path(__file__).parents[2] / "schemas"


@pytest.mark.parametrize("name", ["scenario.schema.json", "suite.schema.json", "labels.schema.json"])
def test_schema_file_is_up_to_date(name: str) -> None:
    assert (SCHEMAS / name).read_text("utf-8") == dump(build()[name]), (
        f"schemas/{name} is out of date: run python -m dsl._buildtools.schemagen")


@pytest.mark.parametrize("name", ["scenario.schema.json", "suite.schema.json", "labels.schema.json"])
def test_schema_is_valid_2020_12(name: str) -> None:
    Draft202012Validator.check_schema(build()[name])


def _walk(node: Any, path: str, out: list[str]) -> None:
    if isinstance(node, dict):
        for key, sub in (node.get("properties") or {}).items():
            for field in ("description", "markdownDescription", "examples"):
                if field not in sub and "$ref" not in sub:
                    out.append(f"{path}.{key}: no {field}")
            _walk(sub, f"{path}.{key}", out)
        for key in ("items", "then", "else", "additionalProperties"):
            if isinstance(node.get(key), dict):
                _walk(node[key], path, out)
        for key in ("allOf", "anyOf"):
            for sub in node.get(key) or []:
                _walk(sub, path, out)
        for key, sub in (node.get("$defs") or {}).items():
            defs = sub.items() if key == "params" else [(key, sub)]  # params: one per check
            for name, schema in defs:
                for field in ("description", "markdownDescription", "examples"):
                    if field not in schema:
                        out.append(f"#{name}: no {field}")
                _walk(schema, f"#{name}", out)


@pytest.mark.parametrize("name", ["scenario.schema.json", "suite.schema.json", "labels.schema.json"])
def test_every_field_has_help_for_editors(name: str) -> None:
    missing: list[str] = []
    _walk(build()[name], "", missing)
    assert missing == []


def test_editors_can_complete_conversations_and_tools_by_argument() -> None:
    """What an editor offers while someone types a turn, a simulated user, a history
    message or a tool that answers by argument (the keys come from the schema)."""
    s = build()["scenario.schema.json"]
    defs = s["$defs"]
    assert set(defs["turn"]["else"]["properties"]) == {"say", "confirm", "cancel", "then",
                                                       "attachments"}
    assert set(defs["user"]["properties"]) == {"goal", "persona", "target", "max_turns"}
    history = s["properties"]["given"]["properties"]["history"]["items"]["properties"]
    assert set(history) == {"user", "assistant"}
    assert set(history["assistant"]["then"]["properties"]) == {"text", "calls"}
    tool = defs["tool"]["properties"]
    assert {"answers", "error"} <= set(tool)
    assert set(tool["answers"]["items"]["properties"]) == {"when", "returns", "error"}
    for when in (["Hola", {"confirm": "set_business_hours"}], {"user": {
            "goal": "Book a cleaning.", "target": "local"}}, "Hola"):
        assert list(Draft202012Validator(s).iter_errors(
            {"given": {"at": "2026-09-29T10:00:00-03:00"}, "when": when, "then": []})) == []
