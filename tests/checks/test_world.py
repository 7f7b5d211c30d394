"""A world with state (issue 23) against the scripted server process: tables in the
suite and in a scenario (inline, CSV, JSONL), table tools that read, update, create and
delete, confirm and cancel, later reads, isolation between attempts, the ``world`` check,
``does_not_modify``, ``world`` and ``world_before`` in expressions, cases, MCP and python
agents, lint, the record and recheck."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, FakeServer, records_of, run_cli, the_run, write

SUITE = """\
targets:
  fake:
    kind: openai
    base_url: {url}
    model: fake-model
    timeout_ms: 5000
    retry: {{max_attempts: 1}}
defaults: {{runs: 1, min_pass_rate: 1, concurrency: 4}}
world:
  cards:
    - {{id: C-1, owner: ana, type: debit, status: active, pin: "1234"}}
    - {{id: C-2, owner: ana, type: credit, status: active, pin: "9876"}}
    - {{id: C-3, owner: bob, type: credit, status: active, pin: "5555"}}
  replacements: []
tools:
  list_cards:
    description: List a person's cards.
    input_schema: {{type: object, properties: {{owner: {{type: string}}}}, required: [owner]}}
    table: cards
    where: {{owner: "{{{{ args.owner }}}}"}}
    fields: [id, type, status]
  get_card:
    description: One card.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}}}}}
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
    fields: [id, type, status]
    one: true
  block_card:
    description: Block a card.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}}}}}
    action: update
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
    set: {{status: blocked}}
    fields: [id, status]
  confirm_block:
    description: Block a card, once the person confirms.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}}}}}
    action: update
    confirm: true
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
    set: {{status: blocked}}
  freeze_all:
    description: Freeze every card of an owner.
    input_schema: {{type: object, properties: {{owner: {{type: string}}}}}}
    action: update
    table: cards
    where: {{owner: "{{{{ args.owner }}}}"}}
    set: {{status: frozen}}
    returns: "Frozen {{{{ rows | length }}}} cards"
  order_replacement:
    description: Order a replacement card.
    input_schema: {{type: object, properties: {{id: {{type: string}}, card: {{type: string}}}}}}
    action: create
    table: replacements
    row: {{id: "{{{{ args.id }}}}", card: "{{{{ args.card }}}}", status: ordered}}
  delete_card:
    description: Delete a card.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}}}}}
    action: delete
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
"""

AT = "given:\n  at: 2026-09-29T10:00:00-03:00\n"


def bank(tmp_path: Path, server: FakeServer, *scenarios: tuple[str, str],
         suite: str = SUITE) -> None:
    write(tmp_path / "scenarist.yaml", suite.format(url=server.url))
    for name, text in scenarios:
        write(tmp_path / f"{name}.yaml", text)


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


def script(server: FakeServer, match: str, *replies: dict[str, Any]) -> None:
    server.script({"rules": [{"match": match, "replies": list(replies)}],
                   "default": [{"text": "OK"}]})


def run(tmp_path: Path, *args: str) -> tuple[Any, list[dict[str, Any]]]:
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", *args, cwd=tmp_path)
    return r, records_of(the_run(tmp_path / "runs"))


def outputs(rec: dict[str, Any]) -> list[Any]:
    return [c["output"] for c in rec["calls"]]


def check(rec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in rec["checks"] if c["check"] == name)


# ---- each action; where matching none, one, many; fields; one ------------------------------


READ = AT + """  tools: [list_cards, get_card]
when: "show my cards"
then:
  - calls: list_cards
