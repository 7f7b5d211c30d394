"""What lint says is true of the run (issue 32, item 15): a warning that a check "can never
fail" only where no attempt can fail it; each mistake said as what it is, located."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FakeServer, run_cli, suite_yaml, the_run, write

UNOFFERED = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, book_appointment]
when: "book me"
then:
  - not_calls: cancel_appointment
runs: 1
min_pass: 1
"""


def test_not_calls_of_a_tool_the_scenario_lacks_says_so_and_can_fail(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """Before: W404 "this check can never fail" — yet a model that calls the tool anyway (by
    a name it was not given) fails it."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "book.yaml", UNOFFERED)
    lint = run_cli("lint", ".", cwd=tmp_path)
    assert lint.output.splitlines()[0] == (
        "book.yaml:6:16: warning W413 not_calls names 'cancel_appointment', which is not one of "
        "the scenario's tools: the agent is not offered it, so the check guards no tool of "
        "the scenario; did you mean 'book_appointment'?")
    assert "hint: fix the name (the scenario's tools are 'book_appointment' and " \
           "'list_business_hours'), or remove the check" in lint.output
    assert "can never fail" not in lint.output
    server.script({"rules": [{"match": "book me", "replies": [
        {"tool_calls": [{"name": "cancel_appointment", "arguments": {"id": "A-1"}}]},
        {"text": "Cancelled."}]}]})
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (record,) = [json.loads(x) for x in
                 (the_run(tmp_path / "runs") / "results.jsonl").read_text().splitlines()]
    (check,) = record["checks"]
    assert (check["status"], check["reason"]) == (
        "fail", 'expected no call to cancel_appointment; it was called with id="A-1"')


WORLD_SUITE = """
targets:
  local: {kind: openai, base_url: "http://127.0.0.1:9/v1", model: m}
world:
  cards: TABLE
"""

BLOCK = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: block_card
      description: Block a card.
      input_schema: {type: object, properties: {card_id: {type: string}}, required: [card_id]}
      action: update
      table: cards
      where: {id: "{{ args.card_id }}"}
      set: {statuss: blocked}
when: Block C-2
then:
  - world: {cards: {C-2: {status: blocked}}}
"""


def test_a_duplicate_row_id_is_reported_without_dropping_the_table(tmp_path: Path) -> None:
    """Before: the whole table left lint — a false E240 for every tool and check that names
    it, and no did-you-mean for the misspelt column."""
    write(tmp_path / "scenarist.yaml", WORLD_SUITE.replace(
        "TABLE", "\n    - {id: C-1, status: active}\n    - {id: C-1, status: blocked}\n"
                 "    - {id: C-2, status: active}\n    - {id: C-1, status: lost}"))
    write(tmp_path / "block.yaml", BLOCK)
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    assert r.output == """\
block.yaml:10:13: error E241 set of the tool 'block_card' names the column 'statuss', which the table 'cards' does not have; did you mean 'status'?
  10 |       set: {statuss: blocked}
     |             ^
  hint: the columns of 'cards' are 'id' and 'status'
scenarist.yaml:6:7: error E245 the table 'cards' has two rows with id = C-1 (the first at scenarist.yaml:5)
  6 |     - {id: C-1, status: blocked}
    |       ^
  hint: give each row its own id: a row is known by its id
scenarist.yaml:8:7: error E245 the table 'cards' has two rows with id = C-1 (the first at scenarist.yaml:5)
  8 |     - {id: C-1, status: lost}
    |       ^
  hint: give each row its own id: a row is known by its id
1 file(s): 3 error(s), 0 warning(s)
"""
    # in a JSONL file, at its line
    write(tmp_path / "scenarist.yaml", WORLD_SUITE.replace("TABLE", "{file: cards.jsonl}"))
    write(tmp_path / "cards.jsonl", '{"id": "C-1", "status": "active"}\n'
                                    '{"id": "C-1", "status": "blocked"}\n')
    r = run_cli("lint", ".", cwd=tmp_path)
    assert "E240" not in r.output
    assert "did you mean 'status'?" in r.output
    assert ("cards.jsonl:2:1: error E245 the table 'cards' has two rows with id = C-1 (the "
            "first at cards.jsonl:1)") in r.output


def test_a_world_file_that_is_a_fifo_is_not_a_regular_file(tmp_path: Path) -> None:
    """Before: "does not exist" and a false E240; and nothing may block on the pipe."""
    import os

    write(tmp_path / "scenarist.yaml", WORLD_SUITE.replace("TABLE", "{file: data/cards.csv}"))
    write(tmp_path / "block.yaml", BLOCK)
    (tmp_path / "data").mkdir()
    os.mkfifo(tmp_path / "data" / "cards.csv")
    r = run_cli("lint", ".", cwd=tmp_path)  # returns: the pipe is never opened
    assert r.output == """\
scenarist.yaml:4:17: error E242 the world file 'data/cards.csv' of the table 'cards' is a FIFO (named pipe), not a regular file (data/cards.csv)
  4 |   cards: {file: data/cards.csv}
    |                 ^
  hint: name a .csv or .jsonl file that holds the table's rows
1 file(s): 1 error(s), 0 warning(s)
"""
    run = run_cli("run", ".", cwd=tmp_path)
    assert run.exit_code == 2
    assert "is a FIFO (named pipe), not a regular file" in run.output
    assert "E240" not in run.output
