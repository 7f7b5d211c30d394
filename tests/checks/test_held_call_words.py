"""The agent's words beside a held call (issue 25, item 6): the text a model writes in the
same message as a call it holds for confirmation ("Shall I block the card ending 7710?")
is that turn's answer, so ``contains``, ``grounded`` and the judge check what the person
was asked to confirm — in a one-message scenario and in a conversation's turn. Against the
scripted server process, through the command line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FakeServer, run_cli, write

SUITE = {
    "tools": {
        "list_cards": {"description": "The customer's cards.",
                       "returns": [{"card_id": "CARD-01", "type": "debit", "last4": "4402"},
                                   {"card_id": "CARD-02", "type": "credit", "last4": "7710"}]},
        "block_card": {"description": "Block a card so that it can no longer be used.",
                       "input_schema": {"type": "object",
                                        "properties": {"card_id": {"type": "string"}},
                                        "required": ["card_id"]},
                       "action": "update", "confirm": True,
                       "returns": "Card {{ args.card_id }} blocked."}},
    "defaults": {"runs": 1, "target": "bank"},
}

PROPOSES = {"rules": [{"match": "lost", "per_turn": True, "replies": [
    {"tool_calls": [{"name": "list_cards", "arguments": {}}]},
    {"tool_calls": [{"name": "block_card", "arguments": {"card_id": "CARD-02"}}],
     "text": "Shall I block the credit card ending 7710?"}]}]}


def suite(tmp_path: Path, url: str, judge: bool = False) -> None:
    data: dict[str, Any] = {**SUITE, "targets": {"bank": {
        "kind": "openai", "base_url": url, "model": "fake-model", "timeout_ms": 5000,
        "retry": {"max_attempts": 1}}}}
    if judge:
        data["judge"] = {"target": "bank", "cache": False}
    write(tmp_path / "scenarist.yaml", json.dumps(data))


def the_record(tmp_path: Path) -> dict[str, Any]:
    (d,) = (tmp_path / "runs").iterdir()
    (line,) = (d / "results.jsonl").read_text().splitlines()
    rec: dict[str, Any] = json.loads(line)
    return rec


def checks(rec: dict[str, Any]) -> dict[str, tuple[str, str]]:
    return {c["label"]: (c["status"], c["reason"]) for c in rec["checks"]}


def test_the_words_beside_a_held_call_are_the_answer_contains_and_grounded_read(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(PROPOSES)
    suite(tmp_path, server.url)
    write(tmp_path / "lost.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_cards, block_card]
when: I lost my credit card.
then:
  - asks_to_confirm: block_card
  - contains: "7710"
  - not_contains: "4402"
  - grounded
""")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    rec = the_record(tmp_path)
    assert rec["answer"] == "Shall I block the credit card ending 7710?"
    assert rec["status"] == "pass", rec["reason"]
    from dsl.results.report import attempt
    from dsl.store import latest_records

    (stored,) = latest_records(next((tmp_path / "runs").iterdir()))
    events = [e[:2] for e in attempt(stored, lambda v: v)[9]]
    # the report shows the words beside the held call as the answer, before the call
    assert events[-3:] == [["A", "Shall I block the credit card ending 7710?"],
                           ["c", "block_card"],
                           ["e", "The attempt ended here: block_card waits for the person's "
                                 "confirmation, so it was not run."]]
    # and a word it did not write fails, saying what it wrote
    write(tmp_path / "lost.yaml", (tmp_path / "lost.yaml").read_text().replace(
        '"7710"', '"debit"'))
    for d in (tmp_path / "runs").iterdir():
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    status, reason = checks(the_record(tmp_path))['contains: "debit"']
    assert status == "fail"
    assert "Shall I block the credit card ending 7710?" in reason


def test_in_a_conversation_the_turn_that_holds_the_call_answers_with_its_words(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    replies = [*PROPOSES["rules"][0]["replies"], {"text": "Done: the card is blocked."}]
    server.script({"rules": [{"match": "lost", "replies": replies}]})
    suite(tmp_path, server.url)
    write(tmp_path / "lost.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_cards, block_card]
when:
  - say: I lost my credit card.
    then:
      - contains: "ending 7710"
      - grounded
  - confirm: block_card
    then:
      - contains: blocked
""")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    rec = the_record(tmp_path)
    assert rec["turns"][0]["answer"] == "Shall I block the credit card ending 7710?"
    assert [c["status"] for c in rec["checks"]] == ["pass", "pass", "pass"]


def test_the_judge_reads_the_words_and_the_call_they_ask_to_confirm(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    verdict = json.dumps({"verdict": "pass", "score": 1, "confidence": 0.95,
                          "reason": "it asks before blocking the right card"})
    server.script({"rules": [{"match": "Grade", "replies": [{"text": verdict}]},
                             *PROPOSES["rules"]]})
    suite(tmp_path, server.url, judge=True)
    write(tmp_path / "lost.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_cards, block_card]
when: I lost my credit card.
then:
  - judge: {rubric: "It asks the person to confirm blocking the credit card, and names it."}
""")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    prompt = next(req["body"]["messages"][-1]["content"] for req in server.requests()
                  if "Grade" in json.dumps(req["body"]))
    assert "<answer>\nShall I block the credit card ending 7710?\n</answer>" in prompt
    assert ('</answer>\nWith this answer the assistant asks the person to confirm these '
            'calls (not run yet):\n<held name="block_card" arguments="{"card_id": '
            '"CARD-02"}"/>\n\nReply with only') in prompt