"""


def test_read_answers_the_matching_rows_with_only_its_fields(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "show", calls(("list_cards", {"owner": "ana"}),
                                 ("list_cards", {"owner": "bob"}),
                                 ("list_cards", {"owner": "eve"}),
                                 ("get_card", {"card_id": "C-3"}),
                                 ("get_card", {"card_id": "C-9"})), {"text": "done"})
    bank(tmp_path, server, ("read", READ))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    many, one, none, single, missing = rec["calls"]
    assert json.loads(many["output"]) == [{"id": "C-1", "type": "debit", "status": "active"},
                                          {"id": "C-2", "type": "credit", "status": "active"}]
    assert "pin" not in many["output"]  # fields: a column the tool must not reveal
    assert json.loads(one["output"]) == [{"id": "C-3", "type": "credit", "status": "active"}]
    assert json.loads(none["output"]) == []  # a read that matches nothing is no error
    assert none.get("error") is None
    assert json.loads(single["output"]) == {"id": "C-3", "type": "credit", "status": "active"}
    assert missing["output"] == "error: no row in cards with id = C-9"
    assert missing["error"] == "no-row"
    assert rec["world"] == []  # reads change nothing
    # the agent saw the error as the tool's result
    last = server.requests()[-1]["body"]["messages"]
    assert last[-1]["content"] == "error: no row in cards with id = C-9"


UPDATE = AT + """  tools: [block_card, freeze_all, list_cards]
when: "block it"
then:
  - world: {cards: {C-2: {status: blocked}, C-1: {status: frozen}, C-3: {status: active}}}
"""


def test_update_changes_every_matching_row_and_later_reads_see_it(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "block", calls(("list_cards", {"owner": "ana"})),
           calls(("block_card", {"card_id": "C-2"}), ("block_card", {"card_id": "C-9"})),
           calls(("freeze_all", {"owner": "ana"})),
           calls(("list_cards", {"owner": "ana"})), {"text": "done"})
    bank(tmp_path, server, ("update", UPDATE))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 1, r.output  # C-2 was frozen after it was blocked
    before, blocked, missing, frozen, after = outputs(rec)
    assert [c["status"] for c in json.loads(before)] == ["active", "active"]
    assert json.loads(blocked) == [{"id": "C-2", "status": "blocked"}]
    assert missing == "error: no row in cards with id = C-9"
    assert frozen == "Frozen 2 cards"  # returns: reads {{ rows }}, the rows changed
    assert [c["status"] for c in json.loads(after)] == ["frozen", "frozen"]
    assert check(rec, "world")["reason"] == (
        "the world differs: cards C-2: status is 'frozen', expected 'blocked'")
    assert rec["world"] == [
        {"table": "cards", "id": "C-1", "set": {"status": ["active", "frozen"]}},
        {"table": "cards", "id": "C-2", "set": {"status": ["active", "frozen"]}}]


CREATE_DELETE = AT + """  tools: [order_replacement, delete_card]
  world:
    cards:
      - {id: C-1, owner: ana, type: debit, status: active}
      - {id: C-7, owner: ana, type: credit, status: stolen}
when: "replace it"
then:
  - world: {replacements: {R-1: {card: C-7, status: ordered}}, cards: {C-7: absent}}
  - expect: "count(world.replacements) == 1 and count(world_before.cards) == 2"
  - expect: "count(world.cards) == 1 and world.cards[0].id == 'C-1'"
"""


def test_create_adds_a_row_delete_removes_one_from_the_scenarios_own_table(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "replace",
           calls(("order_replacement", {"id": "R-1", "card": "C-7"}),
                 ("order_replacement", {"id": "R-1", "card": "C-7"}),
                 ("delete_card", {"card_id": "C-7"}), ("delete_card", {"card_id": "C-7"})),
           {"text": "done"})
    bank(tmp_path, server, ("create", CREATE_DELETE))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    created, twice, deleted, again = outputs(rec)
    assert json.loads(created) == {"id": "R-1", "card": "C-7", "status": "ordered"}
    assert twice == "error: replacements already has a row with id = R-1"
    # its own error kind (issue 32, item 15: it was recorded as no-row)
    assert [c.get("error") for c in rec["calls"]] == [None, "row-exists", None, "no-row"]
    assert json.loads(deleted) == [{"id": "C-7", "owner": "ana", "type": "credit",
                                    "status": "stolen"}]
    assert again == "error: no row in cards with id = C-7"
    assert rec["status"] == "pass"
    assert rec["world"] == [
        {"table": "cards", "id": "C-7", "removed": {"id": "C-7", "owner": "ana",
                                                   "type": "credit", "status": "stolen"}},
        {"table": "replacements", "id": "R-1", "added": {"id": "R-1", "card": "C-7",
                                                        "status": "ordered"}}]


# ---- the world check's failures, word for word; does_not_modify; expressions --------------


WRONG_CARD = AT + """  tools: [list_cards, block_card]
when: "My credit card was stolen, block it"
then:
  - world: {cards: {C-2: {status: blocked}, C-1: {status: active}}}
  - world: {cards: {C-3: absent, C-8: {status: active}}}
  - does_not_modify
  - expect: "any(world.cards, id == 'C-2' and status == 'blocked')"
  - expect: "all(world_before.cards, status == 'active')"
