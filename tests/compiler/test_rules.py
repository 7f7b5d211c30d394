"""Business rules in the world (issue 33) through the command line, against the scripted
server process: ``require`` refusing a call with its exact text and changing nothing,
effects across tables all or nothing, ``if``, ``compute`` with money exact to the cent,
``append``, nested templates, numbers written as text, arguments refused by the input
schema on every path (the agent loop, MCP for own-loop agents and ``scenarist mcp``, a
python agent's ``env.tools``), ``ends_conversation``, and lint of the new mistakes."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
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
defaults: {{runs: 1, min_pass_rate: 1, concurrency: 2}}
world:
  orders:
    - {{id: "#W1", user_id: ana, status: pending, cancel_reason: null,
       address: {{city: Austin, zip: "78712"}},
       payment_history: [{{transaction_type: payment, amount: 135.2, payment_method_id: gift_1}}]}}
    - {{id: "#W2", user_id: ana, status: delivered, cancel_reason: null,
       address: {{city: Austin, zip: "78712"}},
       payment_history: [{{transaction_type: payment, amount: 20, payment_method_id: card_1}}]}}
    - {{id: "#W3", user_id: ana, status: pending, cancel_reason: null,
       address: {{city: Austin, zip: "78712"}},
       payment_history: [{{transaction_type: payment, amount: 0.2, payment_method_id: card_1}}]}}
  payment_methods: {{file: payment_methods.csv}}
tools:
  cancel_order:
    description: Cancel a pending order; a gift card is refunded at once.
    input_schema:
      type: object
      properties:
        order_id: {{type: string}}
        reason: {{type: string, enum: [no longer needed, ordered by mistake]}}
      required: [order_id, reason]
      additionalProperties: false
    action: update
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
    require:
      - if: "row.status == 'pending'"
        else: "Error: non-pending order cannot be cancelled"
    set: {{status: cancelled, cancel_reason: "{{{{ args.reason }}}}"}}
    append:
      payment_history:
        transaction_type: refund
        amount: "{{{{ row.payment_history[0].amount }}}}"
        payment_method_id: "{{{{ row.payment_history[0].payment_method_id }}}}"
    effects:
      - table: payment_methods
        action: update
        where: {{id: "{{{{ row.payment_history[0].payment_method_id }}}}"}}
        if: "row.source == 'gift_card'"
        compute:
          balance: "row.balance + first(world.orders[id == args.order_id]).payment_history[0].amount"
  move_order:
    description: Change where a pending order goes.
    input_schema:
      type: object
      properties: {{order_id: {{type: string}}, city: {{type: string}}, zip: {{type: string}}}}
      required: [order_id, city, zip]
    action: update
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
    require:
      - if: "row.status == 'pending'"
        else: "Error: order {{{{ args.order_id }}}} is {{{{ row.status }}}}"
    set: {{address: {{city: "{{{{ args.city }}}}", zip: "{{{{ args.zip }}}}"}}}}
  pay_with:
    description: Pay an order's extra cost with a payment method of its owner.
    input_schema:
      type: object
      properties:
        order_id: {{type: string}}
        payment_method_id: {{type: string}}
        amount: {{type: number}}
      required: [order_id, payment_method_id, amount]
    action: update
    table: orders
    where: {{id: "{{{{ args.order_id }}}}"}}
    require:
      - if: "any(world.payment_methods, id == args.payment_method_id and user_id == row.user_id)"
        else: "Error: payment method not found"
    append:
      payment_history: {{transaction_type: payment, amount: "{{{{ args.amount }}}}",
                         payment_method_id: "{{{{ args.payment_method_id }}}}"}}
    effects:
      - table: payment_methods
        action: update
        where: {{id: "{{{{ args.payment_method_id }}}}"}}
        require:
          - if: "row.source != 'gift_card' or row.balance >= args.amount"
            else: "Error: insufficient gift card balance"
        if: "row.source == 'gift_card'"
        compute: {{balance: "row.balance - args.amount"}}
  find_payment:
    description: Find the payment methods holding this balance.
    input_schema: {{type: object, properties: {{balance: {{type: number}}}}, required: [balance]}}
    table: payment_methods
    where: {{balance: "{{{{ args.balance }}}}"}}
    fields: [id, balance]
  log_and_charge:
    description: Charge a card and log it in a table that does not hold that card.
    input_schema: {{type: object, properties: {{payment_method_id: {{type: string}}}}}}
    action: update
    table: orders
    where: {{id: "#W1"}}
    set: {{status: charged}}
    effects:
      - table: payment_methods
        action: update
        where: {{id: "{{{{ args.payment_method_id }}}}"}}
        set: {{source: charged}}
"""

