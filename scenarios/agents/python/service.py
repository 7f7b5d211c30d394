"""An agent service built on the OpenAI Agents SDK, as a team would ship it — tested by
Scenarist as a ``kind: http`` target (scenarios/agents/scenarist.yaml, target ``service``).

It answers ``POST /chat`` with ``{"answer": TEXT}``. Each request says what the person
said (``message``), the conversation's id (``session``: the service remembers each one),
where this conversation's tools are (``tools_url``, an MCP server: in a test, Scenarist's
fake tools) and what the person decided about calls that waited for their confirmation
(``confirmed``, ``cancelled``). The model is any OpenAI-compatible endpoint:

    AGENT_MODEL_URL=http://127.0.0.1:8088/v1 AGENT_MODEL=qwen2.5-coder-0.5b \\
    AGENT_TOKEN=secret python service.py --port 8000

Requests must carry ``Authorization: Bearer $AGENT_TOKEN``. It prints ``PORT <n>`` once it
listens.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
from typing import Any

import uvicorn
from agents import (
    Agent,
    OpenAIChatCompletionsModel,
    Runner,
    SQLiteSession,
    set_tracing_disabled,
)
from agents.mcp import MCPServerStreamableHttp
from openai import AsyncOpenAI
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

set_tracing_disabled(True)  # nothing leaves this machine but the model's requests

INSTRUCTIONS = """You are the assistant of Clínica Sonrisa, a dental clinic.
Answer briefly, in the language the person writes in.
Use the tools to look facts up; never invent opening hours or appointments.
Some tools need the person's confirmation: when a tool says so, ask the person to confirm.
Current date and time: {now}."""

SESSIONS: dict[str, SQLiteSession] = {}
model = OpenAIChatCompletionsModel(
    model=os.environ.get("AGENT_MODEL", "qwen2.5-coder-0.5b"),
    openai_client=AsyncOpenAI(base_url=os.environ.get("AGENT_MODEL_URL",
                                                      "http://127.0.0.1:8088/v1"),
                              api_key=os.environ.get("AGENT_MODEL_KEY", "none")))


def what_to_say(data: dict[str, Any]) -> str:
    """The person's turn as the agent reads it: their words, or what they decided."""
    notes = [f"(I confirmed {c['name']} {json.dumps(c['args'])}; it ran: {c['output']})"
             for c in data.get("confirmed") or []]
    notes += [f"(I cancelled {c['name']} {json.dumps(c['args'])}.)"
              for c in data.get("cancelled") or []]
    return " ".join([*notes, data.get("message") or ""]).strip()


async def chat(request: Request) -> JSONResponse:
    if request.headers.get("authorization") != f"Bearer {os.environ['AGENT_TOKEN']}":
        return JSONResponse({"error": "unauthorized"}, status_code=401)
    data = await request.json()
    session = SESSIONS.setdefault(data["session"], SQLiteSession(data["session"]))
    tools = MCPServerStreamableHttp({"url": data["tools_url"]}, cache_tools_list=False,
                                    client_session_timeout_seconds=30)
    async with tools:
        agent = Agent(name="clinic", model=model, mcp_servers=[tools],
                      instructions=INSTRUCTIONS.format(now=data.get("now", "")))
        result = await Runner.run(agent, what_to_say(data), session=session, max_turns=6)
    return JSONResponse({"answer": str(result.final_output)})


app = Starlette(routes=[Route("/chat", chat, methods=["POST"])])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, default=8000)
    port = parser.parse_args().port
    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
    asyncio.run(server.serve(sockets=[sock]))


if __name__ == "__main__":
    main()
