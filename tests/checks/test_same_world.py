"""The ``same_world_as`` check (issue 33 item 4) through the command line, against the
scripted server: the right actions replayed through the scenario's tools, a pass (also when
a call was refused on the way), each kind of difference word for word, a reference call
that is refused (lint where it can tell, a check error where it cannot), held calls, an
empty list, and recheck giving the same verdict."""

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
world:
  orders:
    - {{id: "#W1", status: pending, cancel_reason: null, total: "135.20",
       history: [{{kind: payment, amount: 135.2}}]}}
    - {{id: "#W2", status: delivered, cancel_reason: null, total: "20", history: []}}
    - {{id: "#W3", status: pending, cancel_reason: null, total: "7.5", history: []}}
  notes: []
tools:
  cancel_order:
    description: Cancel a pending order.
    input_schema:
      type: object
      properties:
        order_id: {{type: string}}
        reason: {{type: string, enum: [no longer needed, ordered by mistake]}}
      required: [order_id, reason]
    action: update
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
    require:
      - if: "row.status == 'pending'"
        else: "Error: non-pending order cannot be cancelled"
    set: {{status: cancelled, cancel_reason: "{{{{ args.reason }}}}"}}
    append: {{history: {{kind: refund, amount: "{{{{ row.total }}}}"}}}}
  confirm_cancel:
    description: Cancel a pending order, once the person confirms.
    input_schema:
      type: object
      properties: {{order_id: {{type: string}}, reason: {{type: string}}}}
      required: [order_id, reason]
    action: update
    confirm: true
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
    set: {{status: cancelled, cancel_reason: "{{{{ args.reason }}}}"}}
  delete_order:
    description: Delete an order.
    input_schema: {{type: object, properties: {{order_id: {{type: string}}}}, required: [order_id]}}
    action: delete
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
  add_note:
    description: Add a note.
    input_schema: {{type: object, properties: {{id: {{type: string}}, text: {{type: string}}}},
                   required: [id, text]}}
    action: create
    table: notes
    row: {{id: "{{{{ args.id }}}}", text: "{{{{ args.text }}}}"}}
  add_tagged_note:
    description: Add a note with a tag.
    input_schema: {{type: object, properties: {{id: {{type: string}}, text: {{type: string}}}},
                   required: [id, text]}}
    action: create
    table: notes
    row: {{id: "{{{{ args.id }}}}", text: "{{{{ args.text }}}}", tag: urgent}}
  read_order:
    description: Read an order.
    input_schema: {{type: object, properties: {{order_id: {{type: string}}}}, required: [order_id]}}
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
    one: true
"""

AT = "given:\n  at: 2026-09-29T10:00:00-03:00\n"
TOOLS = ("  tools: [cancel_order, confirm_cancel, delete_order, add_note, add_tagged_note, "
         "read_order]\n")
RIGHT = """  - same_world_as:
      - {name: read_order, args: {order_id: "#W1"}}
      - {name: cancel_order, args: {order_id: "#W1", reason: no longer needed}}
      - {name: add_note, args: {id: N-1, text: called}}
