"""The command editors start: ``lsp`` (Scenarist's lint, completion, hover and navigation
in any editor that speaks the Language Server Protocol; docs/editors.md)."""

from __future__ import annotations

import sys

import click

from ..exits import EXIT_INPUT
from .common import main


@main.command("lsp")
@click.option("--tcp", is_flag=True,
              help="Listen on 127.0.0.1 instead of standard input and output (to debug "
                   "the server from a client started apart).")
@click.option("--port", type=click.IntRange(1, 65535), default=2087, show_default=True,
              metavar="N", help="The port on 127.0.0.1, with --tcp.")
def lsp_(tcp: bool, port: int) -> None:
    """Serve Scenarist's language server on standard input and output, as editors start
    it: the diagnostics of `scenarist lint` as you type, completion, hover, go to
    definition, references, the outline and quick fixes, for the scenario files,
    scenarist.yaml and the cases and world files of every suite (the nearest
    scenarist.yaml, as lint finds it). Editors start it themselves (docs/editors.md).

    Exit status: 0 after the client's shutdown and exit, 1 when the client left without
    shutdown, 2 the port is taken."""
    # why: pygls and lsprotocol, only when the language server starts
    from ..lsp.server import serve

    try:
        code = serve(port if tcp else None)
    except OSError as exc:
        click.echo(f"error: cannot listen on 127.0.0.1:{port}: {exc.strerror or exc}",
                   err=True)
        sys.exit(EXIT_INPUT)
    sys.exit(code)
