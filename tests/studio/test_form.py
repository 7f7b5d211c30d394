"""The form's round trip on every example scenario: read and written back with no edit,
the text is unchanged (byte for byte, comments, key order, quotes and all); one edit
changes that place only; the form's model reads each file as the scenario says."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import Any

import pytest

from dsl.studio.form import FormError, Scenario, SuiteContext, apply, form_of
from tests.conftest import REPO

EXAMPLES = sorted(p for root in ("scenarios", "dsl/assets/conformance", "dsl/assets/init")
                  for p in (REPO / root).rglob("*.yaml")
                  if p.name != "scenarist.yaml" and "judge" not in p.parts)


def changed_lines(old: str, new: str) -> list[str]:
    return [line for line in difflib.unified_diff(old.splitlines(), new.splitlines(),
                                                  lineterm="", n=0)
            if line[:1] in "+-" and not line.startswith(("+++", "---"))]


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 14


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO)))
def test_written_back_unchanged(path: Path) -> None:
    text = path.read_text("utf-8")
    assert Scenario(text).dump() == text


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(REPO)))
def test_one_edit_changes_only_its_place(path: Path) -> None:
    text = path.read_text("utf-8")
    form = form_of(text, [])
    new = apply(text, [{"op": "description", "value": "Changed by the form."}])
    if form["description"] is None:
        assert changed_lines(text, new) == ['+description: "Changed by the form."']
    else:
        old = next(x for x in text.splitlines() if x.startswith("description:"))
        quote = old.split(":", 1)[1].strip()[0]
        quote = quote if quote in "'\"" else ""
        assert changed_lines(text, new) == [
            f"-{old}", f"+description: {quote}Changed by the form.{quote}"]
    if form["checks"]:
        added = apply(text, [{"op": "add_check", "list": None, "check": "non_empty"}])
        assert changed_lines(text, added) == [f"+{' ' * _dash(text)}- non_empty"]


def _dash(text: str) -> int:
    """How far the file indents the items of its top-level then."""
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("then:"))
    item = next(x for x in lines[start + 1:] if x.strip().startswith("- "))
    return len(item) - len(item.lstrip())


HOURS = """\
# yaml-language-server: $schema=../schemas/scenario.schema.json
id: hours   # the id
description: 'A clerk asks.'
given:
  at: 2026-09-29T10:00:00-03:00   # a Tuesday
  tools: [list_business_hours]
when: "¿Hasta qué hora?"
then:
  - contains: '18:00'     # single quotes, kept
  - non_empty             # a flag
"""


def test_the_model_in_plain_words() -> None:
    form = form_of(HOURS, ["list_business_hours", "set_business_hours"])
    assert form == {
        "description": "A clerk asks.",
        "moment": "2026-09-29T10:00:00-03:00",
        "moment_words": "Tuesday 29 September 2026, 10:00 (UTC-03:00)",
        "system": None,
        "runs": None,
        "min_pass": None,
        "min_pass_rate": None,
        "tools": [{"name": "list_business_hours", "on": True},
                  {"name": "set_business_hours", "on": False}],
        "inline_tools": [],
        "world": [],
        "when": {"kind": "message", "message": "¿Hasta qué hora?"},
        "checks": [
            {"check": "contains", "takes": "text", "value": "18:00", "yaml": "",
             "always": False, "name": "", "shape": "fields", "values": {"text": "18:00"},
             "world": []},
            {"check": "non_empty", "takes": "flag", "value": None, "yaml": "",
             "always": False, "name": "", "shape": "flag", "values": {}, "world": []},
        ],
        "yaml_only": [],
    }


def test_each_edit_keeps_the_quotes_and_comments_it_did_not_touch() -> None:
    new = apply(HOURS, [
        {"op": "check_value", "list": None, "index": 0, "value": "18 h"},
        {"op": "description", "value": "A clerk asks again."},
        {"op": "moment", "value": "2026-10-01T09:30:00-03:00"},
        {"op": "tool", "name": "set_business_hours", "on": True},
        {"op": "check_always", "list": None, "index": 1, "value": True},
        {"op": "check_name", "list": None, "index": 0, "value": "says the hour"},
    ])
    assert new == """\
