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


def test_a_template_that_reads_pythons_internals_is_refused_where_it_is_written(
        tmp_path: Path) -> None:
    """Before: lint passed ``{{ message.__class__ }}``, and every attempt then failed in the
    sandbox with an explanation about "the system prompt"."""
    write(tmp_path / "scenarist.yaml", """
targets:
  svc:
    kind: http
    url: http://127.0.0.1:9/chat
    body: {message: "{{ message.__class__ }}", tools: "{{ mcp_url }}"}
""")
    write(tmp_path / "a.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hi\n"
                               "then: [non_empty]\n")
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    names = ("message, turn, session, mcp_url, at, seed, scenario, system, messages, "
             "confirmed, cancelled")
    assert r.output == f"""\
scenarist.yaml:5:22: error E208 a template in the body of the target 'svc' is refused by the sandbox: it reads '__class__' of message, one of Python's internal attributes, which no template may read
  5 |     body: {{message: "{{{{ message.__class__ }}}}", tools: "{{{{ mcp_url }}}}"}}
    |                      ^
  hint: read the values themselves, not their Python internals (write a value as {{{{ message }}}}; the names are {names})
1 file(s): 1 error(s), 0 warning(s)
"""
    # in a tool's returns too, the first one written; a key that starts with _ is data
    write(tmp_path / "scenarist.yaml",
          "targets:\n  local: {kind: openai, base_url: 'http://127.0.0.1:9/v1', model: m}\n")
    write(tmp_path / "a.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: t
      description: x
      returns: "{{ args._id }} {{ args.x.__class__.__mro__ }} {{ args['__init__'] }}"
when: hi
then: [non_empty]
""")
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.output.splitlines()[0] == (
        "a.yaml:6:17: error E208 the template in returns of the tool 't' is refused by the "
        "sandbox: it reads '__class__' of args.x, one of Python's internal attributes, which "
        "no template may read")
    write(tmp_path / "a.yaml", (tmp_path / "a.yaml").read_text().replace(
        " {{ args.x.__class__.__mro__ }} {{ args['__init__'] }}", ""))
    assert run_cli("lint", ".", cwd=tmp_path).exit_code == 0


def test_headers_that_frame_the_body_or_come_twice_are_refused(tmp_path: Path) -> None:
    for kind in ("kind: http, url: 'http://127.0.0.1:9/chat'",
                 "kind: openai, base_url: 'http://127.0.0.1:9/v1', model: m"):
        write(tmp_path / "scenarist.yaml", f"""
targets:
  svc:
    {{{kind},
     headers: {{Content-Length: "5", transfer-encoding: chunked, Host: a, host: b, X-Team: c}}}}
""")
        write(tmp_path / "a.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hi\n"
                                   "then: [non_empty]\n")
        r = run_cli("lint", ".", cwd=tmp_path)
        assert r.exit_code == 1
        heads = [line for line in r.output.splitlines() if " error " in line]
        assert heads == [
            "scenarist.yaml:4:16: error S105 the header 'Content-Length' says how the request's "
            "body is framed; Scenarist frames the body itself (its Content-Length, from the "
            "body it sends), so this one could only contradict it",
            "scenarist.yaml:4:37: error S105 the header 'transfer-encoding' says how the "
            "request's body is framed; Scenarist frames the body itself (its Content-Length, "
            "from the body it sends), so this one could only contradict it",
            "scenarist.yaml:4:74: error S105 the header 'host' is given twice: header names are "
            "case-insensitive, so it is the same header as 'Host' (line 4)"], kind
        assert "hint: remove 'Content-Length' from headers" in r.output