"""


def test_the_wrong_card_blocked_is_caught_with_row_column_found_and_expected(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "stolen", calls(("block_card", {"card_id": "C-1"})), {"text": "Blocked."})
    bank(tmp_path, server, ("wrong", WRONG_CARD))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 1, r.output
    reasons = [(c["status"], c["reason"]) for c in rec["checks"]]
    assert reasons == [
        ("fail", "the world differs: cards C-2: status is 'active', expected 'blocked'; "
                 "cards C-1: status is 'blocked', expected 'active'"),
        ("fail", "the world differs: cards C-3: expected absent, but the row exists; "
                 "cards C-8: no such row"),
        ("fail", "expected no changes; block_card (update) was executed with card_id=\"C-1\""),
        ("fail", reasons[3][1]),
        ("pass", reasons[4][1]),
    ]
    assert reasons[3][1].startswith("expected any(world.cards, id == 'C-2' and status == "
                                    "'blocked') to be true; it was false")


def test_the_right_card_blocked_passes(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str]) -> None:
    script(server, "stolen", calls(("list_cards", {"owner": "ana"})),
           calls(("block_card", {"card_id": "C-2"})), {"text": "Blocked."})
    named = SUITE + "checks:\n  right_card: \"any(world.cards, id == 'C-2' and " \
                    "status == 'blocked')\"\n"
    bank(tmp_path, server, ("right", WRONG_CARD.replace(
        "  - world: {cards: {C-3: absent, C-8: {status: active}}}\n  - does_not_modify\n",
        "  - expect: right_card\n")), suite=named)
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert check(rec, "world")["reason"] == "the world is as expected (cards C-2, cards C-1)"
    assert [c["status"] for c in rec["checks"]] == ["pass"] * 4  # the named check too


NO_CHANGE = AT + """  tools: [list_cards, get_card]
when: "what cards do I have?"
then:
  - does_not_modify
"""


def test_does_not_modify_with_and_without_a_world(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "cards", calls(("list_cards", {"owner": "ana"})), {"text": "two"})
    bank(tmp_path, server, ("nochange", NO_CHANGE))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert check(rec, "does_not_modify")["reason"] == (
        "no call changed anything, and the world is as it started")
    # without a world, as before
    plain = tmp_path / "plain"
    write(plain / "scenarist.yaml", SUITE.format(url=server.url).split("world:")[0])
    write(plain / "hours.yaml", AT + """  tools:
    - {name: set_hours, action: update, returns: done}
when: "what cards do I have?"
then:
  - does_not_modify
""")
    script(server, "cards", calls(("set_hours", {})), {"text": "ok"})
    r = run_cli("run", ".", "--out", "runs", cwd=plain)
    assert r.exit_code == 1, r.output
    (rec,) = records_of(the_run(plain / "runs"))
    assert "world" not in rec
    assert check(rec, "does_not_modify")["reason"].startswith(
        "expected no changes; set_hours (update) was executed")


# ---- confirm, cancel, a held call ------------------------------------------------------------


HELD = AT + """  tools: [confirm_block, list_cards]
when:
  - say: "block my credit card"
    then:
      - does_not_modify
      - world: {{cards: {{C-2: {{status: active}}}}}}
  - {turn}
then:
  - world: {{cards: {{C-2: {{status: {status}}}}}}}