# yaml-language-server: $schema=../schemas/scenario.schema.json
id: hours   # the id
description: 'A clerk asks again.'
given:
  at: 2026-10-01T09:30:00-03:00   # a Tuesday
  tools: [list_business_hours, set_business_hours]
when: "¿Hasta qué hora?"
then:
  - contains: '18 h'      # single quotes, kept
    name: "says the hour"
  - {non_empty: true, always: true} # a flag
"""


def test_turns_are_added_moved_changed_and_removed() -> None:
    new = apply(HOURS, [{"op": "add_turn"}])  # an empty turn, never placeholder words
    assert 'when:\n  - "¿Hasta qué hora?"\n  - say: ""\n' in new
    new = apply(new, [{"op": "turn", "index": 1, "kind": "confirm", "value": "all"},
                      {"op": "move_turn", "index": 1, "to": 0}])
    assert 'when:\n  - confirm: "all"\n  - "¿Hasta qué hora?"\n' in new
    new = apply(new, [{"op": "add_check", "list": 1, "check": "contains"},
                      {"op": "check_value", "list": 1, "index": 0, "value": "18"}])
    assert ('  - say: "¿Hasta qué hora?"\n    then:\n      - contains: "18"\n') in new
    assert form_of(new, [])["when"]["turns"][1]["checks"][0]["value"] == "18"
    new = apply(new, [{"op": "remove_turn", "index": 0}])
    assert "confirm" not in new


def test_changing_a_check_keeps_a_text_it_can_take() -> None:
    new = apply(HOURS, [{"op": "set_check", "list": None, "index": 0,
                         "check": "not_contains"}])
    assert "  - not_contains: '18:00' # single quotes, kept\n" in new
    new = apply(HOURS, [{"op": "set_check", "list": None, "index": 0, "check": "non_empty"}])
    assert "  - non_empty             # single quotes, kept\n" in new


@pytest.mark.parametrize(("text", "edit", "said"), [
    ("a: [\n", {"op": "add_turn"}, "The form needs YAML it can read; fix this in the YAML "
     "tab first: 2:1 Y101 invalid YAML: expected the node content"),
    ("- a\n", {"op": "add_turn"}, "The form shows a scenario"),
    (HOURS, {"op": "explode"}, "unknown form edit 'explode'"),
    (HOURS, {"op": "add_check", "list": None, "check": "contians"},
     "there is no check 'contians'"),
    (HOURS, {"op": "remove_check", "list": None, "index": 7},
     "there is no item 8 here (there are 2)"),
    (HOURS, {"op": "check_value", "list": None}, "the form edit 'check_value' needs index, "
     "value"),
])
def test_an_edit_that_does_not_fit_is_refused(text: str, edit: dict[str, object],
                                              said: str) -> None:
    with pytest.raises(FormError) as caught:
        apply(text, [edit])
    assert str(caught.value).startswith(said)


# ---- every setting of a check, generated from the registry --------------------------------

CHECKS = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [request_refill, find_prescription]
when: hola
then:
  - contains: doctor   # it sends them to the doctor
  - calls: find_prescription
"""
SUITE = SuiteContext(("request_refill", "find_prescription"), ("desk",),
                     {"prescriptions": (("id", "refills_left"), ("RX-1001", "RX-2002"))})


def test_a_setting_beside_the_text_writes_the_mapping_and_back() -> None:
    on = apply(CHECKS, [{"op": "check_field", "list": None, "index": 0, "key": "ignore_case",
                         "value": True}], SUITE)
    assert changed_lines(CHECKS, on) == [
        "-  - contains: doctor   # it sends them to the doctor",
        "+  - contains: {text: doctor, ignore_case: true} # it sends them to the doctor"]
    off = apply(on, [{"op": "check_field", "list": None, "index": 0, "key": "ignore_case",
                      "value": False}], SUITE)
    assert [x.split("#")[0].rstrip() for x in off.splitlines()] == [
        x.split("#")[0].rstrip() for x in CHECKS.splitlines()]  # back to the short form
    assert "  - contains: doctor " in off
    assert off.count("# it sends them to the doctor") == 1
    assert form_of(off, SUITE)["checks"][0]["values"] == {"text": "doctor"}