"""


def shop(tmp_path: Path, server: FakeServer, *scenarios: tuple[str, str]) -> None:
    write(tmp_path / "scenarist.yaml", SUITE.format(url=server.url))
    for name, text in scenarios:
        write(tmp_path / f"{name}.yaml", text)


def calls(*pairs: tuple[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


def act(server: FakeServer, *pairs: tuple[str, Any]) -> None:
    server.script({"rules": [{"match": "please", "replies": [calls(*pairs), {"text": "done"}]}],
                   "default": [{"text": "OK"}]})


def verdict(tmp_path: Path) -> dict[str, Any]:
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code in (0, 1), r.output
    (rec,) = records_of(the_run(tmp_path / "runs"))
    return next(c for c in rec["checks"] if c["check"] == "same_world_as")


SCENARIO = AT + TOOLS + "when: please\nthen:\n" + RIGHT


def test_the_right_actions_pass_even_with_a_call_refused_on_the_way(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    act(server, ("cancel_order", {"order_id": "#W1", "reason": "changed my mind"}),
        ("cancel_order", {"order_id": "#W2", "reason": "no longer needed"}),
        ("add_note", {"id": "N-1", "text": "called"}),
        ("cancel_order", {"order_id": "#W1", "reason": "no longer needed"}))
    shop(tmp_path, server, ("right", SCENARIO))
    c = verdict(tmp_path)
    assert (c["status"], c["reason"]) == (
        "pass", "the world is as the right actions leave it (read_order, cancel_order, "
                "add_note)")


def test_a_value_that_differs_is_named_with_found_and_expected(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    act(server, ("cancel_order", {"order_id": "#W1", "reason": "ordered by mistake"}),
        ("add_note", {"id": "N-1", "text": "called"}))
    shop(tmp_path, server, ("value", SCENARIO))
    c = verdict(tmp_path)
    assert (c["status"], c["reason"]) == (
        "fail", "the world differs from what the right actions make: orders #W1: "
                "cancel_reason is 'ordered by mistake', expected 'no longer needed'")


def test_a_list_that_differs_a_row_missing_and_a_row_too_many(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    act(server, ("cancel_order", {"order_id": "#W3", "reason": "no longer needed"}),
        ("add_note", {"id": "N-2", "text": "called"}))
    shop(tmp_path, server, ("rows", SCENARIO))
    c = verdict(tmp_path)
    assert c["status"] == "fail"
    assert c["reason"] == (
        "the world differs from what the right actions make: "
        "notes N-1: no such row; "
        "notes N-2: expected absent, but the row exists; "
        "orders #W1: status is 'pending', expected 'cancelled'; "
        "orders #W1: cancel_reason is null, expected 'no longer needed'; "
        "orders #W1: history is [{\"kind\": \"payment\", \"amount\": 135.2}], expected "
        "[{\"kind\": \"payment\", \"amount\": 135.2}, {\"kind\": \"refund\", \"amount\": "
        "\"135.20\"}]; "
        "orders #W3: status is 'cancelled', expected 'pending'; "
        "orders #W3: cancel_reason is 'no longer needed', expected null; "
        "orders #W3: history is [{\"kind\": \"refund\", \"amount\": \"7.5\"}], expected []")


def test_a_deleted_row_and_columns_one_side_lacks(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    act(server, ("delete_order", {"order_id": "#W2"}),
        ("add_tagged_note", {"id": "N-1", "text": "called"}),
        ("cancel_order", {"order_id": "#W1", "reason": "no longer needed"}))
    shop(tmp_path, server, ("columns", SCENARIO),)
    c = verdict(tmp_path)
    assert c["reason"] == (
        "the world differs from what the right actions make: "
        "notes N-1: tag is 'urgent', expected absent; "
        "orders #W2: no such row (it was deleted)")
    write(tmp_path / "columns.yaml", SCENARIO.replace("name: add_note", "name: add_tagged_note"))
    act(server, ("add_note", {"id": "N-1", "text": "called"}),
        ("cancel_order", {"order_id": "#W1", "reason": "no longer needed"}))
    for d in (tmp_path / "runs").iterdir():
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    c = verdict(tmp_path)
    assert c["reason"] == ("the world differs from what the right actions make: notes N-1: "
                           "tag is absent, expected 'urgent'")


def test_numbers_compare_by_value(tmp_path: Path, server: FakeServer,
                                  cli_env: dict[str, str]) -> None:
    """The right action appends the total written as text ('135.20'); a world in which the
    same amount is the number 135.2 is the same world."""
    suite = SUITE.replace('append: {{history: {{kind: refund, amount: "{{{{ row.total }}}}"}}}}',
                          'compute: {{history: "row.history + [{{kind: \'refund\', amount: '
                          'number(row.total)}}]"}}')
    assert suite != SUITE
    act(server, ("cancel_order", {"order_id": "#W1", "reason": "no longer needed"}),
        ("add_note", {"id": "N-1", "text": "called"}))
    write(tmp_path / "scenarist.yaml", suite.format(url=server.url))
    write(tmp_path / "num.yaml", SCENARIO)
    assert verdict(tmp_path)["status"] == "pass"


def test_held_calls_count_only_when_confirmed(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "please", "per_turn": True, "replies": [
        calls(("confirm_cancel", {"order_id": "#W3", "reason": "x"})), {"text": "done"}]}],
        "default": [{"text": "OK"}]})
    held = AT + TOOLS + """when:
  - please
  - WAIT
then:
  - same_world_as: [{name: confirm_cancel, args: {order_id: "#W3", reason: x}}]