"""


def test_confirm_applies_the_change_and_a_later_read_sees_it(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "block", calls(("confirm_block", {"card_id": "C-2"})),
           calls(("list_cards", {"owner": "ana"})), {"text": "Blocked."})
    bank(tmp_path, server, ("held", HELD.format(turn="confirm: confirm_block",
                                                status="blocked")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    held, listed = rec["calls"]
    assert held["decision"] == "confirmed"
    assert held["output"] == '[{"id": "C-2", "owner": "ana", "type": "credit", ' \
                             '"status": "blocked", "pin": "9876"}]'
    assert json.loads(listed["output"])[1]["status"] == "blocked"
    assert rec["world"] == [{"table": "cards", "id": "C-2",
                             "set": {"status": ["active", "blocked"]}}]
    # the first turn's own checks saw the world as that turn left it: unchanged
    assert [(c["check"], c["status"], c.get("turn")) for c in rec["checks"]] == [
        ("does_not_modify", "pass", 1), ("world", "pass", 1), ("world", "pass", None)]
    assert rec["world_turns"] == [[], rec["world"]]
    # and so does recheck, from the record
    r = run_cli("recheck", str(the_run(tmp_path / "runs")), "--out", "rechecked",
                cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (again,) = records_of(the_run(tmp_path / "rechecked"))
    assert [c["status"] for c in again["checks"]] == ["pass", "pass", "pass"]


def test_cancel_changes_nothing(tmp_path: Path, server: FakeServer,
                                cli_env: dict[str, str]) -> None:
    script(server, "block", calls(("confirm_block", {"card_id": "C-2"})),
           calls(("list_cards", {"owner": "ana"})), {"text": "Not blocked."})
    bank(tmp_path, server, ("held", HELD.format(turn="cancel: confirm_block",
                                                status="active")
                            + "  - does_not_modify\n"))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    held, listed = rec["calls"]
    assert held["decision"] == "cancelled"
    assert json.loads(listed["output"])[1]["status"] == "active"
    assert rec["world"] == []


def test_a_held_call_never_decided_changes_nothing(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "block", calls(("confirm_block", {"card_id": "C-2"})))
    bank(tmp_path, server, ("held", AT + """  tools: [confirm_block]
when: "block my credit card"
then:
  - asks_to_confirm: confirm_block
  - world: {cards: {C-2: {status: active}}}
  - does_not_modify
"""))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert rec["calls"][0]["pending"] is True
    assert rec["world"] == []


# ---- isolation, files, replacing tables, cases ------------------------------------------------


def test_attempts_run_concurrently_each_start_from_a_fresh_copy(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "stolen", calls(("block_card", {"card_id": "C-2"}),
                                   ("order_replacement", {"id": "R-1", "card": "C-2"})),
           {"text": "Blocked.", "delay_ms": 100})
    bank(tmp_path, server, ("iso", AT + """  tools: [block_card, order_replacement]
when: "stolen"
then:
  - expect: "all(world_before.cards, status == 'active') and count(world_before.replacements) == 0"
  - expect: "count(world.replacements) == 1"
runs: 3
"""))
    for out in ("runs", "again"):
        r = run_cli("run", ".", "--out", out, "--concurrency", "3", cwd=tmp_path)
        assert r.exit_code == 0, r.output
        recs = records_of(the_run(tmp_path / out))
        assert len(recs) == 3
        for rec in recs:
            assert rec["status"] == "pass", rec["checks"]
            assert [c["output"].startswith("error") for c in rec["calls"]] == [False, False]
            assert len(rec["world"]) == 2


def test_a_world_from_csv_and_jsonl_files_and_a_scenario_table_replacing_the_suites(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite = SUITE.replace("""  cards:
    - {{id: C-1, owner: ana, type: debit, status: active, pin: "1234"}}
    - {{id: C-2, owner: ana, type: credit, status: active, pin: "9876"}}
    - {{id: C-3, owner: bob, type: credit, status: active, pin: "5555"}}
""", "  cards: {{file: data/cards.csv}}\n")
    write(tmp_path / "data" / "cards.csv",
          "id,owner,type,status,pin\nC-1,ana,debit,active,1\nC-2,ana,credit,active,2\n")
    write(tmp_path / "sc" / "other.jsonl",
          '{"id": "C-5", "owner": "ana", "type": "debit", "status": "active"}\n'
          '{"id": "C-6", "owner": "ana", "type": "credit", "status": "active"}\n')
    script(server, "stolen", calls(("list_cards", {"owner": "ana"}),
                                   ("block_card", {"card_id": "C-2"})), {"text": "Blocked."})
    bank(tmp_path, server, ("sc/from_csv", AT + """  tools: [list_cards, block_card]
when: "stolen"
then:
  - world: {cards: {C-2: {status: blocked}, C-1: {status: active}}}
"""), ("sc/replaced", AT + """  tools: [list_cards, block_card]
  world:
    cards: {file: other.jsonl}
when: "stolen"
then:
  - world: {cards: {C-5: {status: active}}}
  - expect: "count(world.cards) == 2 and world.cards[0].id == 'C-5'"
