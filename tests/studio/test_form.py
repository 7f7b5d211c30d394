"""The form's round trip on every example scenario: read and written back with no edit,
the text is unchanged (byte for byte, comments, key order, quotes and all); one edit
changes that place only; the form's model reads each file as the scenario says."""

from __future__ import annotations

import difflib
from pathlib import Path

import pytest

from dsl.studio.form import FormError, Scenario, apply, form_of
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
        "tools": [{"name": "list_business_hours", "on": True},
                  {"name": "set_business_hours", "on": False}],
        "inline_tools": [],
        "when": {"kind": "message", "message": "¿Hasta qué hora?"},
        "checks": [
            {"check": "contains", "takes": "text", "value": "18:00", "yaml": "",
             "always": False, "name": ""},
            {"check": "non_empty", "takes": "flag", "value": None, "yaml": "",
             "always": False, "name": ""},
        ],
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
    new = apply(HOURS, [{"op": "add_turn"}])
    assert 'when:\n  - "¿Hasta qué hora?"\n  - say: "What the person says next."\n' in new
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
    ("a: [\n", {"op": "add_turn"}, "The form needs YAML without mistakes"),
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
