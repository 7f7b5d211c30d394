"""``scenarist mcp SCENARIO [--case ID] [--port N] [--stdio]``: one scenario's fake tools
served on their own (dsl/clients/toolserver.py), for a developer wiring an agent, an IDE or
a desktop app to the scenario's world. The click command (dsl/cli.py) parses its options
and calls :func:`scenario_of` and :func:`serve`."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from ..compiler.compile import compile_paths
from ..compiler.redact import Redactor, redactor_for
from ..errors import InputError, on_terminal
from ..model import Call, Scenario
from .toolserver import PATH, Endpoint, ToolServer, mcp_server


class NotServable(Exception):
    """The file holds no one scenario to serve (a sentence for the person)."""


def scenario_of(path: Path, case: str | None) -> Scenario:
    """The one scenario of ``path`` (with ``case``: that case's), compiled against its
    suite. Raises InputError for the files, NotServable for a choice to make."""
    return served(path, case)[0]


def served(path: Path, case: str | None) -> tuple[Scenario, Redactor]:
    """The one scenario of ``path`` (:func:`scenario_of`) and its suite's redaction: what
    ``scenarist mcp`` prints of a call is redacted as a run's files are."""
    compiled = compile_paths([path])
    errors = [d for d in compiled.diagnostics if d.severity == "error"]
    if errors:
        raise InputError(errors)
    scenarios = list(compiled.scenarios)
    if case is not None:
        chosen = [s for s in scenarios if s.id.endswith(f"[{case}]")]
        if not chosen:
            cases = [s.id[s.id.rfind("[") + 1:-1] for s in scenarios if s.id.endswith("]")]
            have = f"its cases are: {', '.join(cases)}" if cases else "it has no cases"
            raise NotServable(f"{path} has no case '{case}' ({have})")
        scenarios = chosen
    if len(scenarios) != 1:
        ids = ", ".join(s.id for s in scenarios)
        raise NotServable(f"{path} holds {len(scenarios)} scenarios ({ids}); choose one with "
                          "--case ID")
    suite = compiled.suite
    redactor = redactor_for(suite.redact, suite.targets.values()) if suite is not None \
        else redactor_for(None, ())
    return scenarios[0], redactor


def shown_call(call: Call, redact: Callable[[Any], Any] | None = None) -> str:
    """One line for a call, as ``scenarist mcp`` prints it: what the client sent (the
    tool's name, its arguments) and the answer, redacted (``redact``: the suite's
    ``Redactor.value``) and stripped of terminal control sequences."""
    if redact is not None:
        call = msgspec.structs.replace(call, args=redact(call.args),
                                       output=redact(call.output), name=redact(call.name))
    args = json.dumps(call.args, ensure_ascii=False)
    name = " ".join(call.name.split())
    if call.pending:
        return on_terminal(f"{name}({args}) held: awaits the person's confirmation")
    answer = " ".join((call.output or "").split())
    answer = answer if len(answer) <= 200 else answer[:200] + "…"
    mark = f" [{call.error}]" if call.error else ""
    return on_terminal(f"{name}({args}) -> {answer}{mark}")


async def serve(scenario: Scenario, port: int, stdio: bool,
                say: Callable[[str], None], redactor: Redactor | None = None) -> None:
    """``scenarist mcp``: serve ``scenario``'s fake tools until cancelled — over HTTP at
    an unguessable path, ``http://127.0.0.1:PORT/mcp/<token>`` (``say`` gets that URL
    first; every other path answers 404, so another local process can neither list the
    tools nor read or change the world's rows), or over standard input and output. ``say``
    gets each call as it happens, redacted by ``redactor``."""
    redact = redactor.value if redactor is not None and redactor.patterns else None

    def on_call(call: Call) -> None:
        say(shown_call(call, redact))

    if stdio:
        # why: the MCP SDK, for own-loop agents only
        from mcp.server.stdio import stdio_server

        endpoint = Endpoint(scenario, PATH, "stdio", on_call)
        server = mcp_server(lambda ctx: endpoint)
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())
        return
    tools = ToolServer(port)
    await tools.start()
    endpoint = tools.endpoint(scenario, on_call=on_call)
    say(endpoint.url)
    try:
        await asyncio.Event().wait()
    finally:
        await tools.aclose()
