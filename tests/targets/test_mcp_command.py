"""``scenarist mcp``: one scenario's fake tools served on their own, driven by the official
MCP client over HTTP and over standard input/output — and the server's refusals."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO, run_cli, suite_yaml, write

CASES = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - list_business_hours
    - set_business_hours
    - name: lookup
      description: Find a patient.
      input_schema: {type: object, properties: {dni: {type: string}}, required: [dni]}
      answers:
        - when: {dni: "{{ dni }}"}
          returns: {name: "{{ who }}"}
cases:
  - {id: ana, dni: "123", who: Ana}
  - {id: bo, dni: "456", who: Bo}
when: "Who is {{ dni }}?"
then: [non_empty]
"""


def scenario_suite(tmp_path: Path) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    write(tmp_path / "people.yaml", CASES)
    return tmp_path


def start(root: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    return subprocess.Popen([sys.executable, "-m", "dsl", "mcp", *args], cwd=root, env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


async def drive(url: str) -> tuple[list[str], Any, Any, str]:
    from mcp import Client

    async with Client(url) as client:
        tools = await client.list_tools()
        found = await client.call_tool("lookup", {"dni": "456"})
        held = await client.call_tool("set_business_hours",
                                      {"day": "monday", "hours": "closed"})
        try:
            await client.call_tool("nope", {})
            unknown = "answered"
        except Exception as exc:
            unknown = str(exc)
    return [t.name for t in tools.tools], found, held, unknown


def test_scenarist_mcp_over_http(tmp_path: Path) -> None:
    root = scenario_suite(tmp_path)
    proc = start(root, "people.yaml", "--case", "bo")
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:")
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/mcp/[A-Za-z0-9_-]{32}", url)
        names, found, held, unknown = asyncio.run(drive(url))
        assert names == ["list_business_hours", "set_business_hours", "lookup"]
        assert [b.text for b in found.content] == ['{"name": "Bo"}']
        assert held.content[0].text.startswith("This call needs the person's confirmation")
        assert unknown == ("error: there is no tool named 'nope'. The tools are: "
                           "list_business_hours, lookup, set_business_hours.")
        lines = [proc.stdout.readline().rstrip("\n") for _ in range(3)]
        assert lines == [
            'lookup({"dni": "456"}) -> {"name": "Bo"}',
            'set_business_hours({"day": "monday", "hours": "closed"}) held: awaits the '
            "person's confirmation",
            "nope({}) -> error: there is no tool named 'nope'. The tools are: "
            "list_business_hours, lookup, set_business_hours. [unknown-tool]",
        ]
        # DNS rebinding: a foreign Host or a web page's Origin is refused
        body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
        heads = {"Accept": "application/json, text/event-stream"}
        assert httpx.post(url, json=body, headers={**heads, "Host": "evil.example:80"}
                          ).status_code == 421
        assert httpx.post(url, json=body, headers={**heads, "Origin": "http://evil.example"}
                          ).status_code == 403
        assert httpx.post(url + "x", json=body, headers=heads).status_code == 404
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert err.strip().endswith("Stopped.")


def test_scenarist_mcp_over_stdio(tmp_path: Path) -> None:
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    root = scenario_suite(tmp_path)
    log = (tmp_path / "stderr.txt").open("w")

    async def go() -> tuple[list[str], str]:
        params = StdioServerParameters(
            command=sys.executable, args=["-m", "dsl", "mcp", "people.yaml", "--case", "ana",
                                          "--stdio"],
            cwd=str(root), env={**os.environ, "PYTHONPATH": str(REPO)})
        # errlog given: the SDK's default is the sys.stderr of when it was first imported
        async with Client(stdio_client(params, errlog=log)) as client:
            tools = await client.list_tools()
            result = await client.call_tool("lookup", {"dni": "123"})
        return [t.name for t in tools.tools], result.content[0].text

    names, text = asyncio.run(go())
    log.close()
    assert (tmp_path / "stderr.txt").read_text().splitlines() == [
        'lookup({"dni": "123"}) -> {"name": "Ana"}']
    assert names == ["list_business_hours", "set_business_hours", "lookup"]
    assert json.loads(text) == {"name": "Ana"}


@pytest.mark.parametrize(("args", "message"), [
    (("people.yaml",), "error: people.yaml holds 2 scenarios (people[ana], people[bo]); "
                       "choose one with --case ID\n"),
    (("people.yaml", "--case", "cy"), "error: people.yaml has no case 'cy' (its cases are: "
                                      "ana, bo)\n"),
])
def test_scenarist_mcp_needs_one_scenario(tmp_path: Path, args: tuple[str, ...],
                                          message: str) -> None:
    root = scenario_suite(tmp_path)
    result = run_cli("mcp", *args, cwd=root)
    assert result.exit_code == 2
    assert result.output == message


WORLD_SUITE = {
    "targets": {"fake": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}},
    "world": {"cards": [{"id": "CARD-01", "holder": "Ana", "pin": "4471", "blocked": False}]},
    "tools": {
        "list_cards": {"description": "The cards.", "table": "cards", "action": "read"},
        "block_card": {"description": "Block a card.", "table": "cards", "action": "update",
                       "input_schema": {"type": "object",
                                        "properties": {"id": {"type": "string"}},
                                        "required": ["id"]},
                       "where": {"id": "{{ args.id }}"}, "set": {"blocked": True},
                       "returns": "Card {{ args.id }} blocked."}},
}


def world_suite(tmp_path: Path) -> Path:
    write(tmp_path / "scenarist.yaml", json.dumps(WORLD_SUITE))
    write(tmp_path / "cards.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_cards, block_card]
when: "Block my card."
then: [non_empty]
""")
    return tmp_path


def _post(url: str, method: str, params: dict[str, Any] | None = None) -> httpx.Response:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, **({"params": params} if params
                                                             else {})}
    return httpx.post(url, json=body, timeout=10,
                      headers={"Accept": "application/json, text/event-stream"})


def test_scenarist_mcp_lets_no_other_local_client_in(tmp_path: Path) -> None:
    """A hostile local client that finds the port (without the printed URL) can neither
    list the tools nor read or change the world's rows: every other path answers 404."""
    proc = start(world_suite(tmp_path), "cards.yaml")
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        base = url[: url.index("/mcp/")]
        token = url.rsplit("/", 1)[1]
        for guess in (base + "/mcp", base + "/mcp/", base + "/", base + "/mcp/x" + token,
                      base + "/mcp/" + token[:-1], base + "/MCP/" + token):
            for method, params in (("tools/list", None),
                                   ("tools/call", {"name": "list_cards", "arguments": {}}),
                                   ("tools/call", {"name": "block_card",
                                                   "arguments": {"id": "CARD-01"}})):
                refused = _post(guess, method, params)
                assert refused.status_code == 404, (guess, refused.text)
                assert "4471" not in refused.text
                assert "list_cards" not in refused.text

        async def rows() -> str:
            from mcp import Client

            async with Client(url) as client:
                return str((await client.call_tool("list_cards", {})).content[0].text)

        seen = asyncio.run(rows())
        assert '"blocked": false' in seen  # nothing changed it
        assert proc.stdout.readline().startswith("list_cards({}) -> ")
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    assert err.strip() == "Stopped."


def test_what_a_client_sends_reaches_the_terminal_without_control_sequences(
        tmp_path: Path) -> None:
    """Tool names and arguments a client sends with terminal escape sequences (a window
    title, a screen clear, colours, an 8-bit CSI, a carriage return) are printed without
    them; a request that is not HTTP leaves no log line of uvicorn's."""
    root = scenario_suite(tmp_path)
    proc = start(root, "people.yaml", "--case", "bo")
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()
        port = int(url.split(":")[2].split("/")[0])
        with socket.create_connection(("127.0.0.1", port)) as raw:
            raw.sendall(b"\x16\x03\x01 this is not HTTP\r\n\r\n")
            raw.recv(1000)

        async def hostile() -> None:
            from mcp import Client

            async with Client(url) as client:
                await client.call_tool("lookup", {"dni": "\x1b[2J\x1b]0;pwned\x07\x9b31m456\r"})
                with contextlib.suppress(Exception):
                    await client.call_tool("\x1b[31mevil\x1b[0m\x1b]8;;http://x\x1b\\", {})

        asyncio.run(hostile())
        lines = [proc.stdout.readline().rstrip("\n") for _ in range(2)]
    finally:
        proc.send_signal(signal.SIGINT)
        _out, err = proc.communicate(timeout=20)
    printed = "\n".join(lines) + err
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f]", printed), repr(printed)
    args = '{"dni": "\\u001b[2J\\u001b]0;pwned\\u0007456\\r"}'  # JSON escapes: text
    assert lines == [
        f"lookup({args}) -> error: no record for these arguments: {args} [no-record]",
        "evil({}) -> error: there is no tool named 'evil'. The tools are: "
        "list_business_hours, lookup, set_business_hours. [unknown-tool]"]
    assert "Invalid HTTP request" not in err
    assert err.strip() == "Stopped."
