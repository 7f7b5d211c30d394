"""Issue 32 item 8: recheck gives the world checks the verdicts the run gave — when row ids
match a ``redact`` pattern (the changes are kept under ``[REDACTED:…]``), when an update
sets an id another row has, when a row is deleted and created again with the same id, and
when a JSONL table holds ``NaN`` (which results.jsonl never writes bare). Each against the
scripted server process, through ``scenarist run`` and ``scenarist recheck``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import FakeServer, records_of, run_cli, the_run, write

SUITE = """\
targets:
  fake:
    kind: openai
    base_url: {url}
    model: fake-model
    timeout_ms: 5000
    retry: {{max_attempts: 1}}
defaults: {{runs: 1, min_pass_rate: 1, concurrency: 2}}
{redact}
world:
  cards:
    - {{id: PAT-100001, owner: ana, status: active}}
    - {{id: PAT-100002, owner: ana, status: active}}
    - {{id: PAT-100003, owner: bob, status: active}}
tools:
  list_cards:
    description: List a person's cards.
    input_schema: {{type: object, properties: {{owner: {{type: string}}}}}}
    table: cards
    where: {{owner: "{{{{ args.owner }}}}"}}
  block_card:
    description: Block a card.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}}}}}
    action: update
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
    set: {{status: blocked}}
  renumber:
    description: Give a card another id.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}, new_id: {{type: string}}}}}}
    action: update
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
    set: {{id: "{{{{ args.new_id }}}}"}}
  delete_card:
    description: Delete a card.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}}}}}
    action: delete
    table: cards
    where: {{id: "{{{{ args.card_id }}}}"}}
  new_card:
    description: Create a card.
    input_schema: {{type: object, properties: {{card_id: {{type: string}}, owner: {{type: string}}}}}}
    action: create
    table: cards
    row: {{id: "{{{{ args.card_id }}}}", status: new}}
"""

REDACT = 'redact: {patterns: {card: "PAT-\\\\d{6}"}}'

AT = "given:\n  at: 2026-09-29T10:00:00-03:00\n"


def calls(*pairs: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


def verdicts(run_dir: Path) -> dict[str, list[tuple[str, str, str]]]:
    return {r["scenario"]: [(c["label"], c["status"], c["reason"]) for c in r["checks"]]
            for r in records_of(run_dir)}


def run_and_recheck(tmp_path: Path) -> tuple[dict[str, Any], dict[str, Any], str]:
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code in (0, 1), r.output
    first = the_run(tmp_path / "runs")
    again = run_cli("recheck", str(first), "--out", "rechecked", cwd=tmp_path)
    assert "Traceback" not in again.output
    second = the_run(tmp_path / "rechecked")
    return verdicts(first), verdicts(second), (first / "results.jsonl").read_text()


SCENARIOS = {
    # blocks two cards whose ids are secrets: the changes are stored redacted
    "blocks": (calls(("block_card", {"card_id": "PAT-100002"}),
                     ("block_card", {"card_id": "PAT-100003"})), AT + """\
  tools: [block_card]
when: "blocks"
then:
  - world: {cards: {PAT-100001: {status: active}, PAT-100002: {status: blocked},
                    PAT-100003: {status: blocked}}}
  - expect: "world.cards[0].status == 'active' and world.cards[2].status == 'blocked'"
"""),
    # gives a card the id another card has: two rows with one id
    "renumbers": (calls(("renumber", {"card_id": "PAT-100002", "new_id": "PAT-100001"})),
                  AT + """\
  tools: [renumber]
when: "renumbers"
then:
  - expect: "count(world.cards) == 3 and world.cards[1].id == 'PAT-100001'"
  - expect: "world.cards[1].owner == 'ana' and world.cards[0].status == 'active'"
  - world: {cards: {PAT-100003: {status: active}}}
"""),
    # deletes a card and creates it again: the new row has no owner
    "recreates": (calls(("delete_card", {"card_id": "PAT-100001"}),
                        ("new_card", {"card_id": "PAT-100001"})), AT + """\
  tools: [delete_card, new_card]
when: "recreates"
then:
  - world: {cards: {PAT-100001: {status: new}}}
  - expect: "world.cards[2].id == 'PAT-100001' and world.cards[2].status == 'new'"
  - expect: "world.cards[0].id == 'PAT-100002'"
"""),
    "reads": (calls(("list_cards", {"owner": "ana"})), AT + """\
  tools: [list_cards]
when: "reads"
then:
  - does_not_modify
"""),
}


def suite(tmp_path: Path, server: FakeServer, redact: str) -> None:
    server.script({"rules": [{"match": name, "replies": [reply, {"text": "Done."}]}
                             for name, (reply, _) in SCENARIOS.items()]})
    write(tmp_path / "scenarist.yaml", SUITE.format(url=server.url, redact=redact))
    for name, (_, text) in SCENARIOS.items():
        write(tmp_path / f"{name}.yaml", text)


def test_recheck_gives_the_world_verdicts_of_the_run(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite(tmp_path, server, "")
    live, rechecked, _ = run_and_recheck(tmp_path)
    assert rechecked == live
    assert {s: [v[1] for v in checks] for s, checks in live.items()} == {
        "blocks": ["pass", "pass"], "renumbers": ["pass", "pass", "pass"],
        "recreates": ["pass", "pass", "pass"], "reads": ["pass"]}


def test_recheck_gives_the_world_verdicts_of_the_run_when_ids_are_redacted(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite(tmp_path, server, REDACT)
    live, rechecked, results = run_and_recheck(tmp_path)
    assert "PAT-1000" not in results  # the ids are secrets at rest
    assert rechecked == live
    assert {s: [v[1] for v in checks] for s, checks in live.items()} == {
        "blocks": ["pass", "pass"], "renumbers": ["pass", "pass", "pass"],
        "recreates": ["pass", "pass", "pass"], "reads": ["pass"]}


def test_nan_in_a_jsonl_table_is_no_change_and_never_bare_in_results(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "balance", "replies": [
        calls(("get_account", {"id": "A-1"})), {"text": "Your balance is unknown."}]}]})
    write(tmp_path / "scenarist.yaml", f"""\
targets:
  fake: {{kind: openai, base_url: "{server.url}", model: m, timeout_ms: 5000,
          retry: {{max_attempts: 1}}}}
defaults: {{runs: 1, min_pass_rate: 1}}
world:
  accounts: {{file: accounts.jsonl}}
tools:
  get_account:
    description: One account.
    input_schema: {{type: object, properties: {{id: {{type: string}}}}}}
    table: accounts
    where: {{id: "{{{{ args.id }}}}"}}
    one: true
""")
    (tmp_path / "accounts.jsonl").write_text(
        '{"id": "A-1", "balance": NaN, "owner": "ana"}\n'
        '{"id": "A-2", "balance": 12.5, "owner": "bob"}\n')
    write(tmp_path / "balance.yaml", AT + """\
  tools: [get_account]
when: "balance"
then:
  - does_not_modify
  - expect: "world == world_before"
""")
    live, rechecked, results = run_and_recheck(tmp_path)
    assert live["balance"][0] == ("does_not_modify", "pass",
                                  "no call changed anything, and the world is as it started")
    assert rechecked == live
    for line in results.splitlines():
        json.loads(line, parse_constant=lambda c: (_ for _ in ()).throw(ValueError(c)))
