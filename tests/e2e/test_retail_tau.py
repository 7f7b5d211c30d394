"""scenarios/retail against tau-bench's own reward (issue 33 item 8): each of its
scenarios is played by scripted trajectories — tau-bench's ground truth, plausible
mistakes, and trajectories in which a tool refused a call on the way that tau-bench still
accepts — through the command line against the scripted server, and each Scenarist
verdict must equal tau-bench's reward on the same trajectory (tests/e2e/tau_retail.py
reimplements it from tau-bench's source; MIT, Copyright (c) 2024 Sierra). The ground-truth
actions and outputs below are those of tau-bench's retail test tasks (tasks_test.py)."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, FakeServer, records_of, run_cli, write
from tests.e2e.tau_retail import load, reward

RETAIL = REPO / "scenarios" / "retail"
Call = tuple[str, dict[str, Any]]

# tau-bench retail test tasks: scenario → (task index, ground-truth actions, outputs)
TASKS: dict[str, tuple[int, list[Call], list[str]]] = {
    "retail.cancel_pending_order": (69, [
        ("find_user_id_by_name_zip", {"first_name": "Emma", "last_name": "Smith",
                                      "zip": "10192"}),
        ("get_user_details", {"user_id": "emma_smith_8564"}),
        ("get_order_details", {"order_id": "#W2417020"}),
        ("cancel_pending_order", {"order_id": "#W2417020", "reason": "no longer needed"}),
    ], []),
    "retail.modify_address": (17, [
        ("find_user_id_by_name_zip", {"first_name": "Fatima", "last_name": "Johnson",
                                      "zip": "78712"}),
        ("get_user_details", {"user_id": "fatima_johnson_7581"}),
        ("get_order_details", {"order_id": "#W5199551"}),
        ("get_order_details", {"order_id": "#W8665881"}),
        ("get_order_details", {"order_id": "#W9389413"}),
        ("modify_pending_order_address", {"order_id": "#W8665881", "address1": "123 Elm Street",
                                          "address2": "Suite 641", "city": "Austin",
                                          "state": "TX", "country": "USA", "zip": "78712"}),
    ], []),
    "retail.modify_items": (44, [
        ("find_user_id_by_name_zip", {"first_name": "Aarav", "last_name": "Anderson",
                                      "zip": "19031"}),
        ("get_order_details", {"order_id": "#W9300146"}),
        ("get_product_details", {"product_id": "6817146515"}),
        ("calculate", {"expression": "135.24 - 153.23"}),
        ("modify_pending_order_items", {"order_id": "#W9300146", "item_ids": ["9190635437"],
                                        "new_item_ids": ["5320792178"],
                                        "payment_method_id": "gift_card_7245904"}),
    ], ["17.99"]),
    "retail.return_items": (73, [
        ("return_delivered_order_items", {
            "order_id": "#W5272531",
            "item_ids": ["7228247242", "2698416822", "8098621301", "3320557165"],
            "payment_method_id": "credit_card_6824399"}),
    ], []),
    "retail.exchange_items": (45, [
        ("find_user_id_by_name_zip", {"first_name": "Daiki", "last_name": "Johnson",
                                      "zip": "80273"}),
        ("get_order_details", {"order_id": "#W9502127"}),
        ("get_product_details", {"product_id": "1762337868"}),
        ("calculate", {"expression": "652.61 - 642.72"}),
        ("exchange_delivered_order_items", {"order_id": "#W9502127", "item_ids": ["6259501109"],
                                            "new_item_ids": ["7958300294"],
                                            "payment_method_id": "paypal_2433177"}),
    ], ["9.89"]),
    "retail.lookup_tshirts": (24, [], ["polyester", "cotton"]),
    "retail.transfer_to_human": (10, [
        ("find_user_id_by_email", {"email": "mia.garcia2723@example.com"}),
        ("get_user_details", {"user_id": "mia_garcia_4516"}),
        ("get_order_details", {"order_id": "#W5490111"}),
        ("get_order_details", {"order_id": "#W7387996"}),
        ("transfer_to_human_agents", {"summary": "The user wants to refund each order to the "
                                                 "opposite order's payment method, but the "
                                                 "agent cannot help."}),
    ], []),
}


def truth(scenario: str) -> list[Call]:
    """The ground truth as an agent with Scenarist's tools plays it (no calculate tool)."""
    return [c for c in TASKS[scenario][1] if c[0] != "calculate"]


LAMP = {"order_id": "#W9300146", "item_ids": ["9190635437"],
        "payment_method_id": "gift_card_7245904"}
VACUUM = {"order_id": "#W9502127", "item_ids": ["6259501109"],
          "payment_method_id": "paypal_2433177"}
RETURN = {"order_id": "#W5272531", "payment_method_id": "credit_card_6824399"}
TO_GIFT_CARD = "The refund goes to your gift card."