"""
    shop(tmp_path, server, ("held", held))
    c = verdict(tmp_path)
    assert c["reason"] == ("the world differs from what the right actions make: orders #W3: "
                           "status is 'pending', expected 'cancelled'; orders #W3: "
                           "cancel_reason is null, expected 'x'")
    for d in (tmp_path / "runs").iterdir():
        for f in d.iterdir():
            f.unlink()
        d.rmdir()
    write(tmp_path / "held.yaml", held.replace("  - WAIT\n", "  - confirm: confirm_cancel\n"))
    assert verdict(tmp_path)["status"] == "pass"


def test_an_empty_list_means_nothing_may_change(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    act(server, ("read_order", {"order_id": "#W1"}),
        ("cancel_order", {"order_id": "#W2", "reason": "no longer needed"}))
    shop(tmp_path, server, ("none", AT + TOOLS + "when: please\nthen:\n  - same_world_as: []\n"))
    c = verdict(tmp_path)
    assert (c["status"], c["reason"]) == (
        "pass", "the world is as it was at the start, as the right actions (none) leave it")


def test_lint_refuses_a_reference_call_the_tools_refuse(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    shop(tmp_path, server, ("wrong", AT + TOOLS + """when: please
then:
  - same_world_as:
      - {name: cancel_order, args: {order_id: "#W1", reason: no longer needed}}
      - {name: cancel_order, args: {order_id: "#W1", reason: no longer needed}}
  - same_world_as:
      - {name: delete_order, args: {order_id: "#W9"}}
  - same_world_as:
      - {name: cancel_order, args: {order_id: "#W1"}}
"""))
    r = run_cli("lint", "wrong.yaml", cwd=tmp_path)
    assert r.exit_code == 1
    assert ("wrong.yaml:8:16: error E247 the reference call 2 (cancel_order with "
            "order_id=\"#W1\", reason=\"no longer needed\") is refused: Error: non-pending "
            "order cannot be cancelled") in r.output
    assert ("wrong.yaml:10:16: error E247 the reference call 1 (delete_order with "
            "order_id=\"#W9\") matches no row: error: no row in orders with id = #W9") \
        in r.output
    assert ("wrong.yaml:12:36: error E248 the reference call 1 to 'cancel_order' does not fit "
            "its input_schema: the argument 'reason' is missing (it is required)") in r.output


def test_where_lint_cannot_tell_a_refused_reference_call_is_a_check_error(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    act(server, ("read_order", {"order_id": "#W1"}))
    shop(tmp_path, server, ("cases", AT + TOOLS + """when: "please, {{ order }}"
then:
  - same_world_as: [{name: cancel_order, args: {order_id: "{{ order }}", reason: ordered by mistake}}]
cases:
  - {id: gone, order: "#W2"}
"""))
    assert run_cli("lint", "cases.yaml", cwd=tmp_path).exit_code == 0
    c = verdict(tmp_path)
    assert (c["status"], c["reason"]) == (
        "error", "the reference call 1 (cancel_order with order_id=\"#W2\", reason=\"ordered "
                 "by mistake\") was refused: Error: non-pending order cannot be cancelled; "
                 "the right actions must be calls the tools accept")


def test_recheck_gives_the_same_verdicts(tmp_path: Path, server: FakeServer,
                                         cli_env: dict[str, str]) -> None:
    act(server, ("cancel_order", {"order_id": "#W1", "reason": "ordered by mistake"}),
        ("add_note", {"id": "N-1", "text": "called"}))
    shop(tmp_path, server, ("a", SCENARIO), ("b", SCENARIO.replace(
        "reason: no longer needed", "reason: ordered by mistake")))
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 1
    first = the_run(tmp_path / "runs")
    live = {x["scenario"]: (x["status"], [(c["status"], c["reason"]) for c in x["checks"]])
            for x in records_of(first)}
    assert {k: v[0] for k, v in live.items()} == {"a": "fail", "b": "pass"}
    r = run_cli("recheck", str(first), "--out", "rechecked", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    again = {x["scenario"]: (x["status"], [(c["status"], c["reason"]) for c in x["checks"]])
             for x in records_of(the_run(tmp_path / "rechecked"))}
    assert again == live
    assert json.dumps(live["a"]).count("differs") == 1
