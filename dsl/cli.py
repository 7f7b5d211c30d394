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

import asyncio
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
BASELINE = click.option(
    "--baseline", type=click.Path(path_type=Path, exists=True), metavar="RUNDIR",
    help="Compare with an earlier run (its folder, or its summary.json): regressions, "
         "improvements and the change in pass rate.")


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
@click.option("--format", "fmt", type=click.Choice(["text", "github"]), default="text",
              show_default=True, help="github: also print ::error annotations for failing "
              "scenarios and append summary.md to $GITHUB_STEP_SUMMARY.")
@BASELINE
def run(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
        concurrency: int | None, out: Path, record: Path | None, quiet: bool, fmt: str,
        baseline: Path | None) -> None:
    """Run the scenarios in PATHS (files or folders; default: the current folder)."""
    from .compile import build_plan

    paths = paths or (Path("."),)
    before = _load_baseline(baseline)
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
    sys.exit(_run_plan(plan, out, record, quiet, fmt, before))


def _load_baseline(path: Path | None) -> dict[str, Any] | None:
    from .baseline import load_summary

    if path is None:
        return None
    try:
        return load_summary(path)
    except RunDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)


def _run_plan(plan: Any, out: Path, record: Path | None, quiet: bool, fmt: str = "text",
              baseline: dict[str, Any] | None = None) -> int:
    from .baseline import compare
    from .cioutputs import emit_github, write_ci_outputs
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
    comparison = compare(summary, baseline) if baseline is not None else None
    write_report(run_dir, summary=summary, comparison=comparison)
    write_ci_outputs(run_dir, summary, comparison)
    print_summary(summary, quiet=quiet, comparison=comparison)
    if fmt == "github":
        emit_github(summary, run_dir, comparison, click.echo,
                    lambda m: click.echo(m, err=True))
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
@PATHS
def lint(paths: tuple[Path, ...]) -> None:
    """Check scenario files without running them (no network). Exit 1 on errors."""
    from .compile import compile_paths

    paths = paths or (Path("."),)
    compiled = compile_paths(paths, require_suite=False)
    diags = best_per_place(compiled.diagnostics)
    print_diagnostics(diags, _sources(compiled), err=False)
    errors = sum(d.severity == "error" for d in diags)
    warnings = len(diags) - errors
    click.echo(f"{len(compiled.files)} file(s): {errors} error(s), {warnings} warning(s)")
    sys.exit(EXIT_FAILED if errors else EXIT_OK)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Where to write the "
              "report (default: RUN_DIR/report.html).")
@BASELINE
def report(run_dir: Path, output: Path | None, baseline: Path | None) -> None:
    """Regenerate the report of a run folder from its stored results (no model calls),
    with its summary.json, junit.xml and summary.md."""
    from .cioutputs import write_ci_outputs
    from .report import regenerate

    before = _load_baseline(baseline)
    try:
        path, summary, comparison = regenerate(run_dir, output, before)
    except RunDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    write_ci_outputs(run_dir, summary, comparison)
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
