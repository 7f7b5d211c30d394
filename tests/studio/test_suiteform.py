"""Suite settings as a form (dsl/studio/suiteform.py): scenarist.yaml's targets, defaults,
world tables and tools, each edit changing only its lines, the JSON Schema and the table
keys of a tool written from what an author types."""

from __future__ import annotations

import difflib
import json

import pytest

from dsl.init import SUITE_TEMPLATE
from dsl.studio.suiteform import FormError, apply, form_of, pairs_text, parse_pairs
from tests.conftest import suite_yaml


def changed(old: str, new: str) -> list[str]:
    return [x for x in difflib.unified_diff(old.splitlines(), new.splitlines(), lineterm="",
                                            n=0)
            if x[:1] in "+-" and not x.startswith(("+++", "---"))]


SUITE = """\
# the clinic's suite
targets:
  local:
    kind: openai
    base_url: http://127.0.0.1:8080/v1   # llama.cpp
    model: qwen
defaults:
  runs: 5
  min_pass_rate: 0.8  # four of five
tools:
  list_hours:
    description: List the hours.
    returns: "09-18"
judge: {target: local}
"""


def test_the_model() -> None:
    model = form_of(SUITE)
    assert model["targets"] == [{"name": "local", "kind": "openai", "fields": {
        "base_url": "http://127.0.0.1:8080/v1", "model": "qwen", "api_key_env": ""},
        "yaml_only": []}]
    assert model["defaults"] == {"target": None, "runs": 5, "min_pass": None,
                                 "min_pass_rate": 0.8, "concurrency": None, "max_steps": None}
    assert model["tools"][0]["returns"] == "09-18"
    assert model["yaml_only"] == ["judge"]
    assert model["kinds"]["replay"] == ["cassette"]


def test_a_target_found_and_renamed_where_the_suite_names_it() -> None:
    new = apply(SUITE + "compare: local:local\n", [
        {"op": "add_target"},
        {"op": "rename_target", "target": "target_2", "name": "desk"},
        {"op": "target_set", "target": "desk", "key": "base_url", "value": "http://h:1/v1"},
        {"op": "target_set", "target": "desk", "key": "model", "value": "m"},
        {"op": "target_set", "target": "desk", "key": "api_key_env", "value": "DESK_KEY"},
        {"op": "defaults_set", "key": "target", "value": "desk"},
    ])
    assert changed(SUITE + "compare: local:local\n", new) == [
        "+  desk:", "+    kind: openai", "+    base_url: http://h:1/v1", "+    model: m",
        "+    api_key_env: DESK_KEY", "+  target: desk"]
    renamed = apply(new, [{"op": "rename_target", "target": "desk", "name": "front"}])
    assert "  target: front\n" in renamed
    replay = apply(new, [{"op": "target_set", "target": "desk", "key": "kind",
                          "value": "replay"}])
    assert '  desk:\n    kind: replay\n    cassette: ""\n' in replay


def test_defaults_keep_their_comments_and_min_pass_replaces_the_share() -> None:
    new = apply(SUITE, [{"op": "defaults_set", "key": "runs", "value": 3},
                        {"op": "defaults_set", "key": "min_pass", "value": "2"},
                        {"op": "defaults_set", "key": "concurrency", "value": 4}])
    assert changed(SUITE, new) == ["-  runs: 5", "-  min_pass_rate: 0.8  # four of five",
                                   "+  runs: 3", "+  min_pass: 2         # four of five",
                                   "+  concurrency: 4"]


def test_a_table_tool_written_for_the_author() -> None:
    new = apply(SUITE, [
        {"op": "table", "action": "add_table", "table": "cards"},
        {"op": "table", "action": "add_column", "table": "cards", "column": "status"},
        {"op": "table", "action": "set_cell", "table": "cards", "row": 0, "column": "id",
         "value": "C-1"},
        {"op": "table", "action": "set_cell", "table": "cards", "row": 0, "column": "status",
         "value": "active"},
        {"op": "add_tool"},
        {"op": "rename_tool", "tool": "tool_2", "name": "block_card"},
        {"op": "tool_set", "tool": "block_card", "key": "description", "value": "Block a card."},
        {"op": "add_arg", "tool": "block_card"},
        {"op": "arg_set", "tool": "block_card", "index": 0, "key": "name", "value": "card_id"},
        {"op": "arg_set", "tool": "block_card", "index": 0, "key": "required", "value": True},
        {"op": "tool_set", "tool": "block_card", "key": "table", "value": "cards"},
        {"op": "tool_set", "tool": "block_card", "key": "action", "value": "update"},
        {"op": "tool_set", "tool": "block_card", "key": "where", "value": "id = card_id"},
        {"op": "tool_set", "tool": "block_card", "key": "set", "value": "status = blocked"},
        {"op": "tool_set", "tool": "block_card", "key": "confirm", "value": True},
    ])
    assert new.endswith("""\
world:
  cards:
    - {id: C-1, status: active}
tools:
  list_hours:
    description: List the hours.
    returns: "09-18"
  block_card:
    description: Block a card.
    input_schema:
      type: object
      properties:
        card_id: {type: string}
      required: [card_id]
    table: cards
    action: update
    confirm: true
    where: {id: "{{ args.card_id }}"}
    set: {status: blocked}
judge: {target: local}
""") or "world:\n  cards:\n" in new
    tool = form_of(new)["tools"][1]
    assert (tool["where"], tool["set"], tool["confirm"], tool["action"]) == (
        "id = card_id", "status = blocked", True, "update")
    assert [a["name"] for a in tool["args"]] == ["card_id"]
    # a renamed argument is renamed where it is read
    again = apply(new, [{"op": "arg_set", "tool": "block_card", "index": 0, "key": "name",
                         "value": "card"}])
    assert 'where: {id: "{{ args.card }}"}' in again
    assert "required: [card]" in again
    # create writes the new row's columns under row
    made = apply(new, [{"op": "tool_set", "tool": "block_card", "key": "action",
                        "value": "create"}])
    assert "    row: {status: blocked}\n" in made
    # no table: the table keys go
    plain = apply(new, [{"op": "tool_set", "tool": "block_card", "key": "table", "value": ""}])
    assert "where" not in plain.split("block_card")[1]


