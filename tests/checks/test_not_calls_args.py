"""``not_calls`` with arguments (issue 25, item 2), against the scripted server: a call to
the tool with other argument values passes, a call with those values fails; a list may mix
names and ``{name, args}``; tool-call F1 does not count a tool forbidden only with some
arguments as one that must never be called."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, run_cli, suite_yaml, write

TOOLS = {"block_card": {
    "description": "Block a customer's card.",
    "input_schema": {"type": "object", "properties": {"card_id": {"type": "string"},
                                                      "reason": {"type": "string"}},
                     "required": ["card_id"]},
    "action": "update", "returns": "Card {{ args.card_id }} blocked."}}


def _run(tmp_path: Path, server: FakeServer, card: str, check: str) -> dict[str, Any]:
    server.script({"rules": [{"match": "bloque", "replies": [
        {"tool_calls": [{"name": "block_card",
                         "arguments": {"card_id": card, "reason": "lost"}}]},
        {"text": "Listo, bloqueé la tarjeta."}]}]})
    data = json.loads(suite_yaml(server.url))  # JSON is YAML
    data["tools"].update(TOOLS)
    write(tmp_path / "scenarist.yaml", json.dumps(data))
    write(tmp_path / "card.yaml", f"""
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [block_card, list_business_hours]
when: Perdí la tarjeta de débito CARD-01, bloqueala por favor.
then:
  - calls: block_card
  - {check}
runs: 1
min_pass: 1
""")
    r = run_cli("run", ".", cwd=tmp_path)
    (d,) = (tmp_path / "runs").iterdir()
    rec = json.loads((d / "results.jsonl").read_text().splitlines()[0])
    return {"exit": r.exit_code, "check": rec["checks"][1], "output": r.output}


@pytest.mark.parametrize(("card", "check", "status", "reason"), [
    ("CARD-01", "not_calls: {name: block_card, args: {card_id: CARD-02}}", "pass",
     "'block_card with card_id=\"CARD-02\"' was not called"),
    ("CARD-02", "not_calls: {name: block_card, args: {card_id: CARD-02}}", "fail",
     'expected no call to block_card with card_id="CARD-02"; it was called with '
     'card_id="CARD-02", reason="lost"'),
    ("CARD-02", "not_calls: [list_business_hours, {name: block_card, args: {card_id: CARD-02}}]",
     "fail", 'expected no call to block_card with card_id="CARD-02"; it was called with '
             'card_id="CARD-02", reason="lost"'),
    ("CARD-01", "not_calls: [list_business_hours, {name: block_card, args: {card_id: CARD-02}}]",
     "pass", "'list_business_hours' or 'block_card with card_id=\"CARD-02\"' were not called"),
])
def test_not_calls_with_arguments_fails_only_on_those_values(
        tmp_path: Path, server: FakeServer, card: str, check: str, status: str,
        reason: str) -> None:
    got = _run(tmp_path, server, card, check)
    assert (got["check"]["status"], got["check"]["reason"]) == (status, reason)
    assert got["exit"] == (0 if status == "pass" else 1), got["output"]


def test_a_tool_forbidden_only_with_some_arguments_is_still_expected_for_f1(
        tmp_path: Path, server: FakeServer) -> None:
    got = _run(tmp_path, server, "CARD-01",
               "not_calls: {name: block_card, args: {card_id: CARD-02}}")
    (d,) = (tmp_path / "runs").iterdir()
    row = json.loads((d / "summary.json").read_text())["scenarios"][0]
    assert (row["tool_calls"]["tp"], row["tool_calls"]["fp"]) == (1, 0)
    assert "recall 100%" in got["output"]
