"""The commands of the history: ``runs list``, ``runs show`` and ``history import``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..exits import EXIT_HISTORY, EXIT_INPUT, EXIT_OK
from ..results.terminal import print_run, print_runs
from .common import main

if TYPE_CHECKING:
    from ..history import Location


def _history() -> Location:
    """The history the commands below use: SCENARIST_HISTORY, else history: in the
    scenarist.yaml of this folder or its parents, else its default."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline import history_here

    location, problem = history_here()
    if location is None:
        click.echo(f"error: {problem}", err=True)
        sys.exit(EXIT_INPUT)
    return location


@main.group()
def runs() -> None:
    """The runs the history remembers (docs/history.md)."""


@runs.command("list")
@click.option("--scenario", metavar="ID", help="Only runs that ran this scenario (and show "
              "its pass rate in each).")
@click.option("--target", "-t", metavar="T", help="Only runs against this target.")
@click.option("--limit", "-n", type=click.IntRange(min=1), default=20, show_default=True,
              help="How many runs, the latest first.")
@click.option("--json", "as_json", is_flag=True, help="Print the runs as JSON.")
def runs_list(scenario: str | None, target: str | None, limit: int, as_json: bool) -> None:
    """List the latest runs: when, the git commit, the targets, how many scenarios passed.

    Exit status: 0, 2 no history here, 4 the history could not be read."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..history import HistoryError, open_history

    location = _history()
    try:
        with open_history(location) as store:
            found = store.runs(scenario=scenario, target=target, limit=limit)
            rows = store.trends([(scenario, t.name) for e in found for t in e.targets],
                                limit=limit) if scenario else {}
    except HistoryError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_HISTORY)
    if as_json:
        # why: loaded when the command runs (every command's module loads at start)
        from ..history.views import run_json

        click.echo(json.dumps([run_json(e) for e in found], ensure_ascii=False, indent=2))
        return
    print_runs(found, location.shown, rows, scenario, target)


@runs.command("show")
@click.argument("run_id", metavar="ID")
@click.option("--json", "as_json", is_flag=True, help="Print the run as JSON.")
def runs_show(run_id: str, as_json: bool) -> None:
    """Show one run (ID, or the start of one): its targets and each scenario × target's
    verdict and pass rate with its 95% interval.

    Exit status: 0, 2 no such run (or no history here), 4 the history could not be
    read."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..history import HistoryError, open_history

    location = _history()
    try:
        with open_history(location) as store:
            entry = store.run(run_id)
    except HistoryError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_HISTORY)
    if entry is None:
        click.echo(f"error: the history {location.shown} has no run '{run_id}'; see "
                   "scenarist runs list", err=True)
        sys.exit(EXIT_INPUT)
    if as_json:
        # why: loaded when the command runs (every command's module loads at start)
        from ..history.views import run_json

        click.echo(json.dumps(run_json(entry), ensure_ascii=False, indent=2))
        return
    print_run(entry)


@main.group()
def history() -> None:
    """The history of runs: SQLite beside scenarist.yaml, or a shared PostgreSQL server
    (docs/history.md)."""


@history.command("import")
@click.argument("run_dirs", nargs=-1, required=True, metavar="RUNDIR...",
                type=click.Path(path_type=Path, file_okay=False, exists=True))
def history_import(run_dirs: tuple[Path, ...]) -> None:
    """Add run folders to the history (runs made before it existed, or while it could not
    be written). Importing a run twice replaces it.

    Exit status: 0 all imported, 2 a folder is not a run (the others are imported), 4 the
    history could not be written."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..history import HistoryError
    from ..pipeline import import_runs

    location = _history()
    try:
        done = import_runs(list(run_dirs), location)
    except HistoryError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_HISTORY)
    failed = [d for d in done if d.problem]
    for d in failed:
        click.echo(f"error: {d.run_dir} was not imported: {d.problem}", err=True)
    n = len(done) - len(failed)
    click.echo(f"Added {n} run{'s' if n != 1 else ''} to the history {location.shown}.")
    sys.exit(EXIT_INPUT if failed else EXIT_OK)