CARDS_CSV = """\
id,user_id,source,balance
gift_1,ana,gift_card,60
gift_2,ana,gift_card,135.20
card_1,ana,credit_card,
gift_9,bob,gift_card,500
"""

AT = "given:\n  at: 2026-09-29T10:00:00-03:00\n"


def store(tmp_path: Path, server: FakeServer, *scenarios: tuple[str, str],
          suite: str = SUITE) -> None:
    write(tmp_path / "scenarist.yaml", suite.format(url=server.url))
    write(tmp_path / "payment_methods.csv", CARDS_CSV)
    for name, text in scenarios:
        write(tmp_path / f"{name}.yaml", text)


def calls(*pairs: tuple[str, Any]) -> dict[str, Any]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in pairs]}


def script(server: FakeServer, match: str, *replies: dict[str, Any]) -> None:
    server.script({"rules": [{"match": match, "replies": list(replies)}],
                   "default": [{"text": "OK"}]})


def run(tmp_path: Path, *args: str) -> tuple[Any, list[dict[str, Any]]]:
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", *args, cwd=tmp_path)
    return r, records_of(the_run(tmp_path / "runs"))


def check(rec: dict[str, Any], name: str) -> dict[str, Any]:
    return next(c for c in rec["checks"] if c["check"] == name)


def one(tools: str, then: str = "  - non_empty\n", when: str = "do it") -> str:
    return AT + f"  tools: [{tools}]\nwhen: \"{when}\"\nthen:\n{then}"


# ---- require: refused with its text, nothing changed ------------------------------------------