@pytest.mark.parametrize(("text", "pairs"), [
    ("id = card_id", [("id", "{{ args.card_id }}")]),
    ("card_id", [("card_id", "{{ args.card_id }}")]),
    ('status = "card_id", n = 7, ok = true', [("status", "card_id"), ("n", 7), ("ok", True)]),
    ("owner: ana; kind = debit", [("owner", "ana"), ("kind", "debit")]),
])
def test_where_and_set_are_read_as_pairs(text: str, pairs: list[tuple[str, object]]) -> None:
    assert [(k, v if not isinstance(v, str) else str(v))
            for k, v in parse_pairs(text, ["card_id"])] == pairs


def test_pairs_are_shown_as_typed() -> None:
    assert pairs_text({"id": "{{ args.card_id }}", "status": "blocked", "n": 7, "x": "a, b"},
                      ["card_id"]) == 'id = card_id, status = blocked, n = 7, x = "a, b"'
    with pytest.raises(FormError) as caught:
        parse_pairs("nonsense", ["card_id"])
    assert str(caught.value) == ("'nonsense' is not column = value: write the column, an "
                                 "equals sign and the value, e.g. id = card_id")


@pytest.mark.parametrize("text", [SUITE_TEMPLATE.read_text("utf-8").replace(
    "@targets@", "  x:\n    kind: replay\n    cassette: c.jsonl").replace("@default@", "x"),
    suite_yaml("http://127.0.0.1:9/v1")])
def test_every_edit_changes_only_its_lines_in_the_suites_we_ship(text: str) -> None:
    new = apply(text, [{"op": "defaults_set", "key": "runs", "value": 9}])
    diff = changed(text, new)
    assert len(diff) == 2
    assert "9" in diff[1]
    if text.startswith("{"):
        assert json.loads(text)["defaults"]["runs"] == 3


def test_a_tools_other_settings_come_from_the_suite_schema() -> None:
    """Every simple key of the schema's library_tool gets a field with no change to the
    form (the business rules of issue 33 will too); the rest stays in the YAML tab."""
    text = "tools:\n  x:\n    description: d\n    table: cards\n    answers: []\n"
    new = apply(text, [{"op": "tool_set", "tool": "x", "key": "one", "value": True},
                       {"op": "tool_set", "tool": "x", "key": "fields", "value": "id, status"}])
    assert new.endswith("    table: cards\n    fields: [id, status]\n    one: true\n"
                        "    answers: []\n")
    tool = form_of(new)["tools"][0]
    assert [(m["key"], m["label"], m["kind"], m["value"]) for m in tool["more"]] == [
        ("error", "Error", "text", None),
        ("ends_conversation", "Ends conversation", "bool", None),
        ("fields", "Fields", "texts", ["id", "status"]), ("one", "One", "bool", True),
        ("require", "Require", "rows", None), ("compute", "Compute", "map", None),
        ("append", "Append", "map", None)]
    assert tool["yaml_only"] == ["answers"]
    off = apply(new, [{"op": "tool_set", "tool": "x", "key": "one", "value": False}])
    assert "one:" not in off


def test_the_business_rules_of_a_table_tool_are_fields() -> None:
    """Issue 33's keys: require (rules as rows of if and else), compute (columns worked out
    by expressions), ends_conversation (a checkbox) — from the suite schema."""
    text = "tools:\n  x:\n    description: d\n    table: cards\n    action: update\n"
    new = apply(text, [
        {"op": "tool_set", "tool": "x", "key": "require", "value": [
            {"if": "row.status == 'active'", "else": "card {{ args.id }} is not active"}]},
        {"op": "tool_set", "tool": "x", "key": "compute",
         "value": {"balance": "row.balance - args.amount"}},
        {"op": "tool_set", "tool": "x", "key": "ends_conversation", "value": True}])
    assert "    require: [{if: row.status == 'active', else: \"card {{ args.id }} is not " \
           "active\"}]\n" in new
    assert "    compute: {balance: row.balance - args.amount}\n" in new
    assert "    ends_conversation: true\n" in new
    more = {m["key"]: m for m in form_of(new)["tools"][0]["more"]}
    assert more["require"]["kind"] == "rows"
    assert [i["key"] for i in more["require"]["item"]] == ["if", "else"]
    assert more["require"]["value"] == [{"if": "row.status == 'active'",
                                         "else": "card {{ args.id }} is not active"}]