"""), suite=suite)
    r, recs = run(tmp_path)
    assert r.exit_code == 0, r.output
    by = {x["scenario"]: x for x in recs}
    listed = json.loads(by["sc.from_csv"]["calls"][0]["output"])
    assert [c["id"] for c in listed] == ["C-1", "C-2"]
    replaced = by["sc.replaced"]
    assert [c["id"] for c in json.loads(replaced["calls"][0]["output"])] == ["C-5", "C-6"]
    assert replaced["calls"][1]["output"] == "error: no row in cards with id = C-2"


def test_a_world_with_cases(tmp_path: Path, server: FakeServer,
                            cli_env: dict[str, str]) -> None:
    server.script({"rules": [
        {"match": "C-1", "replies": [calls(("block_card", {"card_id": "C-1"})),
                                     {"text": "done"}]},
        {"match": "C-2", "replies": [calls(("block_card", {"card_id": "C-2"})),
                                     {"text": "done"}]}]})
    bank(tmp_path, server, ("cases", AT + """  tools: [block_card]
  world:
    cards:
      - {id: "{{ card }}", owner: ana, type: debit, status: active}
      - {id: C-0, owner: ana, type: debit, status: active}
when: "block {{ card }}"
then:
  - world: {cards: {C-0: {status: active}}}
  - expect: "world.cards[0].status == 'blocked' and world.cards[0].id == case.card"
cases:
  - {card: C-1}
  - {card: C-2}
"""))
    r, recs = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert sorted(x["world"][0]["id"] for x in recs) == ["C-1", "C-2"]


# ---- over MCP (an own-loop agent) and a python agent's env.tools ------------------------------


def test_table_tools_act_on_the_world_over_mcp(tmp_path: Path, cli_env: dict[str, str]) -> None:
    agent = {"kind": "command", "command": [sys.executable, str(REPO / "tests" / "ownagent.py"),
                                            "stdio"], "timeout_ms": 20000}
    suite = SUITE.replace("  fake:\n    kind: openai\n    base_url: {url}\n    model: fake-model"
                          "\n    timeout_ms: 5000\n    retry: {{max_attempts: 1}}\n",
                          "  agent: " + json.dumps(agent).replace("{", "{{").replace("}", "}}")
                          + "\n")
    write(tmp_path / "scenarist.yaml", suite.format(url="http://127.0.0.1:9/v1"))
    write(tmp_path / "mcp.yaml", AT + """  tools: [block_card, list_cards, confirm_block]
when:
  - say: 'CALL block_card {"card_id": "C-2"} CALL list_cards {"owner": "ana"}'
  - say: 'CALL confirm_block {"card_id": "C-1"}'
  - cancel: confirm_block
then:
  - world: {cards: {C-2: {status: blocked}, C-1: {status: active}}}
runs: 2
""")
    r = run_cli("run", ".", "--out", "runs", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    for rec in records_of(the_run(tmp_path / "runs")):
        listed = json.loads(rec["calls"][1]["output"])
        assert [c["status"] for c in listed] == ["active", "blocked"]
        assert rec["calls"][2]["decision"] == "cancelled"
        assert rec["world"] == [{"table": "cards", "id": "C-2",
                                 "set": {"status": ["active", "blocked"]}}]


PY_AGENT = '''
import json

def run(env):
    env.tools["block_card"](card_id="C-2")
    cards = json.loads(env.tools["list_cards"](owner="ana"))
    return " ".join(c["id"] + "=" + c["status"] for c in cards)
'''


def test_table_tools_act_on_the_world_from_a_python_agent(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    module = "agent_" + tmp_path.name.replace("-", "_").replace(".", "_")
    suite = SUITE.replace("  fake:\n", f"  mine: {{{{kind: python, entry: '{module}:run'}}}}\n"
                                      "  fake:\n").replace(
        "defaults: {{", "defaults: {{target: mine, ")
    bank(tmp_path, server, ("py", AT + """  tools: [block_card, list_cards]
when: "stolen"
then:
  - contains: "C-1=active C-2=blocked"
  - world: {cards: {C-2: {status: blocked}}}