def test_a_false_rule_refuses_the_call_with_its_else_text_and_changes_nothing(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("cancel_order", {"order_id": "#W2", "reason": "no longer needed"}),
                               ("move_order", {"order_id": "#W2", "city": "Boston",
                                               "zip": "02101"})), {"text": "done"})
    store(tmp_path, server, ("refuse", one("cancel_order, move_order",
                                           "  - world: {orders: {'#W2': {status: delivered}}}\n"
                                           "  - expect: \"all(calls, error == 'refused')\"\n")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    cancel, move = rec["calls"]
    assert cancel["output"] == "Error: non-pending order cannot be cancelled"
    assert cancel["error"] == "refused"
    # the else text is a template over args and the row the where matched
    assert move["output"] == "Error: order #W2 is delivered"
    assert move["error"] == "refused"
    assert rec["world"] == []
    sent = server.requests()[-1]["body"]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == [
        "Error: non-pending order cannot be cancelled", "Error: order #W2 is delivered"]


def test_a_rule_reads_other_tables_through_world(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("pay_with", {"order_id": "#W1", "payment_method_id": "gift_9",
                                             "amount": 5}),
                               ("pay_with", {"order_id": "#W1", "payment_method_id": "gift_1",
                                             "amount": 5})), {"text": "done"})
    store(tmp_path, server, ("other", one("pay_with")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    bob, ana = rec["calls"]
    assert (bob["output"], bob["error"]) == ("Error: payment method not found", "refused")
    assert ana.get("error") is None
    assert {c["table"]: c["id"] for c in rec["world"]} == {"orders": "#W1",
                                                            "payment_methods": "gift_1"}


# ---- effects: all or nothing across tables, if: -------------------------------------------------


def test_a_refused_effect_changes_no_table_and_the_agent_gets_its_error(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("pay_with", {"order_id": "#W1", "payment_method_id": "gift_1",
                                             "amount": 60.01}),
                               ("log_and_charge", {"payment_method_id": "nope"})),
           {"text": "done"})
    store(tmp_path, server, ("atomic", one("pay_with, log_and_charge",
                                           "  - world: {orders: {'#W1': {status: pending}}}\n")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    short, missing = rec["calls"]
    # the order's own step ran first; the gift card's refusal undid it
    assert (short["output"], short["error"]) == ("Error: insufficient gift card balance",
                                                 "refused")
    # an effect whose where matches no row: no-row, and the order stays as it was
    assert (missing["output"], missing["error"]) == (
        "error: no row in payment_methods with id = nope", "no-row")
    assert rec["world"] == []


def test_if_decides_whether_an_effect_happens(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("cancel_order", {"order_id": "#W1", "reason": "no longer needed"}),
                               ("cancel_order", {"order_id": "#W3", "reason": "ordered by mistake"})),
           {"text": "done"})
    store(tmp_path, server, ("if", one("cancel_order")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    changed = {(c["table"], c["id"]): c["set"] for c in rec["world"]}
    # the gift card paid #W1 and got its 135.2 back at once; the credit card of #W3 did not
    assert changed[("payment_methods", "gift_1")] == {"balance": ["60", 195.2]}
    assert ("payment_methods", "card_1") not in changed
    assert changed[("orders", "#W3")]["status"] == ["pending", "cancelled"]


# ---- compute, append, nested templates, numbers written as text -----------------------------


def test_compute_keeps_money_exact_to_the_cent(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("pay_with", {"order_id": "#W1", "payment_method_id": "gift_2",
                                             "amount": 17.99}),
                               ("pay_with", {"order_id": "#W1", "payment_method_id": "gift_1",
                                             "amount": 0.1}),
                               ("pay_with", {"order_id": "#W1", "payment_method_id": "gift_1",
                                             "amount": 0.2})),
           {"text": "done"})
    store(tmp_path, server, ("cents", one("pay_with", "  - world: {payment_methods: "
                                                      "{gift_2: {balance: 117.21}, gift_1: "
                                                      "{balance: 59.7}}}\n")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    changed = {c["id"]: c["set"] for c in rec["world"] if c["table"] == "payment_methods"}
    # '135.20' (a CSV cell) - 17.99 is 117.21, and 60 - 0.1 - 0.2 is 59.7, not 59.699999...
    assert changed == {"gift_2": {"balance": ["135.20", 117.21]},
                       "gift_1": {"balance": ["60", 59.7]}}
    assert check(rec, "world")["status"] == "pass"


def test_append_adds_a_mapping_whose_templates_give_values(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("cancel_order", {"order_id": "#W1", "reason": "no longer needed"})),
           {"text": "done"})
    store(tmp_path, server, ("append", one("cancel_order")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    order = next(c for c in rec["world"] if c["id"] == "#W1")
    assert order["set"]["payment_history"][1] == [
        {"transaction_type": "payment", "amount": 135.2, "payment_method_id": "gift_1"},
        {"transaction_type": "refund", "amount": 135.2, "payment_method_id": "gift_1"}]
    assert order["set"]["cancel_reason"] == [None, "no longer needed"]


def test_templates_inside_nested_mappings_are_rendered(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("move_order", {"order_id": "#W1", "city": "Boston",
                                               "zip": "02101"})), {"text": "done"})
    store(tmp_path, server, ("nested", one("move_order", "  - world: {orders: {'#W1': "
                                                         "{address: {city: Boston, zip: "
                                                         "'02101'}}}}\n")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    (change,) = rec["world"]
    assert change["set"]["address"] == [{"city": "Austin", "zip": "78712"},
                                        {"city": "Boston", "zip": "02101"}]
    assert check(rec, "world")["status"] == "pass"


def test_a_number_written_as_text_matches_in_where_the_world_check_and_expressions(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("find_payment", {"balance": 135.2})), {"text": "done"})
    store(tmp_path, server, ("text", one(
        "find_payment",
        "  - world: {payment_methods: {gift_2: {balance: 135.2}}}\n"
        "  - expect: \"first(world.payment_methods[id == 'gift_2']).balance == 135.2\"\n"
        "  - expect: \"first(world.payment_methods[id == 'gift_2']).balance + 0.8 == 136\"\n")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert json.loads(rec["calls"][0]["output"]) == [{"id": "gift_2", "balance": "135.20"}]
    assert [c["status"] for c in rec["checks"]] == ["pass", "pass", "pass"]


# ---- arguments that break the input_schema: every path --------------------------------------

BAD_ARGS = [
    ("cancel_order", {"order_id": "#W1"},
     "error: invalid arguments for cancel_order: the argument 'reason' is missing (it is "
     "required)"),
    ("cancel_order", {"order_id": "#W1", "reason": "changed my mind"},
     "error: invalid arguments for cancel_order: the argument 'reason' must be 'no longer "
     "needed' or 'ordered by mistake', not \"changed my mind\""),
    ("cancel_order", {"order_id": 1, "reason": "no longer needed"},
     "error: invalid arguments for cancel_order: the argument 'order_id' must be text, not a "
     "number (1)"),
    ("cancel_order", {"order_id": "#W1", "reason": "no longer needed", "refund": True},
     "error: invalid arguments for cancel_order: there is no argument 'refund' (the "
     "arguments are 'order_id' and 'reason')"),
]


def test_the_agent_loop_refuses_arguments_that_break_the_schema(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(*((n, a) for n, a, _ in BAD_ARGS)), {"text": "done"})
    store(tmp_path, server, ("args", one("cancel_order",
                                         "  - expect: \"all(calls, error == 'invalid-args')\"\n")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert [c["output"] for c in rec["calls"]] == [text for _, _, text in BAD_ARGS]
    assert rec["world"] == []
    sent = server.requests()[-1]["body"]["messages"]
    assert [m["content"] for m in sent if m["role"] == "tool"] == [t for _, _, t in BAD_ARGS]


def test_an_own_loop_agent_over_mcp_is_refused_the_same_way(
        tmp_path: Path, cli_env: dict[str, str]) -> None:
    agent = {"kind": "command", "command": [sys.executable, str(REPO / "tests" / "ownagent.py"),
                                            "stdio"], "timeout_ms": 20000}
    suite = SUITE.replace("  fake:\n    kind: openai\n    base_url: {url}\n    model: fake-model"
                          "\n    timeout_ms: 5000\n    retry: {{max_attempts: 1}}\n",
                          "  agent: " + json.dumps(agent).replace("{", "{{").replace("}", "}}")
                          + "\n")
    assert suite != SUITE
    write(tmp_path / "scenarist.yaml", suite.format(url="http://127.0.0.1:9/v1"))
    write(tmp_path / "payment_methods.csv", CARDS_CSV)
    said = " ".join(f"CALL {n} {json.dumps(a)}" for n, a, _ in BAD_ARGS[:2])
    write(tmp_path / "mcp.yaml", AT + f"""  tools: [cancel_order]
when: '{said}'
then:
  - expect: "all(calls, error == 'invalid-args')"
""")
    r = run_cli("run", ".", "--out", "runs", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records_of(the_run(tmp_path / "runs"))
    assert [c["output"] for c in rec["calls"]] == [t for _, _, t in BAD_ARGS[:2]]
    assert rec["world"] == []
    # the agent got each refusal as an error result with the same words
    assert f"cancel_order -> {BAD_ARGS[0][2]}" in rec["answer"]


PY_AGENT = '''
def run(env):
    out = env.tools["cancel_order"](order_id="#W1", reason="changed my mind")
    ok = env.tools["cancel_order"](order_id="#W3", reason="ordered by mistake")
    return out + " | " + ok
'''


def test_a_python_agents_env_tools_are_refused_the_same_way(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    module = "rules_agent_" + tmp_path.name.replace("-", "_").replace(".", "_")
    suite = SUITE.replace("  fake:\n", f"  mine: {{{{kind: python, entry: '{module}:run'}}}}\n"
                                      "  fake:\n").replace("defaults: {{",
                                                           "defaults: {{target: mine, ")
    store(tmp_path, server, ("py", one("cancel_order",
                                       "  - world: {orders: {'#W3': {status: cancelled}, "
                                       "'#W1': {status: pending}}}\n")), suite=suite)
    write(tmp_path / f"{module}.py", PY_AGENT)
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert rec["answer"].startswith(BAD_ARGS[1][2] + " | ")
    assert [c.get("error") for c in rec["calls"]] == ["invalid-args", None]


def test_scenarist_mcp_refuses_arguments_that_break_the_schema(tmp_path: Path,
                                                               server: FakeServer) -> None:
    from mcp import Client

    store(tmp_path, server, ("serve", one("cancel_order")))
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "dsl", "mcp", "serve.yaml"], cwd=tmp_path,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None

    async def go(url: str) -> tuple[Any, Any]:
        async with Client(url) as client:
            bad = await client.call_tool("cancel_order", BAD_ARGS[1][1])
            good = await client.call_tool("cancel_order", {"order_id": "#W2",
                                                           "reason": "no longer needed"})
        return bad, good

    try:
        url = proc.stdout.readline().strip()
        bad, good = asyncio.run(go(url))
        assert bad.is_error is True
        assert [b.text for b in bad.content] == [BAD_ARGS[1][2]]
        assert good.is_error is True
        assert [b.text for b in good.content] == ["Error: non-pending order cannot be cancelled"]
        lines = [proc.stdout.readline().rstrip("\n") for _ in range(2)]
        assert lines[0].endswith("[invalid-args]")
        assert lines[1].endswith("[refused]")
    finally:
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=20)


def test_other_fake_tools_keep_answering_as_before(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite = SUITE.replace("tools:\n", "tools:\n  hours:\n    description: Opening hours.\n"
                                      "    input_schema: {{type: object, properties: {{day: "
                                      "{{type: string}}}}, required: [day]}}\n"
                                      "    returns: 'Open on {{{{ args.day }}}}'\n", 1)
    script(server, "do", calls(("hours", {"day": 3})), {"text": "done"})
    store(tmp_path, server, ("hours", one("hours")), suite=suite)
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert rec["calls"][0]["output"] == "Open on 3"
    assert rec["calls"][0].get("error") is None


# ---- ends_conversation ----------------------------------------------------------------------

TRANSFER = SUITE.replace("tools:\n", """tools:
  transfer_to_human_agents:
    description: Transfer the user to a human agent.
    input_schema: {{type: object, properties: {{summary: {{type: string}}}}, required: [summary]}}
    ends_conversation: true
    returns: Transfer successful
""", 1)


def test_a_tool_that_ends_the_conversation_ends_it_after_its_turn(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [
        {"match": "human", "per_turn": True, "replies": [
            calls(("transfer_to_human_agents", {"summary": "wants a human"})),
            {"text": "I have transferred you."}]},
    ], "default": [{"text": "How can I help?"}]})
    store(tmp_path, server, ("transfer", AT + """  tools: [transfer_to_human_agents, cancel_order]
when:
  - "hello"
  - "get me a human"
  - "hello? anyone?"
then:
  - calls: transfer_to_human_agents
"""), suite=TRANSFER)
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert [t["text"] for t in rec["turns"]] == ["hello", "get me a human"]
    assert rec["ended_by"] == "transfer_to_human_agents"
    assert rec["answer"] == "I have transferred you."
    assert not any("anyone" in json.dumps(q["body"]) for q in server.requests())
    html = (the_run(tmp_path / "runs") / "report.html").read_text()
    assert ("The conversation ended: the agent called transfer_to_human_agents, which ends "
            "the conversation (ends_conversation: true).") in html


def test_without_the_call_every_turn_is_played_and_nothing_is_recorded(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [], "default": [{"text": "Sure."}]})
    store(tmp_path, server, ("stay", AT + """  tools: [transfer_to_human_agents]
when: ["hello", "bye"]
then:
  - not_calls: transfer_to_human_agents
"""), suite=TRANSFER)
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 0, r.output
    assert len(rec["turns"]) == 2
    assert "ended_by" not in rec


# ---- lint ---------------------------------------------------------------------------------


def test_lint_locates_a_misspelt_column_in_compute_and_an_unknown_tool_in_same_world_as(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    bad = SUITE.replace('compute: {{balance: "row.balance - args.amount"}}',
                        'compute: {{balanse: "row.balance - args.amount"}}')
    assert bad != SUITE
    store(tmp_path, server, ("wrong", AT + """  tools: [pay_with]
when: pay
then:
  - same_world_as:
      - {name: pay_wth, args: {order_id: "#W1", payment_method_id: gift_1, amount: 5}}
"""), suite=bad)
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    assert ("scenarist.yaml:89:19: error E241 compute of effect 1 of the tool 'pay_with' names "
            "the column 'balanse', which the table 'payment_methods' does not have; did you "
            "mean 'balance'?") in r.output
    assert ("wrong.yaml:7:16: error E201 the scenario has no tool 'pay_wth'; did you mean "
            "'pay_with'?") in r.output


def test_lint_locates_each_new_mistake(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str]) -> None:
    store(tmp_path, server, ("many", AT + """  tools:
    - name: refund
      input_schema:
        type: object
        properties: {order_id: {type: string}, amount: {type: number}}
        required: [order_id, amount]
      action: update
      table: orders
      where: {id: "{{ args.order_id }}"}
      require:
        - if: "row.stauts == 'pending'"
          else: "Error: not pending"
        - if: "args.amout > 0"
          else: "Error: no amount"
        - if: "row.status = 'pending'"
          else: "Error: x"
      compute: {status: "'refunded' if any(world.paymnt_methods, true) else row.status"}
      append: {status: refunded}
when: refund
then:
  - equals: {text: done, anywhere: true}
"""))
    r = run_cli("lint", "many.yaml", cwd=tmp_path)
    assert r.exit_code == 1
    for line in (
        "many.yaml:13:20: error X302 the rows have no column 'stauts'; did you mean 'status'?",
        "many.yaml:15:21: error X302 the tool has no argument 'amout'; did you mean 'amount'?",
        "many.yaml:17:27: error X301 '=' compares nothing; to compare use '=='",
        "many.yaml:19:50: error X302 the world has no table 'paymnt_methods'; did you mean "
        "'payment_methods'?",
        "many.yaml:20:16: error E246 append of the tool 'refund' adds to the column 'status' "
        "of 'orders', which is not a list (it holds text)",
        "many.yaml:23:26: error S102 the check 'equals' does not take 'anywhere'; 'contains', "
        "'matches' and 'not_contains' do",
    ):
        assert line in r.output, line


def test_recheck_gives_the_same_verdicts_on_what_the_rules_changed(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    script(server, "do", calls(("cancel_order", {"order_id": "#W1", "reason": "changed"}),
                               ("cancel_order", {"order_id": "#W1", "reason": "no longer needed"}),
                               ("pay_with", {"order_id": "#W3", "payment_method_id": "gift_2",
                                             "amount": 17.99})),
           {"text": "done"})
    store(tmp_path, server, ("again", one("cancel_order, pay_with", """\
  - same_world_as:
      - {name: cancel_order, args: {order_id: "#W1", reason: no longer needed}}
  - world: {payment_methods: {gift_1: {balance: 195.2}, gift_2: {balance: 117.21}}}
  - expect: "first(world.orders[id == '#W3']).payment_history[1].amount == 17.99"
""")))
    r, (rec,) = run(tmp_path)
    assert r.exit_code == 1
    live = [(c["status"], c["reason"]) for c in rec["checks"]]
    assert [s for s, _ in live] == ["fail", "pass", "pass"]
    r = run_cli("recheck", str(the_run(tmp_path / "runs")), "--out", "again", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (again,) = records_of(the_run(tmp_path / "again"))
    assert [(c["status"], c["reason"]) for c in again["checks"]] == live
