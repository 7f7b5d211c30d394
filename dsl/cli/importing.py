"""``scenarist import``: recorded conversations in, scenario files out (docs/import.md)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, cast

import click

from ..exits import EXIT_INPUT, EXIT_OK
from .common import main, or_exit, shown_path

if TYPE_CHECKING:
    from ..importing import Format

FORMAT_CHOICES = ("openai", "otel", "scenarist")


@main.command("import")
@click.argument("paths", nargs=-1, required=True, metavar="PATH...",
                type=click.Path(path_type=Path))
@click.option("--format", "format_", type=click.Choice(FORMAT_CHOICES),
              help="The format of every PATH (default: read from each one's content): "
                   "openai (a gateway's JSON Lines of {request, response}), otel (an "
                   "OTLP/JSON trace export), scenarist (a run folder).")
@click.option("--into", type=click.Path(path_type=Path, file_okay=False), metavar="DIR",
              help="The folder that receives the scenarios (default: imported/ in the "
                   "current suite's folder). A file there is never replaced.")
@click.option("--world", is_flag=True,
              help="Rows with an id that read tools returned become a world table, and "
                   "those tools table tools, where that answers every logged call exactly.")
@click.option("--attempt", "attempts", multiple=True, metavar="SCENARIO@TARGET/RUN",
              help="With a run folder: the attempt to import (repeat for more; default: "
                   "every failed attempt).")
def import_(paths: tuple[Path, ...], format_: str | None, into: Path | None, world: bool,
            attempts: tuple[str, ...]) -> None:
    """Turn recorded conversations into scenarios: one file per conversation, with fake
    tools that answer what the real ones answered and "as logged" checks of what the agent
    did — so you only write what should have happened.

    PATH is an OpenAI gateway log (JSON Lines), an OTLP/JSON trace export with the GenAI
    semantic conventions, or a Scenarist run folder. Secrets are redacted before anything
    is written; what cannot be read is named (file:line, or the span) and the rest is
    imported. Exit codes: 0 scenarios written, 2 bad input or nothing to import
    (docs/import.md)."""
    # why: every command's module is imported at every start; the import's only when it runs
    from ..importing import (
        default_folder,
        import_conversations,
        parse_attempt,
    )

    parsed = []
    for text in attempts:
        a = parse_attempt(text)
        if a is None:
            raise click.BadParameter(f"'{text}' is not SCENARIO@TARGET/RUN (for example "
                                     "clinic.hours_today@local/3)", param_hint="'--attempt'")
        parsed.append(a)
    folder = into if into is not None else default_folder(Path.cwd())
    fmt = cast("Format | None", format_)  # one of FORMAT_CHOICES: click checked it
    result = or_exit(lambda: import_conversations(list(paths), folder, format=fmt,
                                                  world=world, attempts=parsed))
    for problem in result.problems:
        click.echo(_printable(str(problem)), err=True)
    for w in result.written:
        words = f"{_count(w.turns, 'turn')}, {_count(w.calls, 'tool call')}"
        click.echo(f"{_printable(str(shown_path(w.path.absolute())))}  {words}")
    n = len(result.written)
    where = shown_path(folder.absolute())
    if n:
        click.echo(f"{_count(n, 'scenario')} imported into {_printable(str(where))}/")
        sys.exit(EXIT_OK)
    click.echo("No scenario imported" + (": see the problems above" if result.problems
                                         else ": no conversation found"), err=True)
    sys.exit(EXIT_INPUT)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _printable(text: str) -> str:
    """Text from a log, safe on a terminal: control characters shown as escapes."""
    return "".join(ch if ch.isprintable() or ch in "\n" else f"\\x{ord(ch):02x}"
                   if ord(ch) < 0x100 else f"\\u{ord(ch):04x}" for ch in text)