runs: 2
"""), suite=suite)
    write(tmp_path / f"{module}.py", PY_AGENT)
    r, recs = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert all(x["status"] == "pass" for x in recs)


# ---- lint -------------------------------------------------------------------------------------


def test_lint_refuses_a_misspelt_where_column_and_an_unknown_table_in_a_world_check(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    bank(tmp_path, server, ("bad", AT + """  tools:
    - name: freeze_card
      action: update
      table: cards
      where: {card: "{{ args.id }}"}
      set: {status: frozen}
when: "freeze"
then:
  - world: {card: {C-2: {status: frozen}}}
"""))
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    assert ("bad.yaml:7:15: error E241 where of the tool 'freeze_card' names the column "
            "'card', which the table 'cards' does not have") in r.output
    assert ("bad.yaml:11:13: error E240 the world check names the table 'card', which no "
            "world defines; did you mean 'cards'?") in r.output
    assert "hint: the columns of 'cards' are 'id', 'owner', 'type', 'status' and 'pin'" \
        in r.output


def test_a_world_check_in_a_suite_whose_file_has_errors_says_why_no_table_counts(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """A suite file that fails validation is reported once; its tables do not count until
    it is fixed, and the world check's hint says so instead of "the tables are none"."""
    broken = SUITE.replace("    kind: openai\n", "", 1)
    assert broken != SUITE
    bank(tmp_path, server, ("s", AT + """when: "freeze"
then:
  - world: {cards: {C-2: {status: frozen}}}
"""), suite=broken)
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    assert "error S104" in r.output
    assert ("s.yaml:5:13: error E240 the world check names the table 'cards', which no world "
            "defines\n") in r.output
    assert ("hint: no world defines a table here: define 'cards' under world: in "
            "scenarist.yaml (once the suite file has no errors, its tables count) or under "
            "given.world: in the scenario\n") in r.output


