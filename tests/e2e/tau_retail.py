"""tau-bench's own reward for its retail domain, reimplemented for the tests only.

This is a re-implementation, from its source, of what tau-bench
(https://github.com/sierra-research/tau-bench, MIT licence, Copyright (c) 2024 Sierra)
does to score a trajectory: its retail tools' ``invoke`` (tau_bench/envs/retail/tools/*.py)
on its data, the hash of the data (``to_hashable`` and ``consistent_hash`` in
tau_bench/envs/base.py) and ``calculate_reward``: the data after the agent's actions must
hash as the data after the task's ground-truth actions, and each of the task's outputs
must be in some message the agent wrote (lower case, commas removed). It is used by
tests/e2e/test_retail_tau.py to check that Scenarist's verdicts on scenarios/retail equal
tau-bench's reward on the same trajectories; nothing outside the tests imports it.

The data is tau-bench's, read back from scenarios/retail/data (the rows Scenarist's
tables hold, in tau-bench's shape again).
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Sequence
from hashlib import sha256
from pathlib import Path
from typing import Any

Data = dict[str, Any]
TERMINATE = ("transfer_to_human_agents",)


def load(folder: Path) -> Data:
    """tau-bench's data (users, orders, products) from Scenarist's retail tables."""

    def rows(name: str) -> list[dict[str, Any]]:
        return [json.loads(x) for x in (folder / f"{name}.jsonl").read_text().splitlines()]

    methods: dict[str, dict[str, Any]] = {}
    for pm in rows("payment_methods"):
        owner = pm.pop("user_id")
        methods.setdefault(owner, {})[pm["id"]] = pm
    users = {u["id"]: {"name": u["name"], "address": u["address"], "email": u["email"],
                       "payment_methods": methods.get(u["id"], {}), "orders": u["orders"]}
             for u in rows("users")}
    orders = {}
    for o in rows("orders"):
        order = {"order_id": o["id"], "user_id": o["user_id"], "address": o["address"],
                 "items": o["items"], "fulfillments": o["fulfillments"], "status": o["status"],
                 "payment_history": o["payment_history"]}
        orders[o["id"]] = order
    products = {p["id"]: {"name": p["name"], "product_id": p["id"], "variants": p["variants"]}
                for p in rows("products")}
    return {"orders": orders, "products": products, "users": users}


# ---- tau_bench/envs/base.py ---------------------------------------------------------------


def to_hashable(item: Any) -> Any:
    if isinstance(item, dict):
        return tuple((key, to_hashable(value)) for key, value in sorted(item.items()))
    if isinstance(item, list):
        return tuple(to_hashable(element) for element in item)
    if isinstance(item, set):
        return tuple(sorted(to_hashable(element) for element in item))
    return item


def consistent_hash(value: Any) -> str:
    return sha256(str(value).encode("utf-8")).hexdigest()


# ---- tau_bench/envs/retail/tools/*.py: what changes the data ------------------------------


def cancel_pending_order(data: Data, order_id: str, reason: str) -> str:
    orders = data["orders"]
    if order_id not in orders:
        return "Error: order not found"
    order = orders[order_id]
    if order["status"] != "pending":
        return "Error: non-pending order cannot be cancelled"
    if reason not in ["no longer needed", "ordered by mistake"]:
        return "Error: invalid reason"
    refunds = []
    for payment in order["payment_history"]:
        payment_id = payment["payment_method_id"]
        refunds.append({"transaction_type": "refund", "amount": payment["amount"],
                        "payment_method_id": payment_id})
        if "gift_card" in payment_id:
            method = data["users"][order["user_id"]]["payment_methods"][payment_id]
            method["balance"] += payment["amount"]
            method["balance"] = round(method["balance"], 2)
    order["status"] = "cancelled"
    order["cancel_reason"] = reason
    order["payment_history"].extend(refunds)
    return json.dumps(order)


def _address(address1: str, address2: str, city: str, state: str, country: str,
             zip: str) -> dict[str, str]:
    return {"address1": address1, "address2": address2, "city": city, "state": state,
            "country": country, "zip": zip}


def modify_pending_order_address(data: Data, order_id: str, address1: str, address2: str,
                                 city: str, state: str, country: str, zip: str) -> str:
    orders = data["orders"]
    if order_id not in orders:
        return "Error: order not found"
    order = orders[order_id]
    if order["status"] != "pending":
        return "Error: non-pending order cannot be modified"
    order["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(order)


def modify_user_address(data: Data, user_id: str, address1: str, address2: str, city: str,
                        state: str, country: str, zip: str) -> str:
    users = data["users"]
    if user_id not in users:
        return "Error: user not found"
    users[user_id]["address"] = _address(address1, address2, city, state, country, zip)
    return json.dumps(users[user_id])


def _missing(order: dict[str, Any], item_ids: list[str]) -> str | None:
    all_item_ids = [item["item_id"] for item in order["items"]]
    for item_id in item_ids:
        if item_ids.count(item_id) > all_item_ids.count(item_id):
            return item_id
    return None


def modify_pending_order_items(data: Data, order_id: str, item_ids: list[str],
                               new_item_ids: list[str], payment_method_id: str) -> str:
    products, orders, users = data["products"], data["orders"], data["users"]
    if order_id not in orders:
        return "Error: order not found"
    order = orders[order_id]
    if order["status"] != "pending":
        return "Error: non-pending order cannot be modified"
    missing = _missing(order, item_ids)
    if missing is not None:
        return f"Error: {missing} not found"
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff_price = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = next(item for item in order["items"] if item["item_id"] == item_id)
        product_id = item["product_id"]
        if not (new_item_id in products[product_id]["variants"]
                and products[product_id]["variants"][new_item_id]["available"]):
            return f"Error: new item {new_item_id} not found or available"
        diff_price += products[product_id]["variants"][new_item_id]["price"] - item["price"]
    if payment_method_id not in users[order["user_id"]]["payment_methods"]:
        return "Error: payment method not found"
    method = users[order["user_id"]]["payment_methods"][payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff_price:
        return "Error: insufficient gift card balance to pay for the new item"
    order["payment_history"].append({
        "transaction_type": "payment" if diff_price > 0 else "refund",
        "amount": abs(diff_price), "payment_method_id": payment_method_id})
    if method["source"] == "gift_card":
        method["balance"] -= diff_price
        method["balance"] = round(method["balance"], 2)
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = next(item for item in order["items"] if item["item_id"] == item_id)
        variant = products[item["product_id"]]["variants"][new_item_id]
        item["item_id"] = new_item_id
        item["price"] = variant["price"]
        item["options"] = variant["options"]
    order["status"] = "pending (item modified)"
    return json.dumps(order)


def modify_pending_order_payment(data: Data, order_id: str, payment_method_id: str) -> str:
    orders = data["orders"]
    if order_id not in orders:
        return "Error: order not found"
    order = orders[order_id]
    if order["status"] != "pending":
        return "Error: non-pending order cannot be modified"
    methods = data["users"][order["user_id"]]["payment_methods"]
    if payment_method_id not in methods:
        return "Error: payment method not found"
    history = order["payment_history"]
    if len(history) > 1 or history[0]["transaction_type"] != "payment":
        return "Error: there should be exactly one payment for a pending order"
    if history[0]["payment_method_id"] == payment_method_id:
        return "Error: the new payment method should be different from the current one"
    amount = history[0]["amount"]
    method = methods[payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < amount:
        return "Error: insufficient gift card balance to pay for the order"
    history.extend([
        {"transaction_type": "payment", "amount": amount, "payment_method_id": payment_method_id},
        {"transaction_type": "refund", "amount": amount,
         "payment_method_id": history[0]["payment_method_id"]}])
    if method["source"] == "gift_card":
        method["balance"] -= amount
        method["balance"] = round(method["balance"], 2)
    if "gift_card" in history[0]["payment_method_id"]:
        old = methods[history[0]["payment_method_id"]]
        old["balance"] += amount
        old["balance"] = round(old["balance"], 2)
    return json.dumps(order)


def return_delivered_order_items(data: Data, order_id: str, item_ids: list[str],
                                 payment_method_id: str) -> str:
    orders = data["orders"]
    if order_id not in orders:
        return "Error: order not found"
    order = orders[order_id]
    if order["status"] != "delivered":
        return "Error: non-delivered order cannot be returned"
    if payment_method_id not in data["users"][order["user_id"]]["payment_methods"]:
        return "Error: payment method not found"
    if ("gift_card" not in payment_method_id
            and payment_method_id != order["payment_history"][0]["payment_method_id"]):
        return "Error: payment method should be either the original payment method or a gift card"
    if _missing(order, item_ids) is not None:
        return "Error: some item not found"
    order["status"] = "return requested"
    order["return_items"] = sorted(item_ids)
    order["return_payment_method_id"] = payment_method_id
    return json.dumps(order)


def exchange_delivered_order_items(data: Data, order_id: str, item_ids: list[str],
                                   new_item_ids: list[str], payment_method_id: str) -> str:
    products, orders, users = data["products"], data["orders"], data["users"]
    if order_id not in orders:
        return "Error: order not found"
    order = orders[order_id]
    if order["status"] != "delivered":
        return "Error: non-delivered order cannot be exchanged"
    missing = _missing(order, item_ids)
    if missing is not None:
        return f"Error: {missing} not found"
    if len(item_ids) != len(new_item_ids):
        return "Error: the number of items to be exchanged should match"
    diff_price = 0
    for item_id, new_item_id in zip(item_ids, new_item_ids, strict=True):
        item = next(item for item in order["items"] if item["item_id"] == item_id)
        product_id = item["product_id"]
        if not (new_item_id in products[product_id]["variants"]
                and products[product_id]["variants"][new_item_id]["available"]):
            return f"Error: new item {new_item_id} not found or available"
        diff_price += products[product_id]["variants"][new_item_id]["price"] - item["price"]
    diff_price = round(diff_price, 2)
    if payment_method_id not in users[order["user_id"]]["payment_methods"]:
        return "Error: payment method not found"
    method = users[order["user_id"]]["payment_methods"][payment_method_id]
    if method["source"] == "gift_card" and method["balance"] < diff_price:
        return "Error: insufficient gift card balance to pay for the price difference"
    order["status"] = "exchange requested"
    order["exchange_items"] = sorted(item_ids)
    order["exchange_new_items"] = sorted(new_item_ids)
    order["exchange_payment_method_id"] = payment_method_id
    order["exchange_price_difference"] = diff_price
    return json.dumps(order)


def _reads(data: Data, **kwargs: Any) -> str:
    return "read"  # the reads (and calculate, think, transfer) change nothing


WRITES: dict[str, Callable[..., str]] = {
    "cancel_pending_order": cancel_pending_order,
    "modify_pending_order_address": modify_pending_order_address,
    "modify_pending_order_items": modify_pending_order_items,
    "modify_pending_order_payment": modify_pending_order_payment,
    "modify_user_address": modify_user_address,
    "return_delivered_order_items": return_delivered_order_items,
    "exchange_delivered_order_items": exchange_delivered_order_items,
}


def step(data: Data, name: str, kwargs: dict[str, Any]) -> str:
    """``Env.step`` for a tool call: its answer; an exception is an ``Error: ...``."""
    tool = WRITES.get(name, _reads)
    try:
        return tool(data=data, **kwargs)
    except Exception as e:  # as tau-bench's env does
        return f"Error: {e}"


# ---- tau_bench/envs/base.py: calculate_reward ---------------------------------------------


def reward(fresh: Data, calls: Sequence[tuple[str, dict[str, Any]]],
           said: Sequence[str], actions: Sequence[tuple[str, dict[str, Any]]],
           outputs: Sequence[str]) -> float:
    """tau-bench's reward of a trajectory: ``calls`` the agent made in order (the episode
    ends at a transfer to a human), ``said`` what it wrote to the user; ``actions`` and
    ``outputs`` the task's ground truth."""
    data = copy.deepcopy(fresh)
    for name, kwargs in calls:
        step(data, name, kwargs)
        if name in TERMINATE:
            break
    data_hash = consistent_hash(to_hashable(data))
    expected = copy.deepcopy(fresh)
    for name, kwargs in actions:
        if name not in TERMINATE:
            step(expected, name, kwargs)
    result = 1.0 if data_hash == consistent_hash(to_hashable(expected)) else 0.0
    for output in outputs:
        if not any(output.lower() in text.lower().replace(",", "") for text in said):
            result = 0.0
    return result
