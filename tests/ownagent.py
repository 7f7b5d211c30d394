"""A scripted agent that runs its own loop, for the tests of ``kind: http`` and ``kind:
command``: it takes its tools over MCP with the official Python client, and does what the
person's words tell it (so each test writes its agent's behaviour in the scenario):

* ``CALL name {json}`` — call the tool ``name`` with these arguments (several may follow
  one another); the answer then says each result: ``name -> text``;
* ``HOLD name {json}`` — hold a call for confirmation itself (``pending``);
* ``MEMORY`` — answer with everything said before in this session;
* ``SLEEP n`` — wait n seconds before answering;
* ``LATE name`` — after answering, call ``name`` once more (the attempt has ended by then):
  what the endpoint said goes to the file ``$OWNAGENT_LOG``;
* ``CRASH`` (command only) — exit with status 3 after writing to standard error;
* ``GARBAGE`` (command only) — print a line that is not JSON;
* ``FAIL n`` (http only) — the first time a turn of a session is asked, make its calls,
  then answer HTTP n (a service that fell over after it acted); a turn sent again is
  answered as usual;
* ``STALL n`` (http only) — the first time a turn of a session is asked, make its calls,
  then wait n seconds before answering (longer than the target's timeout);
* ``DROP`` (http only) — the first time a turn of a session is asked, make its calls, then
  close the connection without answering.

On a confirm turn it answers ``confirmed: name -> output``; on a cancel turn ``cancelled:
name``. Every answer starts with ``[turn N at AT]``.

    python tests/ownagent.py serve [--port 0]   # HTTP: POST /chat; prints PORT <n>
    python tests/ownagent.py stdio              # one JSON line in, one out (kind: command)

The HTTP service checks ``Authorization: Bearer $AGENT_TOKEN`` (401 otherwise) and counts
sessions: a session id seen in an earlier attempt gets ``SESSION REUSED`` in its answer.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from typing import Any

from mcp import Client

DIRECTIVE = re.compile(r"(CALL|HOLD|LATE) (\w+)(?: (\{[^}]*\}))?")
MEMORY: dict[str, list[str]] = {}
LATE_TASKS: set[asyncio.Future[None]] = set()


async def think(turn: dict[str, Any], tools_url: str, session: str) -> dict[str, Any]:
    message = turn.get("message") or ""
    head = f"[turn {turn.get('turn')} at {turn.get('at') or os.environ.get('SCENARIST_AT')}]"
    said: list[str] = []
    pending: list[dict[str, Any]] = []
    late: list[str] = []
    for c in turn.get("confirmed") or []:
        said.append(f"confirmed: {c['name']} -> {c['output']}")
    for c in turn.get("cancelled") or []:
        said.append(f"cancelled: {c['name']}")
    calls = [(m.group(1), m.group(2), json.loads(m.group(3) or "{}"))
             for m in DIRECTIVE.finditer(message)]
    if any(kind == "CALL" for kind, _, _ in calls):
        async with Client(tools_url) as client:
            for kind, name, args in calls:
                if kind != "CALL":
                    continue
                try:
                    result = await client.call_tool(name, args)
                    text = " ".join(getattr(b, "text", "") for b in result.content)
                    said.append(f"{name} -> {text}")
                except Exception as exc:
                    said.append(f"{name} failed: {exc}")
    for kind, name, args in calls:
        if kind == "HOLD":
            pending.append({"name": name, "args": args})
        elif kind == "LATE":
            late.append(name)
    sleep = re.search(r"SLEEP (\d+)", message)
    if sleep:
        await asyncio.sleep(int(sleep.group(1)))
    if "MEMORY" in message:
        said.append("before: " + " | ".join(MEMORY.get(session, [])))
    MEMORY.setdefault(session, []).append(message)
    if late:
        LATE_TASKS.add(asyncio.ensure_future(_late(tools_url, late)))
    return {"answer": " ".join([head, *said]) if said else f"{head} OK", "pending": pending}


async def _late(tools_url: str, names: list[str]) -> None:
    await asyncio.sleep(1.0)
    outcome = []
    for name in names:
        try:
            async with Client(tools_url) as client:
                await client.call_tool(name, {})
            outcome.append(f"{name}: answered")
        except BaseException as exc:  # the endpoint refuses: the attempt has ended
            outcome.append(f"{name}: refused ({_reason(exc)})")
    with open(os.environ["OWNAGENT_LOG"], "a", encoding="utf-8") as f:
        f.write("\n".join(outcome) + "\n")


def _reason(exc: BaseException) -> str:
    """What refused the call, the HTTP status included when there was one."""
    inner = getattr(exc, "exceptions", None)
    while inner:
        exc = inner[0]
        inner = getattr(exc, "exceptions", None)
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:300]


# ---- kind: command -------------------------------------------------------------------------

async def stdio() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    url = os.environ["SCENARIST_MCP_URL"]
    session = os.environ["SCENARIST_SESSION"]
    print(f"agent started for {os.environ['SCENARIST_SCENARIO']} seed "
          f"{os.environ['SCENARIST_SEED']}", file=sys.stderr, flush=True)
    while line := await reader.readline():
        turn = json.loads(line)
        if "CRASH" in turn["message"]:
            print("the agent fell over", file=sys.stderr, flush=True)
            sys.exit(3)
        if "GARBAGE" in turn["message"]:
            print("this is not json", flush=True)
            continue
        answer = await think(turn, url, session)
        print(json.dumps(answer), flush=True)
    await asyncio.sleep(0)


# ---- kind: http ------------------------------------------------------------------------------

SEEN: set[str] = set()
OWNED: dict[str, str] = {}  # session -> the first turn's message


async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode().split("\r\n")
            headers = {k.lower(): v.strip() for k, _, v in
                       (line.partition(":") for line in lines[1:] if line)}
            body = await reader.readexactly(int(headers.get("content-length", "0")))
            status, reply = await answer(lines[0], headers, body)
            if status == 0:  # DROP: close without a word
                return
            data = json.dumps(reply).encode()
            writer.write(f"HTTP/1.1 {status} X\r\nContent-Type: application/json\r\n"
                         f"Content-Length: {len(data)}\r\n\r\n".encode() + data)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


async def answer(request_line: str, headers: dict[str, str], body: bytes
                 ) -> tuple[int, Any]:
    if request_line.startswith("GET /_requests"):
        return 200, REQUESTS
    if headers.get("authorization") != f"Bearer {os.environ['AGENT_TOKEN']}":
        return 401, {"error": "bad token"}
    data = json.loads(body)
    REQUESTS.append(data)
    session = data["session"]
    turn = {"turn": data.get("turn"), "message": data.get("message"), "at": data.get("now"),
            "confirmed": data.get("confirmed"), "cancelled": data.get("cancelled")}
    reused = data.get("turn") == 1 and session in SEEN
    SEEN.add(session)
    out = await think(turn, data["tools_url"], session)
    first = (session, data.get("turn")) not in ASKED
    ASKED.add((session, data.get("turn")))
    message = data.get("message") or ""
    if first and (failing := re.search(r"FAIL (\d+)", message)):
        return int(failing.group(1)), {"error": "the agent fell over after it acted"}
    if first and (stalling := re.search(r"STALL (\d+)", message)):
        await asyncio.sleep(int(stalling.group(1)))
    if first and "DROP" in message:
        return 0, None
    if reused:
        out["answer"] += " SESSION REUSED"
    return 200, {"reply": {"text": out["answer"]}, "held": out["pending"]}


REQUESTS: list[Any] = []
ASKED: set[tuple[str, Any]] = set()  # (session, turn) asked before: FAIL, STALL and DROP once


async def serve(port: int) -> None:
    server = await asyncio.start_server(handle, "127.0.0.1", port)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    if sys.argv[1] == "serve":
        asyncio.run(serve(int(sys.argv[3]) if len(sys.argv) > 3 else 0))
    else:
        asyncio.run(stdio())