def test_lint_types_world_expressions_and_a_set_on_a_read_tool(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    bank(tmp_path, server, ("bad", AT + """  tools:
    - {name: peek, table: cards, set: {status: x}}
when: "x"
then:
  - expect: "any(world.cards, stauts == 'blocked')"
"""), ("nowworld", "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: x\nthen:\n"
         "  - expect: \"count(world.cards) == 1\"\n"))
    write(tmp_path / "scenarist.yaml", SUITE.format(url=server.url))
    r = run_cli("lint", "bad.yaml", cwd=tmp_path)
    assert r.exit_code == 1
    assert ("bad.yaml:4:34: error E244 the tool 'peek' has set, but its action is read: set "
            "is for a tool with action: update") in r.output
    assert "bad.yaml:4:37: error E241 set of the tool 'peek' names the column 'status'" \
        not in r.output
    assert ("bad.yaml:7:31: error X302 unknown name 'stauts'; did you mean 'status'?"
            in r.output)


# ---- recheck, the report ------------------------------------------------------------------


def test_recheck_re_evaluates_world_checks_from_the_stored_changes(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "stolen", calls(("block_card", {"card_id": "C-2"})), {"text": "Blocked."})
    scenario = AT + """  tools: [block_card]
when: "stolen"
then:
  - world: {cards: {C-2: {status: active}}}
"""
    bank(tmp_path, server, ("re", scenario))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 1
    assert check(rec, "world")["reason"] == (
        "the world differs: cards C-2: status is 'blocked', expected 'active'")
    write(tmp_path / "re.yaml", scenario.replace("status: active", "status: blocked"))
    first = the_run(tmp_path / "runs")
    r = run_cli("recheck", str(first), "--out", "rechecked", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (again,) = records_of(the_run(tmp_path / "rechecked"))
    assert again["status"] == "pass"
    assert check(again, "world")["reason"] == "the world is as expected (cards C-2)"


def test_recheck_refuses_a_changed_table_naming_it_in_the_worlds_words(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """Issue 32, item 15: the refusal said "the tools' input_schema or returns" when a row
    of the world changed."""
    script(server, "stolen", calls(("block_card", {"card_id": "C-2"})), {"text": "Blocked."})
    scenario = AT + """  tools: [block_card]
when: "stolen"
then:
  - world: {cards: {C-2: {status: blocked}}}
"""
    bank(tmp_path, server, ("re", scenario))
    r, _ = run(tmp_path)
    assert r.exit_code == 0, r.output
    first = the_run(tmp_path / "runs")
    write(tmp_path / "scenarist.yaml", SUITE.format(url=server.url).replace(
        'owner: ana, type: credit, status: active, pin: "9876"',
        'owner: ana, type: credit, status: lost, pin: "9876"'))
    r = run_cli("recheck", str(first), "--out", "rechecked", cwd=tmp_path)
    assert r.exit_code == 2, r.output
    why = ("its given or when changed since the run (the rows of the world's table 'cards'): "
           "its transcripts answer a different question")
    assert why in r.output
    assert "input_schema" not in r.output
    # a table the world did not have, and a tool that acts differently, are said too
    write(tmp_path / "scenarist.yaml", SUITE.format(url=server.url).replace(
        "  replacements: []\n", "  replacements: []\n  branches: [{id: B-1}]\n").replace(
        "set: {status: blocked}\n    fields: [id, status]",
        "set: {status: frozen}\n    fields: [id, status]"))
    r = run_cli("recheck", str(first), "--out", "again", cwd=tmp_path)
    assert ("its given or when changed since the run (the world's table 'branches' (added), "
            "the tools (their input_schema, returns or what they do to the world))") in r.output


def test_the_report_shows_the_changes_beside_the_transcript_escaped(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "stolen", calls(("block_card", {"card_id": "C-2"}),
                                   ("order_replacement", {"id": "R-1",
                                                          "card": "<img src=x onerror=alert(1)>"})),
           {"text": "Blocked."})
    bank(tmp_path, server, ("rep", AT + """  tools: [block_card, order_replacement]
when: "stolen"
then:
  - world: {cards: {C-2: {status: blocked}}}
"""))
    r, _ = run(tmp_path)
    assert r.exit_code == 0, r.output
    html = (the_run(tmp_path / "runs") / "report.html").read_text()
    assert "<img src=x" not in html  # model output stays text
    blobs = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)
    data = [json.loads(b) for b in blobs if '"attempts"' in b]
    (attempt,) = [a for d in data for a in d["attempts"]]
    strings = next(d["strings"] for d in data if d["attempts"])

    def text(v: Any) -> Any:
        return strings[v] if isinstance(v, int) else v

    world = [[text(t), text(i), kind, [[text(x) for x in c] for c in cells]]
             for t, i, kind, cells in attempt[12]]
    assert world == [
        ["cards", "C-2", "set", [["status", "active", "blocked"]]],
        ["replacements", "R-1", "added", [["id", None, "R-1"],
                                          ["card", None, "<img src=x onerror=alert(1)>"],
                                          ["status", None, "ordered"]]]]


def test_a_suite_without_a_world_never_imports_the_world_code(
        tmp_path: Path, server: FakeServer) -> None:
    import os
    import subprocess

    probe = (
        "import sys\n"
        "from dsl.cli import main\n"
        "try:\n"
        "    main(['lint', '.'])\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('WORLD', 'dsl.compiler.world' in sys.modules)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    plain, world = tmp_path / "plain", tmp_path / "world"
    write(plain / "scenarist.yaml", SUITE.format(url=server.url).split("world:")[0])
    write(plain / "hello.yaml", AT + "when: hola\nthen:\n  - non_empty\n")
    bank(world, server, ("read", READ))
    seen = [subprocess.run([sys.executable, "-c", probe], cwd=d, env=env, capture_output=True,
                           text=True, timeout=60).stdout.strip().splitlines()[-1]
            for d in (plain, world)]
    assert seen == ["WORLD False", "WORLD True"]


def test_a_suite_table_reads_the_cases_values(tmp_path: Path, server: FakeServer,
                                              cli_env: dict[str, str]) -> None:
    suite = SUITE.replace("  replacements: []\n", "  replacements: []\n  holders:\n"
                          "    - {{id: H-1, name: \"{{{{ holder }}}}\"}}\n")
    script(server, "who", calls(("list_holders", {})), {"text": "done"})
    bank(tmp_path, server, ("holders", AT + """  tools:
    - {name: list_holders, table: holders}
when: "who holds {{ holder }}?"
then:
  - expect: "world.holders[0].name == case.holder"
cases:
  - {holder: Ana}
  - {holder: Bob}
"""), suite=suite)
    r, recs = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert sorted(json.loads(x["calls"][0]["output"])[0]["name"] for x in recs) == ["Ana", "Bob"]
