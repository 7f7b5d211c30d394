"""What every command shares: the ``scenarist`` group (:func:`main`), how a stage's refusal
is printed (:func:`or_exit`), the diagnostics' renderer, and the options several commands
take (run_options, the selection, the baseline)."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
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
        click.option("--out", type=click.Path(path_type=Path),
                     help="Folder that receives the run folder (default: runs/ beside the "
                          "suite's scenarist.yaml, wherever the command is started)."),
        click.option("--record", type=click.Path(path_type=Path), metavar="FILE",
                     help="Record every request and reply into a cassette, for a replay "
                          "target."),
    ]

    def apply(command: F) -> F:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def shown_path(path: Path) -> Path:
    """A folder a command wrote, as the terminal shows it: relative to the current folder
    when it is inside it (``pharmacy/runs/…``), else whole."""
    if not path.is_absolute():
        return path
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def finished_lines(run_dir: Path) -> str:
    """The last lines of a command that wrote a run folder: where it is, and its report."""
    shown = shown_path(run_dir)
    return f"Results in {shown}/\nReport: {shown / 'report.html'}"


def selection_of(tags: tuple[str, ...], patterns: tuple[str, ...]) -> Selection:
    # why: loaded when the command runs (every command's module loads at start)
    from ..compiler.discover import Selection

    for t in tags:
        if not t.strip("!").strip():
            raise click.BadParameter(f"'{t}' is not a tag", param_hint="'--tag'")
    return Selection(tuple(tags), tuple(patterns))


def parse_shard(value: str | None, env: Mapping[str, str] | None = None
                ) -> tuple[int, int] | None:
    """``--shard I/N``, or ``--shard auto`` / ``auto/N`` read from the environment (see
    :func:`shard_from_environment`; which variables it used is printed on stderr)."""
    if value is None:
        return None
    if value == "auto" or value.startswith("auto/"):
        count = None
        if value != "auto":
            try:
                count = int(value.removeprefix("auto/"))
            except ValueError:
                count = 0
            if count < 1:
                raise click.BadParameter(f"'{value}' is not auto/N with N a number of shards "
                                         "(for example auto/8)", param_hint="'--shard'")
        try:
            shard, source = shard_from_environment(os.environ if env is None else env, count)
        except ShardNotFound as exc:
            raise click.BadParameter(str(exc), param_hint="'--shard'") from None
        click.echo(f"Shard {shard[0]}/{shard[1]}, from {source}.", err=True)
        return shard
    try:
        i, n = (int(x) for x in value.split("/"))
    except ValueError:
        raise click.BadParameter(f"'{value}' is not I/N (for example 2/8) or auto") from None
    if not 1 <= i <= n:
        raise click.BadParameter(f"'{value}': I must be between 1 and N (for example 2/8)")
    return i, n


class ShardNotFound(Exception):
    """``--shard auto`` found no usable shard in the environment."""


# Where CI systems and Kubernetes say which of N parallel jobs this is, in the order they
# are asked: (who, the index's variable, the count's variable, the first index). The count
# of a Kubernetes Indexed Job is not in its environment: --shard auto/N gives it.
SHARD_SOURCES: tuple[tuple[str, str, str | None, int], ...] = (
    ("GitLab", "CI_NODE_INDEX", "CI_NODE_TOTAL", 1),
    ("CircleCI", "CIRCLE_NODE_INDEX", "CIRCLE_NODE_TOTAL", 0),
    ("Buildkite", "BUILDKITE_PARALLEL_JOB", "BUILDKITE_PARALLEL_JOB_COUNT", 0),
    ("a Kubernetes Indexed Job", "JOB_COMPLETION_INDEX", None, 0),
)
SHARD_ENV = "SCENARIST_SHARD"


def shard_from_environment(env: Mapping[str, str], count: int | None = None
                           ) -> tuple[tuple[int, int], str]:
    """The shard (I, N), counted from 1 as ``--shard I/N`` is, that this job is, and where
    it was read, in words. ``SCENARIST_SHARD=I/N`` first, then each of
    :data:`SHARD_SOURCES`; ``count`` (``--shard auto/N``) is the number of shards where
    the environment does not say it, and must agree where it does. ShardNotFound, with
    what to set, when there is none or a value cannot be read."""
    own = env.get(SHARD_ENV, "").strip()
    if own:
        try:
            i, n = (int(x) for x in own.split("/"))
        except ValueError:
            raise ShardNotFound(f"{SHARD_ENV}={own} is not I/N (for example 2/8)") from None
        return _shard(i, n, count, f"{SHARD_ENV}={own}")
    for who, index_var, count_var, first in SHARD_SOURCES:
        index_text = env.get(index_var, "").strip()
        if not index_text:
            continue
        total_text = env.get(count_var, "").strip() if count_var else ""
        said = f"{who}'s {index_var}={index_text}" + (
            f" and {count_var}={total_text}" if count_var and total_text else "")
        try:
            index = int(index_text)
        except ValueError:
            raise ShardNotFound(f"{index_var}={index_text} is not a number") from None
        if total_text:
            try:
                total = int(total_text)
            except ValueError:
                raise ShardNotFound(f"{count_var}={total_text} is not a number") from None
        elif count is not None:
            total = count
        else:
            missing = count_var or "the number of shards"
            raise ShardNotFound(f"{index_var}={index_text} says which shard this is but not "
                                f"how many there are ({missing} is not set): write "
                                "--shard auto/N with N the number of shards")
        return _shard(index - first + 1, total, count if total_text else None, said)
    known = ", ".join(f"{who} ({index_var}{', ' + count_var if count_var else ''})"
                      for who, index_var, count_var, _ in SHARD_SOURCES)
    raise ShardNotFound(f"--shard auto found no shard in the environment: set {SHARD_ENV}=I/N "
                        f"(for example 2/8), or run it where one is set: {known}; a "
                        "Kubernetes Indexed Job also needs --shard auto/N")


def _shard(i: int, n: int, count: int | None, said: str) -> tuple[tuple[int, int], str]:
    if count is not None and count != n:
        raise ShardNotFound(f"{said} says {n} shards, but --shard auto/{count} says {count}")
    if not 1 <= i <= n:
        raise ShardNotFound(f"{said} is shard {i} of {n}: outside 1 to {n}")
    return (i, n), said


def progress_hooks(quiet: bool) -> tuple[Hooks, Callable[[], None]]:
    """The run's hooks for the terminal (a progress line on stderr, messages as they come,
    Ctrl-C handled), and how to clear the progress line."""
    # why: loaded when the command runs (every command's module loads at start)
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
    # why: loaded when the command runs (every command's module loads at start)
    from ..results.baseline import load_summary

    return None if path is None else or_exit(lambda: load_summary(path))


