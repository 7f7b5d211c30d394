"""What every command shares: the ``scenarist`` group (:func:`main`), how a stage's refusal
is printed (:func:`or_exit`), the diagnostics' renderer, and the options several commands
take (run_options, the selection, the baseline)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from .. import __version__
from ..errors import Diagnostic, InputError, NotReady, RunDirError, best_per_place, render
from ..exits import EXIT_INPUT
from ..results.terminal import ProgressLine, use_color

if TYPE_CHECKING:
    from ..compiler.discover import Selection
    from ..pipeline import Hooks
    from ..store import Summary

T = TypeVar("T")


def print_diagnostics(diagnostics: Iterable[Diagnostic], sources: dict[str, list[str]],
                      *, err: bool = True) -> None:
    color = use_color(sys.stderr if err else sys.stdout)
    for d in best_per_place(diagnostics):
        click.echo(render(d, sources.get(d.span.file), color=color), err=err)


def read_sources(diagnostics: Sequence[Diagnostic]) -> dict[str, list[str]]:
    from ..source.load import source_lines  # regular files only, capped: never a FIFO or a device

    out: dict[str, list[str]] = {}
    for d in diagnostics:
        f = d.span.file
        if f not in out and not f.startswith("<"):
            out[f] = source_lines(Path(f))
    return out


def or_exit(make: Callable[[], T], done: Callable[[], None] = lambda: None) -> T:
    """``make()`` — a stage that may refuse before anything is sent: the files'
    diagnostics (InputError), or what the environment or the run folder lacks (NotReady,
    RunDirError) are printed and the command exits with 2. ``done`` ends the progress line
    first, whichever way it went."""
    try:
        result = make()
    except InputError as exc:
        done()
        print_diagnostics(exc.diagnostics, read_sources(exc.diagnostics))
        sys.exit(EXIT_INPUT)
    except (NotReady, RunDirError) as exc:
        done()
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    done()
    return result


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scenarist")
def main() -> None:
    """Scenarist tests LLM agents with scenarios written in YAML.

    Given a moment and some fake tools, when someone says something, then the agent
    should do this and not that — tried N times, with a minimum that must pass.
    """


PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))
BASELINE = click.option(
    "--baseline", type=click.Path(path_type=Path, exists=True), metavar="RUNDIR",
    help="Compare with an earlier run (its folder, or its summary.json): regressions, "
         "improvements and the change in pass rate (kept in summary.json).")
FAIL_ON_REGRESSION = click.option(
    "--fail-on-regression", is_flag=True,
    help="Exit 1 when any scenario regressed: passed before and fails now, by more than "
         "chance (against --baseline, and between --compare targets).")


TAGS = click.option(
    "--tag", "tags", multiple=True, metavar="TAG",
    help="Only scenarios with this tag (repeat: any of them); --tag '!TAG' leaves out those "
         "with TAG.")
PATTERN = click.option(
    "-k", "patterns", multiple=True, metavar="PATTERN",
    help="Only scenarios whose id contains PATTERN, or matches it as a glob ('clinic.*', "
         "'*[es]'); upper or lower case alike.")


F = TypeVar("F", bound=Callable[..., Any])


def run_options(runs_help: str) -> Callable[[F], F]:
    """The options of every command that runs scenarios into a run folder (``run``,
    ``conformance``): --runs (its help in the command's words), --concurrency, --out and
    --record."""
    options = [
        click.option("--runs", type=click.IntRange(min=1), help=runs_help),
        click.option("--concurrency", "-j", type=click.IntRange(min=1),
                     help="Attempts in flight at once (default: the suite's "
                          "defaults.concurrency)."),
        click.option("--out", type=click.Path(path_type=Path), default=Path("runs"),
                     show_default=True, help="Folder that receives the run folder."),
        click.option("--record", type=click.Path(path_type=Path), metavar="FILE",
                     help="Record every request and reply into a cassette, for a replay "
                          "target."),
    ]

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def selection_of(tags: tuple[str, ...], patterns: tuple[str, ...]) -> Selection:
    from ..compiler.discover import Selection

    for t in tags:
        if not t.strip("!").strip():
            raise click.BadParameter(f"'{t}' is not a tag", param_hint="'--tag'")
    return Selection(tuple(tags), tuple(patterns))


def parse_shard(value: str | None) -> tuple[int, int] | None:
    if value is None:
        return None
    try:
        i, n = (int(x) for x in value.split("/"))
    except ValueError:
        raise click.BadParameter(f"'{value}' is not I/N (for example 2/8)") from None
    if not 1 <= i <= n:
        raise click.BadParameter(f"'{value}': I must be between 1 and N (for example 2/8)")
    return i, n


def progress_hooks(quiet: bool) -> tuple[Hooks, Callable[[], None]]:
    """The run's hooks for the terminal (a progress line on stderr, messages as they come,
    Ctrl-C handled), and how to clear the progress line."""
    from ..pipeline import Hooks

    progress = ProgressLine(0, enabled=False)

    def started(todo: int) -> None:
        nonlocal progress
        progress = ProgressLine(todo, enabled=not quiet and sys.stderr.isatty())

    def notify(message: str) -> None:
        progress.done()
        click.echo(message, err=True)

    hooks = Hooks(on_attempt=lambda rec, totals: progress.update(rec, totals),
                  notify=notify, handle_signals=True, started=started)
    return hooks, lambda: progress.done()


def load_baseline(path: Path | None) -> Summary | None:
    from ..results.baseline import load_summary

    return None if path is None else or_exit(lambda: load_summary(path))