# (scenario, what the trajectory is, its calls, what the agent says at the end)
TRAJECTORIES: list[tuple[str, str, list[Call], str]] = [
    ("retail.cancel_pending_order", "ground truth", truth("retail.cancel_pending_order"),
     "Order #W2417020 is cancelled; the refund is on your gift card."),
    ("retail.cancel_pending_order", "the wrong reason", [
        ("cancel_pending_order", {"order_id": "#W2417020", "reason": "ordered by mistake"})],
     "Cancelled."),
    ("retail.cancel_pending_order", "refused twice on the way", [
        ("cancel_pending_order", {"order_id": "#W2417020", "reason": "found a better deal"}),
        ("return_delivered_order_items", {"order_id": "#W2417020", "item_ids": ["8997785118"],
                                          "payment_method_id": "gift_card_8541487"}),
        ("cancel_pending_order", {"order_id": "#W2417020", "reason": "no longer needed"})],
     "It could not be returned, so I cancelled it."),
    ("retail.cancel_pending_order", "another order cancelled too", [
        *truth("retail.cancel_pending_order"),
        ("cancel_pending_order", {"order_id": "#W3614011", "reason": "no longer needed"})],
     "Both cancelled."),
    ("retail.modify_address", "ground truth", truth("retail.modify_address"), "Done."),
    ("retail.modify_address", "the wrong suite", [
        ("modify_pending_order_address", {"order_id": "#W8665881", "address1": "123 Elm Street",
                                          "address2": "Suite 614", "city": "Austin",
                                          "state": "TX", "country": "USA", "zip": "78712"})],
     "Done."),
    ("retail.modify_address", "a delivered order refused on the way", [
        ("modify_pending_order_address", {"order_id": "#W9389413", "address1": "123 Elm Street",
                                          "address2": "Suite 641", "city": "Austin",
                                          "state": "TX", "country": "USA", "zip": "78712"}),
        *truth("retail.modify_address")], "Done."),
    ("retail.modify_address", "the default address changed too", [
        *truth("retail.modify_address"),
        ("modify_user_address", {"user_id": "fatima_johnson_7581",
                                 "address1": "123 Elm Street", "address2": "Suite 641",
                                 "city": "Austin", "state": "TX", "country": "USA",
                                 "zip": "78712"})], "Done."),
    ("retail.modify_items", "ground truth", truth("retail.modify_items"),
     "You get back $17.99 on your gift card."),
    ("retail.modify_items", "ground truth, never saying how much", truth("retail.modify_items"),
     TO_GIFT_CARD),
    ("retail.modify_items", "not the cheapest lamp", [
        ("modify_pending_order_items", {**LAMP, "new_item_ids": ["7624783998"]})],
     "You pay 0.94 more."),
    ("retail.modify_items", "an unavailable lamp refused on the way", [
        ("modify_pending_order_items", {**LAMP, "new_item_ids": ["4385534692"]}),
        ("modify_pending_order_items", {**LAMP, "new_item_ids": ["5320792178"],
                                        "payment_method_id": "paypal_1"}),
        ("modify_pending_order_items", {**LAMP, "new_item_ids": ["5320792178"]})],
     "You get back $17.99."),
    ("retail.return_items", "ground truth", truth("retail.return_items"), "Return requested."),
    ("retail.return_items", "the items listed in another order", [
        ("return_delivered_order_items", {**RETURN, "item_ids": [
            "3320557165", "8098621301", "2698416822", "7228247242"]})], "Return requested."),
    ("retail.return_items", "the coffee machine returned too", [
        ("return_delivered_order_items", {**RETURN, "item_ids": [
            "7228247242", "2698416822", "8098621301", "3320557165", "7441167885"]})],
     "Return requested."),
    ("retail.return_items", "an item twice refused on the way", [
        ("return_delivered_order_items", {**RETURN, "item_ids": ["7228247242", "7228247242"]}),
        *truth("retail.return_items")], "Return requested."),
    ("retail.exchange_items", "ground truth", truth("retail.exchange_items"),
     "Exchange requested; you get 9.89 back."),
    ("retail.exchange_items", "the bagged canister", [
        ("exchange_delivered_order_items", {**VACUUM, "new_item_ids": ["1345513440"]})],
     "You pay 2.98 more; 9.89 was the other one."),
    ("retail.exchange_items", "an unavailable vacuum refused on the way", [
        ("exchange_delivered_order_items", {**VACUUM, "new_item_ids": ["3019027053"]}),
        ("exchange_delivered_order_items", {**VACUUM, "new_item_ids": ["7958300294"],
                                            "item_ids": ["2872451762", "6259501109"]}),
        *truth("retail.exchange_items")], "Done: $9.89 back to PayPal."),
    ("retail.exchange_items", "ground truth, never saying how much",
     truth("retail.exchange_items"), "Exchange requested."),
    ("retail.lookup_tshirts", "ground truth", [
        ("find_user_id_by_name_zip", {"first_name": "Sofia", "last_name": "Hernandez",
                                      "zip": "98193"}),
        ("get_order_details", {"order_id": "#W9609649"})],
     "They are a Cotton crew neck and a Polyester one."),
    ("retail.lookup_tshirts", "the grill cancelled", [
        ("cancel_pending_order", {"order_id": "#W3561391", "reason": "no longer needed"})],
     "Cancelled. The t-shirts are cotton and polyester."),
    ("retail.lookup_tshirts", "a cancel refused on the way", [
        ("cancel_pending_order", {"order_id": "#W3561391", "reason": "too big"})],
     "I kept it. The t-shirts: cotton, polyester."),
    ("retail.lookup_tshirts", "one material missing", [], "One is cotton."),
    ("retail.transfer_to_human", "ground truth", truth("retail.transfer_to_human"),
     "A human agent will help you."),
    ("retail.transfer_to_human", "the opposite refund refused on the way", [
        ("return_delivered_order_items", {"order_id": "#W5490111",
                                          "item_ids": ["4579334072"],
                                          "payment_method_id": "paypal_9497703"}),
        ("transfer_to_human_agents", {"summary": "wants opposite refunds"})],
     "Transferring you."),
    ("retail.transfer_to_human", "the items returned instead", [
        ("return_delivered_order_items", {"order_id": "#W7387996",
                                          "item_ids": ["5796612084"],
                                          "payment_method_id": "paypal_9497703"}),
        ("transfer_to_human_agents", {"summary": "returned one"})], "Done."),
]


