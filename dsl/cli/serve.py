"""Commands that serve a suite on this machine: ``mcp`` (one scenario's fake tools over
MCP) and ``studio`` (the suite in a local web page)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..exits import EXIT_INPUT, EXIT_OK
from .common import main, or_exit


@main.command("mcp")
@click.argument("scenario", metavar="SCENARIO",
                type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--case", "case_id", metavar="ID", help="Which case of the scenario's cases.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="The port on 127.0.0.1 (0: one the system picks).")
@click.option("--stdio", is_flag=True,
              help="Speak MCP over standard input and output instead of HTTP.")
def mcp_(scenario: Path, case_id: str | None, port: int, stdio: bool) -> None:
    """Serve SCENARIO's fake tools over MCP, for wiring an agent, an IDE or a desktop app
    to the scenario's world. Over HTTP the first line printed is the URL
    (http://127.0.0.1:PORT/mcp); with --stdio the protocol runs on standard input and
    output. Each call is printed as it happens (on standard error with --stdio): the
    tool, its arguments and its answer; a call held for confirmation is marked. Ctrl-C
    stops it.

    Exit status: 0 stopped, 2 invalid input."""
    import asyncio

    from ..targets.mcpserve import NotServable, scenario_of, serve

    try:
        chosen = or_exit(lambda: scenario_of(scenario, case_id))
    except NotServable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)

    def say(line: str) -> None:
        click.echo(line, err=stdio)

    try:
        asyncio.run(serve(chosen, port, stdio, say))
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
        sys.exit(EXIT_OK)
    except OSError as exc:
        click.echo(f"error: cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)
