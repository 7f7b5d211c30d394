"""The ``scenarist`` command.

Exit codes (docs/cli.md):

* 0 — every scenario met its ``min_pass`` (``lint``: no errors);
* 1 — a scenario failed (``lint``: errors were found);
* 2 — invalid input or usage: the diagnostics are printed, nothing was run;
* 3 — endpoint errors left a scenario without a verdict (e.g. the endpoint could not be
  reached at all);
* 130 — interrupted with Ctrl-C (what completed is kept and reported).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import click

from . import __version__
from .errors import Diagnostic, InputError, RunDirError, best_per_place, render
from .terminal import Progress, print_summary, use_color

EXIT_OK, EXIT_FAILED, EXIT_INPUT, EXIT_ENDPOINT, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def print_diagnostics(diagnostics: Iterable[Diagnostic], sources: dict[str, list[str]],
                      *, err: bool = True) -> None:
    color = use_color(sys.stderr if err else sys.stdout)
    for d in best_per_place(diagnostics):
        click.echo(render(d, sources.get(d.span.file), color=color), err=err)


def _sources(compiled: Any) -> dict[str, list[str]]:
    out = {name: doc.lines for name, doc in compiled.documents.items()}
    if compiled.suite is not None and compiled.suite.doc is not None:
        out[compiled.suite.file] = compiled.suite.doc.lines
    return out


def _read_sources(diagnostics: Sequence[Diagnostic]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for d in diagnostics:
        f = d.span.file
        if f not in out and not f.startswith("<"):
            try:
                out[f] = Path(f).read_text("utf-8", errors="replace").splitlines()
            except OSError:
                out[f] = []
    return out


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="scenarist")
def main() -> None:
    """Scenarist tests LLM agents with scenarios written in YAML.

    Given a moment and some fake tools, when someone says something, then the agent
    should do this and not that — tried N times, with a minimum that must pass.
    """


PATHS = click.argument("paths", nargs=-1, type=click.Path(path_type=Path))


@main.command()
@PATHS
@click.option("--target", "-t", "targets", multiple=True, metavar="NAME",
              help="Target to run against (default: the suite's defaults.target).")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per scenario (overrides the "
              "files; min_pass is scaled to match).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1),
              help="Attempts in flight at once (default: the suite's defaults.concurrency).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="Folder that receives the run folder.")
@click.option("--record", type=click.Path(path_type=Path), metavar="FILE",
              help="Record every request and reply into a cassette for a replay target.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failing scenarios and totals.")
def run(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
        concurrency: int | None, out: Path, record: Path | None, quiet: bool) -> None:
    """Run the scenarios in PATHS (files or folders; default: the current folder)."""
    from .compile import build_plan

    paths = paths or (Path("."),)
    try:
        plan, _ = build_plan(paths, targets=targets, runs=runs, concurrency=concurrency)
    except InputError as exc:
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
        sys.exit(EXIT_INPUT)
    if record is not None and len(plan.targets) != 1:
        raise click.UsageError("--record records one target; choose it with --target NAME")
    missing = [t for t in plan.targets
               if t.kind == "openai" and t.api_key_env and not os.environ.get(t.api_key_env)]
    for t in missing:
        click.echo(f"error: the target '{t.name}' reads its API key from the environment "
                   f"variable {t.api_key_env}, which is not set", err=True)
    if missing:
        sys.exit(EXIT_INPUT)
    sys.exit(_run_plan(plan, out, record, quiet))


def _run_plan(plan: Any, out: Path, record: Path | None, quiet: bool) -> int:
    import asyncio

    from .report import write_report
    from .run import RunOptions, execute, run_info
    from .store import PLAN, RUN, SUMMARY, create_run_dir, plan_json, write_json
    from .summarize import exit_code, summarize_dir

    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    run_dir = create_run_dir(out)
    info = run_info(plan, run_dir.name, started, sys.argv[1:])
    write_json(run_dir / RUN, info)
    write_json(run_dir / PLAN, plan_json(plan))
    progress = Progress(plan.attempts, enabled=not quiet and sys.stderr.isatty())
    interrupted = False
    state = None
    try:
        state = asyncio.run(execute(plan, run_dir, RunOptions(plan.concurrency, record),
                                    progress.update))
    except InputError as exc:
        progress.done()
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
        return EXIT_INPUT
    except KeyboardInterrupt:
        interrupted = True
    progress.done()
    info.update(finished_at=dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
                duration_s=round(time.perf_counter() - t0, 3), interrupted=interrupted)
    if state is not None and state.down:
        info["targets_down"] = state.down
    write_json(run_dir / RUN, info)
    summary = summarize_dir(run_dir)
    write_json(run_dir / SUMMARY, summary)
    write_report(run_dir, summary=summary)
    print_summary(summary, quiet=quiet)
    if state is not None:
        for name, why in state.down.items():
            click.echo(f"target '{name}' was given up on: {why}", err=True)
    click.echo(f"\nReport: {run_dir / 'report.html'}")
    if interrupted:
        click.echo("Interrupted: the summary and report cover the attempts that completed.",
                   err=True)
        return EXIT_INTERRUPTED
    return exit_code(summary)


@main.command()
@PATHS
@click.option("--target", "-t", "targets", multiple=True, metavar="NAME",
              help="Target(s) to plan for (default: the suite's default).")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per scenario.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
def plan(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
         as_json: bool) -> None:
    """Show what a run would do: scenarios × targets × runs, and the most model calls."""
    from .compile import build_plan
    from .store import plan_json

    paths = paths or (Path("."),)
    try:
        p, _ = build_plan(paths, targets=targets, runs=runs)
    except InputError as exc:
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
        sys.exit(EXIT_INPUT)
    if as_json:
        click.echo(json.dumps(plan_json(p), ensure_ascii=False, indent=2))
        return
    width = max((len(s.id) for s in p.scenarios), default=8)
    click.echo(f"{'scenario':<{width}}  runs  min_pass  max_steps  checks  most calls")
    for s in p.scenarios:
        click.echo(f"{s.id:<{width}}  {s.runs:>4}  {s.min_pass:>8}  {s.max_steps:>9}  "
                   f"{len(s.checks):>6}  {s.runs * s.max_steps * len(p.targets):>10}")
    names = ", ".join(f"{t.name} ({t.describe()})" for t in p.targets)
    click.echo(f"\n{len(p.scenarios)} scenarios × {len(p.targets)} target(s) [{names}] = "
               f"{p.attempts} attempts; at most {p.max_model_calls} model calls")


@main.command()
@click.argument("paths", nargs=-1,
                type=click.Path(exists=True, path_type=Path, allow_dash=False))
@click.option("--format", "fmt", type=click.Choice(["text", "json", "github"]),
              default="text", show_default=True,
              help="text: for people; json: for tools (docs/lint.md); github: GitHub "
              "Actions annotations on the pull request's lines.")
@click.option("--strict", is_flag=True, help="Treat warnings as errors (exit 1).")
@click.option("--quiet", "-q", is_flag=True,
              help="Text format: one line per problem, without the source line, the hint "
              "and the summary.")
@click.option("--color/--no-color", default=None,
              help="Colour the text format (default: when printing to a terminal and "
              "NO_COLOR is not set).")
@click.option("--jobs", "-j", type=click.IntRange(min=1), metavar="N",
              help="Processes to use (default: one per core for large batches).")
def lint(paths: tuple[Path, ...], fmt: str, strict: bool, quiet: bool, color: bool | None,
         jobs: int | None) -> None:
    """Check scenario files and scenarist.yaml without running anything (no network).

    PATHS are files or folders (searched for *.yaml and *.yml); the default is the
    current folder. Every file is checked, even when some fail: YAML, the schema, and
    everything a run checks before it calls a model. Warnings point at what is legal
    but likely wrong; --strict makes them errors.

    Exit status: 0 no errors, 1 errors found, 2 usage error.
    """
    from .lint import format_result, lint_paths

    result = lint_paths(paths or (Path("."),), strict=strict, jobs=jobs)
    use = use_color(sys.stdout) if color is None else color
    click.echo(format_result(result, fmt, color=use, quiet=quiet),  # type: ignore[arg-type]
               nl=False, color=use)
    sys.exit(EXIT_FAILED if result.errors else EXIT_OK)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Where to write the "
              "report (default: RUN_DIR/report.html).")
def report(run_dir: Path, output: Path | None) -> None:
    """Regenerate the report of a run folder from its stored results (no model calls)."""
    from .report import write_report
    from .store import SUMMARY, write_json
    from .summarize import summarize_dir

    try:
        summary = summarize_dir(run_dir)
        write_json(run_dir / SUMMARY, summary)
        path = write_report(run_dir, output, summary)
    except RunDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    click.echo(f"Report: {path}")


@main.command()
@click.option("--suite", is_flag=True, help="The schema of scenarist.yaml instead.")
def schema(suite: bool) -> None:
    """Print the JSON Schema of scenario files (or of scenarist.yaml) for editors."""
    from .resources import resource_path

    name = "suite.schema.json" if suite else "scenario.schema.json"
    click.echo(resource_path("schemas", name).read_text("utf-8"), nl=False)


@main.command()
def checks() -> None:
    """List the checks a scenario can use."""
    from .checks import REGISTRY

    width = max(len(n) for n in REGISTRY)
    for name, c in sorted(REGISTRY.items(), key=lambda kv: (kv[1].group, kv[0])):
        judge = " (judge)" if c.judge else ""
        click.echo(f"{name:<{width}}  {c.doc}{judge}")