def test_a_call_with_arguments_as_rows() -> None:
    new = apply(CHECKS, [{"op": "check_field", "list": None, "index": 1, "key": "args",
                          "value": {"rx": "RX-1001"}}], SUITE)
    assert "  - calls: {name: find_prescription, args: {rx: RX-1001}}\n" in new
    model = form_of(new, SUITE)["checks"][1]
    assert model["values"] == {"name": "find_prescription", "args": {"rx": "RX-1001"}}
    gone = apply(new, [{"op": "check_field", "list": None, "index": 1, "key": "args",
                        "value": None}], SUITE)
    assert "  - calls: find_prescription\n" in gone


@pytest.mark.parametrize(("old", "new", "kept"), [
    ("contains: {text: x, ignore_case: true}", "not_contains",
     "not_contains: {text: x, ignore_case: true}"),
    ("contains: 'x'", "matches", "matches: 'x'"),
    ("calls: {name: find_prescription, args: {rx: R}, times: 1}", "not_calls",
     "not_calls: {name: find_prescription, args: {rx: R}}"),
    ("calls: find_prescription", "asks_to_confirm", "asks_to_confirm: find_prescription"),
    ("contains: x", "calls", 'calls: "request_refill"'),
    ("contains: x", "non_empty", "non_empty"),
])
def test_choosing_a_check_keeps_what_the_new_one_takes(old: str, new: str, kept: str) -> None:
    text = CHECKS.replace("contains: doctor   # it sends them to the doctor", old)
    out = apply(text, [{"op": "set_check", "list": None, "index": 0, "check": new}], SUITE)
    assert f"  - {kept}" in out


def test_a_new_check_takes_the_scenarios_own_tools_and_world_never_an_example() -> None:
    new = apply(CHECKS, [{"op": "add_check", "list": None, "check": "calls"},
                         {"op": "add_check", "list": None, "check": "world"},
                         {"op": "add_check", "list": None, "check": "tool_correctness"}], SUITE)
    assert new.endswith('  - calls: "request_refill"\n'
                        '  - world: {prescriptions: {RX-1001: {refills_left: ""}}}\n'
                        '  - tool_correctness: [request_refill]\n')
    assert "book_appointment" not in new
    assert "cards" not in new


def test_a_world_check_is_chosen_by_table_row_and_column() -> None:
    text = apply(CHECKS, [{"op": "add_check", "list": None, "check": "world"}], SUITE)
    new = apply(text, [{"op": "check_world", "list": None, "index": 2, "entries": [
        {"table": "prescriptions", "row": "RX-1001", "column": "refills_left", "value": "1",
         "absent": False},
        {"table": "prescriptions", "row": "RX-2002", "column": "", "value": "", "absent": True},
    ]}], SUITE)
    assert new.endswith("  - world: {prescriptions: {RX-1001: {refills_left: 1}, "
                        "RX-2002: absent}}\n")
    assert form_of(new, SUITE)["checks"][2]["world"] == [
        {"table": "prescriptions", "row": "RX-1001", "column": "refills_left", "value": "1",
         "absent": False},
        {"table": "prescriptions", "row": "RX-2002", "column": "", "value": "", "absent": True}]
    with pytest.raises(FormError) as caught:
        apply(CHECKS, [{"op": "add_check", "list": None, "check": "world"}])
    assert str(caught.value).startswith("there is no world table with rows yet: add one under "
                                        "World in Suite settings")


def test_system_runs_min_pass_and_a_simulated_user() -> None:
    text = CHECKS + "min_pass_rate: 0.8  # a share\n"
    new = apply(text, [{"op": "system", "value": "The patient is Ana."},
                       {"op": "runs", "value": 3},
                       {"op": "min_pass", "value": 2}], SUITE)
    assert "  at: 2026-09-29T10:00:00-03:00\n  system: The patient is Ana.\n" in \
        new.replace('"The patient is Ana."', "The patient is Ana.")
    assert new.endswith("runs: 3\nmin_pass: 2         # a share\n")
    user = apply(CHECKS, [{"op": "user", "key": "goal", "value": "Refill RX-1001."},
                          {"op": "user", "key": "max_turns", "value": 4}], SUITE)
    assert 'when:\n  user:\n    goal: "Refill RX-1001."\n    target: desk\n    max_turns: 4\n' \
        in user
    assert form_of(user, SUITE)["when"] == {"kind": "user", "user": {
        "goal": "Refill RX-1001.", "persona": "", "max_turns": 4, "target": "desk"}}
    back = apply(user, [{"op": "messages"}], SUITE)
    assert 'when: ""\n' in back


