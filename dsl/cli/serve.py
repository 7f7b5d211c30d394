"""Commands that serve a suite on this machine: ``mcp`` (one scenario's fake tools over
MCP) and ``studio`` (the suite in a local web page)."""

from __future__ import annotations

import os
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
    to the scenario's world. Over HTTP the first line printed is the URL, with an
    unguessable path (http://127.0.0.1:PORT/mcp/TOKEN; every other path answers 404);
    with --stdio the protocol runs on standard input and output. Each call is printed as
    it happens (on standard error with --stdio): the tool, its arguments and its answer;
    a call held for confirmation is marked. Ctrl-C stops it.

    Exit status: 0 stopped, 2 invalid input."""
    # why: loaded when the command runs (every command's module loads at start)
    import asyncio

    from ..clients.mcpserve import NotServable, serve, served

    try:
        chosen, redactor = or_exit(lambda: served(scenario, case_id))
    except NotServable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)

    def say(line: str) -> None:
        click.echo(line, err=stdio)

    try:
        asyncio.run(serve(chosen, port, stdio, say, redactor))
    except KeyboardInterrupt:
        click.echo("Stopped.", err=True)
        sys.exit(EXIT_OK)
    except OSError as exc:
        click.echo(f"error: cannot serve on 127.0.0.1:{port}: {exc.strerror or exc}", err=True)
        sys.exit(EXIT_INPUT)


@main.command()
@click.argument("folder", metavar="[DIR]", required=False, default=".",
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0, metavar="N",
              help="The port to listen on, on 127.0.0.1 (default: a free one).")
@click.option("--no-open", is_flag=True, help="Do not open the address in a browser.")
def studio(folder: Path, port: int, no_open: bool) -> None:
    """Write, try and run the scenarios of the suite at DIR (default: the current folder)
    in your browser: a local page, on 127.0.0.1 only. The first line printed is its
    address, with a one-time code made anew at every start; Ctrl-C stops it.

    Needs the studio's extra: pip install 'scenarist[studio]'.

    Exit status: 0 stopped with Ctrl-C, 2 no suite at DIR, the extra is missing, or the
    port is taken."""
    try:
        # why: loaded when the command runs (every command's module loads at start)
        from ..studio.server import serve
        from ..studio.workspace import Refused, suite_root
    except ImportError as exc:
        # why: loaded when the command runs (every command's module loads at start)
        from ..studio import INSTALL

        missing = (exc.name or "a module").split(".")[0]
        click.echo(f"error: the studio needs Starlette and Uvicorn ({missing} is missing); "
                   f"install them with: {INSTALL}", err=True)
        sys.exit(EXIT_INPUT)
    try:
        root = suite_root(folder)
    except Refused as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    os.chdir(root)  # messages name files relative to the suite, as lint run there does
    try:
        serve(root, port, not no_open, click.echo)
    except OSError as exc:
        click.echo(f"error: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}",
                   err=True)
        sys.exit(EXIT_INPUT)