@pytest.fixture(scope="module")
def suite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """scenarios/retail as it is, its target the scripted server (filled in per test)."""
    root = tmp_path_factory.mktemp("retail")
    shutil.copytree(RETAIL, root / "retail", ignore=shutil.ignore_patterns("cassettes"))
    return root / "retail"


def scenarist_verdict(suite: Path, server: FakeServer, scenario: str, calls: list[Call],
                      said: str, out: str) -> str:
    text = (suite / "scenarist.yaml").read_text()
    head, rest = text.split("targets:\n", 1)
    _, tail = rest.split("\ndefaults:", 1)
    target = (f"targets:\n  fake:\n    kind: openai\n    base_url: {server.url}\n"
              "    model: fake-model\n    timeout_ms: 10000\n    retry: {max_attempts: 1}\n")
    write(suite / "scenarist.yaml", head + target + "\ndefaults:" + tail.replace(
        "target: recorded", "target: fake"))
    server.script({"rules": [{"match": "", "replies": [
        {"tool_calls": [{"name": n, "arguments": a} for n, a in calls]} if calls else
        {"text": said}, {"text": said}]}], "default": [{"text": said}]})
    r = run_cli("run", ".", "-k", scenario, "--runs", "1", "--no-early-stop", "--out", out,
                cwd=suite)
    assert r.exit_code in (0, 1), r.output
    (run_dir,) = (suite / out).iterdir()
    (rec,) = records_of(run_dir)
    assert rec["scenario"] == scenario
    return str(rec["status"])


@pytest.mark.parametrize("case", range(len(TRAJECTORIES)),
                         ids=[f"{s.split('.')[1]}: {what}" for s, what, _, _ in TRAJECTORIES])
def test_scenarist_verdicts_equal_tau_benchs_reward(case: int, suite: Path,
                                                    server: FakeServer) -> None:
    scenario, _what, calls, said = TRAJECTORIES[case]
    _, actions, outputs = TASKS[scenario]
    tau = reward(load(RETAIL / "data"), calls, [said], actions, outputs)
    verdict = scenarist_verdict(suite, server, scenario, calls, said, f"runs-{case}")
    assert verdict == ("pass" if tau == 1.0 else "fail")


def test_the_trajectories_cover_every_scenario_both_ways() -> None:
    """Every scenario of scenarios/retail has a ground truth tau-bench rewards, a mistake it
    does not, and a trajectory with a refused call on the way that it still rewards."""
    fresh = load(RETAIL / "data")
    scenarios = {p.stem for p in RETAIL.glob("*.yaml")} - {"scenarist"}
    assert {s.split(".")[1] for s in TASKS} == scenarios
    for scenario, (_, actions, outputs) in TASKS.items():
        mine = [(what, reward(fresh, calls, [said], actions, outputs))
                for s, what, calls, said in TRAJECTORIES if s == scenario]
        assert ("ground truth", 1.0) in mine, scenario
        assert any(r == 0.0 for _, r in mine), scenario
        assert any("refused" in what and r == 1.0 for what, r in mine), scenario