def test_a_scenarios_own_world_table_as_a_grid() -> None:
    new = apply(CHECKS, [
        {"op": "table", "action": "add_table", "table": "cards"},
        {"op": "table", "action": "add_column", "table": "cards", "column": "status"},
        {"op": "table", "action": "set_cell", "table": "cards", "row": 0, "column": "id",
         "value": "C-1"},
        {"op": "table", "action": "set_cell", "table": "cards", "row": 0, "column": "status",
         "value": "active"},
        {"op": "table", "action": "add_row", "table": "cards"}], SUITE)
    assert ("  tools: [request_refill, find_prescription]\n  world:\n    cards:\n"
            "      - {id: C-1, status: active}\n      - {id: '2', status: \"\"}\n") in new
    assert form_of(new, SUITE)["world"][0]["rows"] == [["C-1", "active"], ["2", ""]]


def test_what_the_form_cannot_say_is_named() -> None:
    text = ("tags: [a]\ngiven:\n  at: 2026-09-29T10:00:00-03:00\n  history: []\nwhen: x\n"
            "then:\n  - not_calls: [a, {name: b, args: {x: 1}}]\n")
    assert form_of(text, SUITE)["yaml_only"] == [
        "tags", "given.history", "then (checks the form shows as written)"]


# ---- an edit changes only the lines it edits ------------------------------------------------

ODD = """\
# comments on their own line
description: odd   # and at the end of one
given:
    at: 2026-09-29T10:00:00-03:00
    system: |
        Line one.
        Line two.
when: "hola"
then:
- contains: a      # end a
# before b
- contains: b
- non_empty
notes_for_people: |
    kept as written"""


@pytest.mark.parametrize(("edit", "diff"), [
    ({"op": "description", "value": "even"},
     ["-description: odd   # and at the end of one", "+description: even  # and at the end of one"]),
    ({"op": "remove_check", "list": None, "index": 1}, ["-# before b", "-- contains: b"]),
    ({"op": "remove_check", "list": None, "index": 0}, ["-- contains: a      # end a"]),
    ({"op": "add_check", "list": None, "check": "non_empty"}, ["+- non_empty"]),
    ({"op": "check_value", "list": None, "index": 1, "value": "B"},
     ["-- contains: b", "+- contains: B"]),
])
def test_only_the_edited_lines_change(edit: dict[str, Any], diff: list[str]) -> None:
    new = apply(ODD, [edit])
    assert changed_lines(ODD, new) == diff
    assert "    system: |\n        Line one.\n" in new  # no | → |-, no re-indentation
    assert new.endswith("notes_for_people: |\n    kept as written")


def test_crlf_stays_crlf() -> None:
    text = HOURS.replace("\n", "\r\n")
    new = apply(text, [{"op": "description", "value": "Changed."}])
    assert new == HOURS.replace("'A clerk asks.'", "'Changed.'").replace("\n", "\r\n")


def test_a_syntax_error_is_said_as_problems_says_it() -> None:
    text = "description: x\nwhen: \"hola\nthen:\n  - non_empty\n"
    with pytest.raises(FormError) as caught:
        form_of(text, [])
    assert str(caught.value) == (
        "The form needs YAML it can read; fix this in the YAML tab first: 2:7 Y101 the file "
        "ends inside a quoted string (hint: close the quote that was opened here)")


def test_same_world_as_takes_its_calls_as_rows() -> None:
    """Issue 33's check gets its fields from its schema: the right calls, each a tool and
    its arguments; a call with no arguments written as the tool's name."""
    new = apply(CHECKS, [{"op": "add_check", "list": None, "check": "same_world_as"},
                         {"op": "check_field", "list": None, "index": 2, "key": "",
                          "value": ["find_prescription",
                                    {"name": "request_refill", "args": {"rx": "RX-1001"}}]}],
                SUITE)
    assert new.endswith("  - same_world_as: [find_prescription, {name: request_refill, args: "
                        "{rx: RX-1001}}]\n")
    check = form_of(new, SUITE)["checks"][2]
    assert check["shape"] == "fields"
    assert check["values"] == {"": ["find_prescription",
                                    {"name": "request_refill", "args": {"rx": "RX-1001"}}]}
