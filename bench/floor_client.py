"""The floor: the run workload written by hand with asyncio and aiohttp, no framework.

The same two-request tool loop as ``bench/run_bench.py`` writes for Scenarist (the model is
asked with the ``lookup_order`` tool; the tool's call is answered with the same JSON the
suite's fake tool returns; the model answers), the same check (the tool was called with the
order's number, the answer contains "shipped"), ``--scenarios`` × ``--runs`` attempts,
``--concurrency`` at once, one aiohttp session (keep-alive, at most ``--concurrency``
connections). What Scenarist does more (loading files, records, summary, report) is what
the ratio ``scenarist / floor`` measures. Prints one JSON line: attempts, passes, failures.

    python bench/floor_client.py --url http://127.0.0.1:PORT/v1 [--scenarios 100]
                                 [--runs 5] [--concurrency 16]

aiohttp is a test dependency (``pip install -e '.[test]'``), never Scenarist's.
"""

from __future__ import annotations

import argparse
import asyncio
import json

import aiohttp

TOOLS = [{"type": "function", "function": {
    "name": "lookup_order", "description": "Look an order up by its number.",
    "parameters": {"type": "object", "properties": {"order": {"type": "string"}},
                   "required": ["order"]}}}]


async def attempt(session: aiohttp.ClientSession, url: str, order: str) -> bool:
    messages: list[dict[str, object]] = [
        {"role": "user", "content": f"Where is my order {order}?"}]
    async with session.post(url, json={"model": "bench", "messages": messages,
                                       "tools": TOOLS}) as r:
        first = await r.json()
    message = first["choices"][0]["message"]
    calls = message.get("tool_calls") or []
    called = any(c["function"]["name"] == "lookup_order"
                 and json.loads(c["function"]["arguments"]).get("order") == order
                 for c in calls)
    messages.append(message)
    for c in calls:
        args = json.loads(c["function"]["arguments"])
        messages.append({"role": "tool", "tool_call_id": c["id"], "content": json.dumps(
            {"order": args.get("order"), "status": "shipped", "eta": "2026-10-02"})})
    async with session.post(url, json={"model": "bench", "messages": messages,
                                       "tools": TOOLS}) as r:
        second = await r.json()
    answer = second["choices"][0]["message"].get("content") or ""
    return called and "shipped" in answer


async def main_async(url: str, scenarios: int, runs: int, concurrency: int) -> dict[str, int]:
    gate = asyncio.Semaphore(concurrency)
    connector = aiohttp.TCPConnector(limit=concurrency)
    async with aiohttp.ClientSession(connector=connector) as session:
        async def one(order: str) -> bool:
            async with gate:
                return await attempt(session, url + "/chat/completions", order)

        results = await asyncio.gather(*(one(str(1000 + i)) for i in range(scenarios)
                                         for _ in range(runs)))
    return {"attempts": len(results), "passes": sum(results),
            "failures": len(results) - sum(results)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--url", required=True, help="the server's base URL, ending in /v1")
    ap.add_argument("--scenarios", type=int, default=100)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--concurrency", type=int, default=16)
    a = ap.parse_args()
    print(json.dumps(asyncio.run(main_async(a.url, a.scenarios, a.runs, a.concurrency))))


if __name__ == "__main__":
    main()
