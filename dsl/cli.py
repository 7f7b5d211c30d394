"""The ``scenarist`` command: each command parses its options, calls one stage or the
pipeline (dsl/pipeline.py), and prints. Exit codes: dsl/exits.py (docs/cli.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click

from . import __version__
from .errors import Diagnostic, InputError, NotReady, RunDirError, best_per_place, render
from .exits import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from .results.terminal import ProgressLine, print_summary, style, use_color

T = TypeVar("T")


def print_diagnostics(diagnostics: Iterable[Diagnostic], sources: dict[str, list[str]],
                      *, err: bool = True) -> None:
    color = use_color(sys.stderr if err else sys.stdout)
    for d in best_per_place(diagnostics):
        click.echo(render(d, sources.get(d.span.file), color=color), err=err)


def _read_sources(diagnostics: Sequence[Diagnostic]) -> dict[str, list[str]]:
    from .source.load import source_lines  # regular files only, capped: never a FIFO or a device

    out: dict[str, list[str]] = {}
    for d in diagnostics:
        f = d.span.file
        if f not in out and not f.startswith("<"):
            out[f] = source_lines(Path(f))
    return out


def _or_exit(make: Callable[[], T], done: Callable[[], None] = lambda: None) -> T:
    """``make()`` — a stage that may refuse before anything is sent: the files'
    diagnostics (InputError), or what the environment or the run folder lacks (NotReady,
    RunDirError) are printed and the command exits with 2. ``done`` ends the progress line
    first, whichever way it went."""
    try:
        result = make()
    except InputError as exc:
        done()
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
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


def selection_of(tags: tuple[str, ...], patterns: tuple[str, ...]) -> Any:
    from .compiler.discover import Selection

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


@main.command()
@PATHS
@click.option("--target", "-t", "targets", multiple=True, metavar="NAME",
              help="Target to run against; repeat for several (default: the suite's "
              "defaults.target).")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per scenario (overrides the "
              "files; min_pass is scaled to match).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1),
              help="Attempts in flight at once (default: the suite's defaults.concurrency).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="Folder that receives the run folder.")
@click.option("--record", type=click.Path(path_type=Path), metavar="FILE",
              help="Record every request and reply into a cassette for a replay target.")
@click.option("--no-early-stop", is_flag=True, help="Run every planned attempt, even when a "
              "scenario's verdict is already decided.")
@click.option("--max-calls", type=click.IntRange(min=1), metavar="N",
              help="Stop starting attempts once N model calls were made.")
@click.option("--max-tokens", type=click.IntRange(min=1), metavar="N",
              help="Stop starting attempts once N tokens were used.")
@click.option("--resume", type=click.Path(path_type=Path, file_okay=False), metavar="RUNDIR",
              help="Finish an interrupted run: run only its missing attempts.")
@click.option("--retry-errors", is_flag=True, help="With --resume: also re-run attempts "
              "that ended in an endpoint error.")
@click.option("--shard", metavar="I/N", help="Run only shard I of N of the scenarios "
              "(deterministic; combine the shards with scenarist merge).")
@click.option("--judge", "judge_target", metavar="TARGET",
              help="The target that judges (overrides judge.target in scenarist.yaml).")
@click.option("--no-judge-cache", is_flag=True, help="Ask the judge every question again "
              "(and do not store the answers).")
@click.option("--record-judge", type=click.Path(path_type=Path), metavar="FILE",
              help="Record the judge's questions and replies into a cassette.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failing scenarios and totals.")
@click.option("--format", "fmt", type=click.Choice(["text", "github"]), default="text",
              show_default=True, help="github: also print ::error annotations for failing "
              "scenarios and append summary.md to $GITHUB_STEP_SUMMARY.")
@BASELINE
@click.option("--compare", "compare", multiple=True, metavar="OLD:NEW",
              help="Compare two targets of this run, scenario by scenario: both pass rates, "
              "the difference and its 95% interval (repeat for several pairs; default: the "
              "suite's compare:).")
@FAIL_ON_REGRESSION
@TAGS
@PATTERN
def run(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
        concurrency: int | None, out: Path, record: Path | None, no_early_stop: bool,
        max_calls: int | None, max_tokens: int | None, resume: Path | None,
        retry_errors: bool, shard: str | None, judge_target: str | None,
        no_judge_cache: bool, record_judge: Path | None, quiet: bool, fmt: str,
        baseline: Path | None, compare: tuple[str, ...], fail_on_regression: bool,
        tags: tuple[str, ...], patterns: tuple[str, ...]) -> None:
    """Run the scenarios in PATHS (files or folders; default: the current folder);
    --tag and -k select some of them.

    Exit status: 0 every scenario passed, 1 one failed (or, with --fail-on-regression, one
    regressed), 2 invalid input, 3 endpoint errors left one without a verdict, 130
    interrupted."""
    from .compiler.suite import parse_pair
    from .pipeline import RunRequest, run_suite

    if retry_errors and resume is None:
        raise click.UsageError("--retry-errors needs --resume RUNDIR")
    pairs = []
    for text in compare:
        pair = parse_pair(text)
        if pair is None:
            raise click.BadParameter(f"'{text}' is not OLD:NEW, two different target names "
                                     "around a colon (for example --compare v1:v2)",
                                     param_hint="'--compare'")
        pairs.append(pair)
    shard_spec = parse_shard(shard)
    selection = selection_of(tags, patterns)
    if resume is not None and (paths or targets or runs or shard_spec or pairs
                               or selection.active):
        raise click.UsageError("--resume takes the paths, targets, runs, shard, selection "
                               "and compared targets of the run it resumes; give only "
                               "--resume RUNDIR")
    request = RunRequest(
        paths=paths, targets=targets, runs=runs, concurrency=concurrency, out=out,
        record=record, early_stop=not no_early_stop, max_calls=max_calls,
        max_tokens=max_tokens, resume=resume, retry_errors=retry_errors, shard=shard_spec,
        judge_target=judge_target, judge_cache=not no_judge_cache, record_judge=record_judge,
        baseline=baseline, compare=tuple(pairs), fail_on_regression=fail_on_regression,
        argv=tuple(sys.argv[1:]), selection=selection)
    hooks, progress_done = _progress_hooks(quiet)
    result = _or_exit(lambda: run_suite(request, hooks), progress_done)
    print_summary(result.summary, quiet=quiet, comparison=result.comparison)
    _refreshed_certificate(result.run_dir, result.summary, result.comparison)  # --resume
    if fmt == "github":
        from .results.cioutputs import emit_github

        emit_github(result.summary, result.run_dir, result.comparison, click.echo,
                    lambda m: click.echo(m, err=True))
    for note in result.notes:
        click.echo(note, err=True)
    click.echo(f"\nReport: {result.run_dir / 'report.html'}")
    if result.interrupted:
        click.echo(result.interrupted, err=True)
    sys.exit(result.exit_code)


def _progress_hooks(quiet: bool) -> tuple[Any, Callable[[], None]]:
    """The run's hooks for the terminal (a progress line on stderr, messages as they come,
    Ctrl-C handled), and how to clear the progress line."""
    from .pipeline import Hooks

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


def _refreshed_certificate(run_dir: Path, summary: dict[str, Any], comparison: Any,
                           show: bool = True) -> None:
    """A conformance run's certificate, made again with its summary (and shown)."""
    from .results.conformance import refresh_certificate

    cert = refresh_certificate(run_dir, summary, comparison)
    if cert is not None and show:
        from .results.terminal import print_conformance

        print_conformance(cert)


def _load_baseline(path: Path | None) -> dict[str, Any] | None:
    from .results.baseline import load_summary

    if path is None:
        return None
    try:
        return load_summary(path)
    except RunDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)


@main.command()
@PATHS
@click.option("--target", "-t", "targets", multiple=True, metavar="NAME",
              help="Target(s) to plan for (default: the suite's default).")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per scenario.")
@click.option("--judge", "judge_target", metavar="TARGET", help="The target that judges.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@TAGS
@PATTERN
def plan(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
         judge_target: str | None, as_json: bool, tags: tuple[str, ...],
         patterns: tuple[str, ...]) -> None:
    """Show what a run would do: scenarios × targets × runs, and the most model calls;
    with --tag or -k, which scenarios they select."""
    from .pipeline import plan_set_aside

    with plan_set_aside():
        _plan(paths, targets, runs, judge_target, as_json, tags, patterns)


def _plan(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
          judge_target: str | None, as_json: bool, tags: tuple[str, ...],
          patterns: tuple[str, ...]) -> None:
    from .compiler.compile import build_plan
    from .compiler.plan import plan_json
    from .pipeline import compiled_apart
    from .targets.kinds import describe

    paths = paths or (Path("."),)
    selection = selection_of(tags, patterns)
    try:
        p, compiled = compiled_apart(lambda: build_plan(
            paths, targets=targets, runs=runs, judge_target=judge_target,
            selection=selection))
    except InputError as exc:
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
        sys.exit(EXIT_INPUT)
    if as_json:
        click.echo(json.dumps(plan_json(p), ensure_ascii=False, indent=2))
        return
    width = max([len("scenario"), *(len(s.id) for s in p.scenarios)])
    skips = bool(p.skipped)
    lines = [f"{'scenario':<{width}}  runs  min_pass  max_steps  checks  most calls"
             + ("  skips" if skips else "")]
    for s in p.scenarios:
        line = (f"{s.id:<{width}}  {s.runs:>4}  {s.min_pass:>8}  {s.max_steps:>9}  "
                f"{len(s.all_checks):>6}  {s.most_calls * p.targets_of(s):>10}")
        if skips:
            line += "  " + ", ".join(t.name for t in p.targets if not s.runs_on(t.name))
        lines.append(line.rstrip())
    click.echo("\n".join(lines))
    names = ", ".join(f"{t.name} ({describe(t)})" for t in p.targets)
    judged = ""
    if p.judge_calls:
        judge_name = p.judge.target.name if p.judge else "?"
        judged = (f" and {p.judge_calls} judge questions ({judge_name}; up to "
                  f"{p.judge.tries if p.judge else 1} tries each)")
    click.echo(f"\n{len(p.scenarios)} scenarios × {len(p.targets)} target(s) [{names}] = "
               f"{p.attempts} attempts; at most {p.max_model_calls} model calls{judged}")
    if p.skipped:
        click.echo(f"{len(p.skipped)} scenario × target pair(s) skipped: the scenario's "
                   "targets: leave the target out")
    if selection.active:
        click.echo(f"{selection.flags()} selected {len(p.scenarios):,} of "
                   f"{compiled.considered:,} scenarios")


def _existing(ctx: click.Context, param: click.Parameter, paths: tuple[Path, ...]
              ) -> tuple[Path, ...]:
    """Paths that exist as entries — a link that leads nowhere (or back to itself) exists:
    linting it says what is wrong with it."""
    for p in paths:
        if not os.path.lexists(p):
            raise click.BadParameter(f"Path '{p}' does not exist.", ctx=ctx, param=param)
    return paths


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, allow_dash=False),
                callback=_existing)
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
@TAGS
@PATTERN
def lint(paths: tuple[Path, ...], fmt: str, strict: bool, quiet: bool, color: bool | None,
         jobs: int | None, tags: tuple[str, ...], patterns: tuple[str, ...]) -> None:
    """Check scenario files and scenarist.yaml without running anything (no network).

    PATHS are files or folders (searched for *.yaml and *.yml); the default is the
    current folder. Every file is checked, even when some fail: YAML, the schema, and
    everything a run checks before it calls a model. Warnings point at what is legal
    but likely wrong; --strict makes them errors.

    --tag and -k lint only the scenarios they select (as run and plan select them).

    Exit status: 0 no errors, 1 errors found, 2 usage error (or --tag and -k select
    nothing).
    """
    from .compiler.lint import format_result, lint_paths

    selection = selection_of(tags, patterns)
    result = lint_paths(paths or (Path("."),), strict=strict, jobs=jobs, selection=selection)
    use = use_color(sys.stdout) if color is None else color
    click.echo(format_result(result, fmt, color=use, quiet=quiet),  # type: ignore[arg-type]
               nl=False, color=use)
    if result.selected == 0:
        sys.exit(EXIT_INPUT)
    sys.exit(EXIT_FAILED if result.errors else EXIT_OK)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Where to write the "
              "report (default: RUN_DIR/report.html).")
@BASELINE
def report(run_dir: Path, output: Path | None, baseline: Path | None) -> None:
    """Regenerate the report of a run folder from its stored results (no model calls),
    with its summary.json, junit.xml and summary.md."""
    from .results.cioutputs import write_ci_outputs
    from .results.report import regenerate

    before = _load_baseline(baseline)
    if output is not None and output.is_dir():
        click.echo(f"error: -o {output} is a folder; give the report's file name, e.g. "
                   f"{output / 'report.html'}", err=True)
        sys.exit(EXIT_INPUT)
    if output is not None and output.exists() and not output.is_file():
        click.echo(f"error: -o {output} is not a regular file (a device or a pipe); give the "
                   "report's file name", err=True)
        sys.exit(EXIT_INPUT)
    if output is not None and not output.parent.is_dir():
        click.echo(f"error: cannot write the report to {output}: the folder "
                   f"{output.parent} does not exist", err=True)
        sys.exit(EXIT_INPUT)
    from .pipeline import report_trends

    trends, warnings = report_trends(run_dir)
    for w in warnings:
        click.echo(w, err=True)
    try:
        path, summary, comparison = regenerate(run_dir, output, before, trends)
        write_ci_outputs(run_dir, summary, comparison)
        _refreshed_certificate(run_dir, summary, comparison, show=False)
    except RunDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except OSError as exc:
        click.echo(f"error: cannot write the report of {run_dir}: "
                   f"{exc.strerror or exc} ({exc.filename or output or run_dir})", err=True)
        sys.exit(EXIT_INPUT)
    click.echo(f"Report: {path}")


@main.command()
@click.argument("run_dirs", nargs=-1, required=True,
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="Folder that receives the merged run folder.")
@click.option("--quiet", "-q", is_flag=True, help="Print only failing scenarios and totals.")
def merge(run_dirs: tuple[Path, ...], out: Path, quiet: bool) -> None:
    """Combine the run folders of shards (scenarist run --shard I/N) into one run, with one
    summary and report. Exit codes as for run."""
    from .results.cioutputs import write_ci_outputs
    from .results.report import regenerate
    from .results.summarize import exit_code
    from .store import merge_runs

    try:
        merged, warnings = merge_runs(list(run_dirs), out)
    except RunDirError as exc:
        click.echo(f"error: cannot merge: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    for w in warnings:
        click.echo(f"warning: {w}", err=True)
    from .pipeline import record_merged

    _, summary, _ = regenerate(merged)
    write_ci_outputs(merged, summary, None)
    for note in record_merged(merged, summary, list(run_dirs)):
        click.echo(note, err=True)
    print_summary(summary, quiet=quiet)
    click.echo(f"\nMerged {len(run_dirs)} runs into {merged}\nReport: {merged / 'report.html'}")
    sys.exit(exit_code(summary))


@main.command("judge-check")
@click.argument("labels", type=click.Path(path_type=Path, dir_okay=False, exists=True))
@click.option("--judge", "judge_target", metavar="TARGET", help="The target that judges "
              "(default: the labels file's judge, else the suite's judge.target).")
@click.option("--no-judge-cache", is_flag=True, help="Ask every question again.")
@click.option("--concurrency", "-j", type=click.IntRange(min=1),
              help="Questions in flight at once (default: the judge target's concurrency, "
              "else 4).")
@click.option("--calibrate", is_flag=True, help="Also measure calibration (Brier score, "
              "calibration error, coverage), fit judge.calibration's temperatures on the "
              "labels (logprobs mode), and measure them cross-fitted on two halves.")
@click.option("--mode", type=click.Choice(["json", "logprobs"]), help="Read the judge's "
              "verdicts this way instead of judge.mode (to compare the two).")
@click.option("--json", "as_json", is_flag=True, help="Print the results as JSON.")
def judge_check(labels: Path, judge_target: str | None, no_judge_cache: bool,
                concurrency: int | None, calibrate: bool, mode: str | None,
                as_json: bool) -> None:
    """Ask the judge about hand-labelled examples and report how often it agrees with
    people (agreement and Cohen's kappa), before you trust it.

    The result is kept in .scenarist/judge-validation.json beside scenarist.yaml: reports
    show a measured judge's kappa and coverage beside its verdicts."""
    import asyncio
    import dataclasses

    from .judge import Judge
    from .judge.check import ask_all, load_examples, report
    from .judge.check import calibrate as measure
    from .targets.kinds import is_model, open_model

    try:
        examples, suite, file_judge = load_examples(labels)
    except InputError as exc:
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
        sys.exit(EXIT_INPUT)
    name = judge_target or file_judge or (suite.judge.target.name if suite.judge else None)
    target = suite.targets.get(name) if name else None
    if target is None or not is_model(target):
        raise click.UsageError(f"no judge: name a kind: openai target with --judge (the "
                               f"suite's targets: {', '.join(sorted(suite.targets)) or 'none'})")
    config = suite.judge_with(target)
    if mode is not None:
        config = dataclasses.replace(config, mode=mode)

    async def go() -> tuple[list[Any], Any]:
        model = open_model(target, 4)
        judge = Judge(config, model, suite.redact.redactor(suite.targets.values()),
                      use_cache=not no_judge_cache, memory={})
        try:
            results = await ask_all(examples, judge, concurrency or target.concurrency or 4)
            return results, await measure(results, judge, fit=calibrate)
        finally:
            await model.aclose()

    try:
        results, calibrated = asyncio.run(go())
    except InputError as exc:
        print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
        sys.exit(EXIT_INPUT)
    data = report(results)
    stored = _store_validation(suite.root, config, labels, calibrated)
    if calibrate:
        from .judge.check import calibration_json, grounded_figures

        data["calibration"] = calibration_json(calibrated)
        g = grounded_figures(examples)
        data["grounded"] = g.as_json() if g else None
    if as_json:
        click.echo(json.dumps(data, ensure_ascii=False, indent=2))
        return
    color = use_color()
    for r in data["results"]:
        ok = r["judge"] == r["expected"]
        mark = style("✓", color, fg="green") if ok else (
            style("?", color, fg="yellow") if r["judge"] in ("unsure", "error")
            else style("✗", color, fg="red"))
        click.echo(f"{mark} {r['id']:<28} {r['check']:<22} person: {r['expected']:<4}  "
                   f"judge: {r['judge']}")
        if not ok:
            click.echo(f"    {r['reason']}")
    agreement = "–" if data["agreement"] is None else f"{data['agreement']:.0%}"
    kappa = "–" if data["kappa"] is None else f"{data['kappa']:.2f}"
    model = config.model or getattr(target.config, "model", "") or "replay"
    click.echo(f"\n{data['examples']} examples, judge {target.name} ({model}, "
               f"{config.mode} mode): agreement {agreement} on {data['decided']} decided, "
               f"Cohen's kappa {kappa}; {data['unsure']} unsure, {data['errors']} errors")
    for check, s in data["by_check"].items():
        k = "–" if s["kappa"] is None else f"{s['kappa']:.2f}"
        click.echo(f"  {check}: agreement {s['agreement']:.0%} on {s['decided']}, kappa {k}")
    if calibrate:
        for line in _calibration_lines(calibrated, grounded_figures(examples)):
            click.echo(line)
    if stored:
        click.echo(f"\n{stored}")


def _store_validation(root: Path, config: Any, labels: Path, calibrated: Any) -> str:
    """Keep the measurement for reports; say where (or why not) in one line."""
    from .judge.validation import ValidationFileError, record_validation

    f = calibrated.before
    try:
        path = record_validation(root, config, labels, f.questions, f.as_json())
    except ValidationFileError as exc:
        click.echo(f"warning: the result was not kept: {exc}", err=True)
        return ""
    shown = path.relative_to(root) if path.is_relative_to(root) else path
    return f"Kept in {shown}: reports show this judge's kappa and coverage."


def _figures_row(label: str, f: Any, calibration: Any = None) -> str:
    def pct(x: float | None) -> str:
        return "–" if x is None else f"{x:.0%}"

    def num(x: float | None, digits: int = 2) -> str:
        return "–" if x is None else f"{x:.{digits}f}"

    yes_no, digits = (("–", "–") if calibration is None else
                      (f"{calibration.yes_no:g}", f"{calibration.digits:g}"))
    return (f"  {label:<14} {yes_no:>6} {digits:>6} {pct(f.agreement):>9} {num(f.kappa):>6} "
            f"{num(f.brier, 3):>6} {num(f.ece, 3):>6} {pct(f.coverage):>8} | "
            f"{pct(f.agreement_covered):>9} {num(f.kappa_covered):>6}")


def _calibration_lines(c: Any, grounded: Any) -> list[str]:
    from .judge.check import calibration_block

    n = c.questions
    lines = [f"\nCalibration ({c.mode} mode, min_confidence {c.min_confidence:g}; "
             f"{n['yes_no']} yes/no and {n['digits']} digit questions):",
             f"  {'':<14} {'yes_no':>6} {'digits':>6} {'agreement':>9} {'kappa':>6} "
             f"{'Brier':>6} {'ECE':>6} {'coverage':>8} | {'agreement':>9} {'kappa':>6}"]
    if c.fitted is None:
        lines.append(_figures_row("self-reported", c.before))
    else:
        lines.append(_figures_row("before", c.before, c.configured))
        lines.append(_figures_row("after", c.after, c.fitted))
        for x in c.cross:
            other = "B" if x.fitted_on == "A" else "A"
            lines.append(_figures_row(f"fit {x.fitted_on}, test {other}", x.figures,
                                      x.calibration))
        if c.cross_pooled is not None:
            lines.append(_figures_row("cross-fitted", c.cross_pooled))
    if grounded is not None:
        lines.append(_figures_row("grounded", grounded))
    lines += ["  yes_no, digits: the temperatures. Left of |: every question, by the judge's "
              "likelier",
              "  verdict, and the share it decided at min_confidence; right of |: the decided "
              "ones only.",
              "  fit A, test B: fitted on half A of the labels, measured on half B; "
              "cross-fitted: every",
              "  question measured with the temperatures fitted on the other half."]
    if grounded is not None:
        lines.append("  grounded: the grounded check (no judge) on the faithful questions.")
    if c.fitted is None:
        lines.append("  mode json has no temperature to fit: the figures measure the judge's "
                     "stated confidence.")
    else:
        lines += _edge_notes(c)
        block = calibration_block(c.fitted).splitlines()
        lines += ["", "Paste under judge: in scenarist.yaml:", *(f"  {b}" for b in block)]
    return lines


def _edge_notes(c: Any) -> list[str]:
    """A temperature fitted at the edge of the search says the fit found nothing."""
    from .judge.calibration import TEMPERATURE_RANGE

    low, high = TEMPERATURE_RANGE
    out = []
    for kind in ("yes_no", "digits"):
        t = getattr(c.fitted, kind)
        if c.questions[kind] and t >= high - 0.01:
            out.append(f"  note: {kind} {t:g} is the top of the search: the labels are best "
                       "fitted by probabilities near one half, so the judge's tell nothing "
                       "about them.")
        elif c.questions[kind] and t <= low + 0.01:
            out.append(f"  note: {kind} {t:g} is the bottom of the search: the labels ask "
                       "for certainty, which a few labels cannot justify; look at the "
                       "cross-fitted rows.")
    return out


@main.command()
@click.argument("folder", metavar="[DIR]", required=False, default=".",
                type=click.Path(path_type=Path))
@click.option("--base-url", metavar="URL", help="Test this OpenAI-compatible endpoint "
              "(with --model) instead of the recorded example agent.")
@click.option("--model", metavar="NAME", help="The model to ask at --base-url.")
@click.option("--api-key-env", metavar="VAR", help="The environment variable that holds "
              "the endpoint's API key (its name, never the key).")
def init(folder: Path, base_url: str | None, model: str | None,
         api_key_env: str | None) -> None:
    """Start a suite in DIR (default: the current folder, created when missing): a
    commented scenarist.yaml and one commented example scenario that lints and runs.

    The example runs against the endpoint named with --base-url and --model, or, without
    them, against a recording of Scenarist's example agent that works offline. Init never
    overwrites a file: if one it would write exists, it writes nothing.
    """
    from .init import ABOUT, InitRefused, endpoint_of, init_suite

    try:
        endpoint = endpoint_of(base_url, model, api_key_env)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    try:
        done = init_suite(folder, endpoint)
    except InitRefused as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    except OSError as exc:
        click.echo(f"error: cannot write the suite into {folder}: {exc.strerror or exc}",
                   err=True)
        sys.exit(EXIT_INPUT)
    where = "this folder" if folder == Path(".") else str(folder)
    click.echo(f"Created a suite in {where}:")
    paths = [str(folder / f) if folder != Path(".") else str(f) for f in done.files]
    width = max(len(p) for p in paths)
    for p, f in zip(paths, done.files, strict=True):
        click.echo(f"  {p:<{width}}  {ABOUT[f.as_posix()]}")
    click.echo("\nNext:")
    width = max(len(c) for c, _ in done.next_commands)
    for command, what in done.next_commands:
        click.echo(f"  {command:<{width}}  # {what}")


@main.command("try")
@click.argument("scenario", metavar="SCENARIO",
                type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--target", "-t", "target", metavar="NAME",
              help="The target to talk to (default: the suite's default target).")
@click.option("--scenario", "scenario_id", metavar="ID",
              help="Which scenario of the file, when it holds several.")
@click.option("--cassette", type=click.Path(path_type=Path, dir_okay=False), metavar="FILE",
              help="Where /save appends the conversation (default: "
                   "cassettes/try-TARGET.jsonl in the suite's folder).")
def try_(scenario: Path, target: str | None, scenario_id: str | None,
         cassette: Path | None) -> None:
    """Chat with the agent inside SCENARIO's world: its moment, its fake tools, its system
    prompt and history. Each tool call is shown with the fake result; a call that needs
    confirmation asks confirm? [y/N]. /save keeps the conversation in a cassette; /quit or
    Ctrl-D ends it and shows which of the scenario's checks it would pass.

    Exit status: 0 the conversation ended, 2 invalid input, 3 the endpoint failed, 130
    interrupted."""
    from .execution.tryout import NotTryable, Terminal, check_lines, intro, play, session_for
    from .exits import EXIT_INTERRUPTED, EXIT_NO_VERDICT

    try:
        session = _or_exit(lambda: session_for(scenario, target, scenario_id, cassette))
    except NotTryable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    with contextlib.suppress(ImportError):  # line editing and history for input()
        import readline  # noqa: F401
    for line in intro(session):
        click.echo(line)
    terminal = Terminal(click.echo, input)
    try:
        outcome = play(session, terminal)
    except KeyboardInterrupt:
        click.echo("\nInterrupted: nothing was checked.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    for line in check_lines(outcome):
        click.echo(line)
    sys.exit(EXIT_NO_VERDICT if outcome.error is not None else EXIT_OK)


@main.command()
@click.argument("folder", metavar="[DIR]", required=False, default=".",
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--port", type=click.IntRange(min=0, max=65535), default=0, metavar="N",
              help="The port to listen on, on 127.0.0.1 (default: a free one).")
@click.option("--no-open", is_flag=True, help="Do not open the address in a browser.")
def studio(folder: Path, port: int, no_open: bool) -> None:
    """Write, try and run the scenarios of the suite at DIR (default: the current folder)
    in your browser: a local page, on 127.0.0.1 only. The first line printed is its
    address, with a token that changes at every start; Ctrl-C stops it.

    Needs the studio's extra: pip install 'scenarist[studio]'.

    Exit status: 0 stopped with Ctrl-C, 2 no suite at DIR, the extra is missing, or the
    port is taken."""
    try:
        from .studio.server import serve
        from .studio.workspace import Refused, suite_root
    except ImportError as exc:
        from .studio import INSTALL

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


@main.command()
@click.option("--suite", is_flag=True, help="The schema of scenarist.yaml instead.")
def schema(suite: bool) -> None:
    """Print the JSON Schema of scenario files (or of scenarist.yaml) for editors."""
    from .source.resources import resource_path

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


@main.command()
@click.argument("base", type=click.Path(path_type=Path, exists=True), metavar="BASE")
@click.argument("new", type=click.Path(path_type=Path, exists=True), metavar="NEW")
@click.option("--format", "fmt", type=click.Choice(["text", "json", "markdown"]),
              default="text", show_default=True, help="text: for people; json: for tools "
              "(the comparison summary.json keeps); markdown: for a pull-request comment.")
@click.option("--quiet", "-q", is_flag=True, help="Text format: leave out the unchanged.")
@FAIL_ON_REGRESSION
def diff(base: Path, new: Path, fmt: str, quiet: bool, fail_on_regression: bool) -> None:
    """Compare two runs: each scenario × target is regressed, improved, unchanged,
    inconclusive (the verdict changed, but the interval of the difference spans 0), new or
    removed, with the change in pass rate and its 95% interval (no model calls).

    BASE and NEW are run folders or their summary.json files.

    Exit status: 0 (with --fail-on-regression: no regression), 1 a scenario regressed
    (with --fail-on-regression), 2 a folder or file that is not a run."""
    from .results.baseline import diff as compare_runs
    from .results.cioutputs import comparison_markdown
    from .results.terminal import print_comparison

    try:
        comparison = compare_runs(base, new)
    except RunDirError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    if fmt == "json":
        click.echo(json.dumps(comparison.as_json(), ensure_ascii=False, indent=2))
    elif fmt == "markdown":
        click.echo(comparison_markdown(comparison), nl=False)
    else:
        print_comparison(comparison, quiet=quiet)
    sys.exit(EXIT_FAILED if fail_on_regression and comparison.regressions else EXIT_OK)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False, exists=True),
                metavar="RUNDIR")
@click.option("--out", type=click.Path(path_type=Path), help="Folder that receives the new "
              "run folder (default: the folder that holds RUNDIR).")
@click.option("--judge", "ask_judge", is_flag=True, help="Ask the suite's judge the "
              "questions its cache does not hold (without it, such an attempt has no "
              "verdict).")
@click.option("--quiet", "-q", is_flag=True, help="Print only failing scenarios and totals.")
def recheck(run_dir: Path, out: Path | None, ask_judge: bool, quiet: bool) -> None:
    """Apply the scenarios' current checks to the transcripts RUNDIR stored, with no model
    calls, into a new run folder marked as a recheck of RUNDIR. Judge checks are answered
    from the judge's cache.

    A scenario whose given or when changed since the run is refused by name: its
    transcripts answer a different question.

    Exit status as for run; 2 when nothing can be rechecked."""
    from .pipeline import recheck_run

    result = _or_exit(lambda: recheck_run(run_dir, out, ask_judge))
    print_summary(result.summary, quiet=quiet)
    for note in result.notes:
        click.echo(note, err=True)
    click.echo(f"\nRechecked {run_dir} into {result.run_dir}\n"
               f"Report: {result.run_dir / 'report.html'}")
    sys.exit(result.exit_code)


def _history() -> Any:
    """The history the commands below use: SCENARIST_HISTORY, else history: in the
    scenarist.yaml of this folder or its parents, else its default."""
    from .compiler.suite import find_suite_file
    from .history import HISTORY_ENV, location_for, setting_problem
    from .source.load import read_file

    if os.environ.get(HISTORY_ENV, "").strip():
        location = location_for(None)
    else:
        suite = find_suite_file(Path.cwd())
        if suite is None:
            click.echo(f"error: no scenarist.yaml here or in a parent folder, so no history; "
                       f"run this from the suite's folder, or set {HISTORY_ENV}", err=True)
            sys.exit(EXIT_INPUT)
        doc = read_file(suite, str(suite))
        setting = doc.data.get("history") if isinstance(doc.data, dict) else None
        problem = setting_problem(setting)
        if problem is not None:
            click.echo(f"error: {suite}: {problem}", err=True)
            sys.exit(EXIT_INPUT)
        location = location_for(suite.parent.resolve(), setting)
    if location is None:
        click.echo("error: the history is off (history: false, or "
                   f"{HISTORY_ENV}=off)", err=True)
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
    from .exits import EXIT_HISTORY
    from .history import HistoryError, open_history
    from .results.terminal import print_runs

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
        from .history.views import run_json

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
    from .exits import EXIT_HISTORY
    from .history import HistoryError, open_history
    from .results.terminal import print_run

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
        from .history.views import run_json

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
    from .exits import EXIT_HISTORY
    from .history import HistoryError
    from .pipeline import import_runs

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


@main.command()
@click.option("--target", "-t", metavar="NAME", help="The target to certify: one of the "
              "targets of the scenarist.yaml in this folder or above (required, except with "
              "--list).")
@click.option("--with", "with_paths", multiple=True, metavar="PATH",
              type=click.Path(path_type=Path, exists=True),
              help="Add your own canonical cases: a scenario file, or a folder of them "
              "(repeat for several).")
@click.option("--list", "list_only", is_flag=True, help="Print the cases (the built-in ones "
              "and those of --with) and what each certifies; run nothing.")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per case (default: each "
              "case's own, 10 for the built-in ones; min_pass is scaled to match).")
@click.option("--concurrency", "-j", type=click.IntRange(min=1),
              help="Attempts in flight at once (default: the suite's defaults.concurrency).")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs"), show_default=True,
              help="Folder that receives the run folder.")
@click.option("--record", type=click.Path(path_type=Path), metavar="FILE",
              help="Record every request and reply into a cassette, for a replay target.")
@click.option("--baseline", type=click.Path(path_type=Path, exists=True), metavar="RUNDIR",
              help="An earlier conformance run (its folder): list the cases whose verdict "
              "regressed since.")
def conformance(target: str | None, with_paths: tuple[Path, ...], list_only: bool,
                runs: int | None, concurrency: int | None, out: Path, record: Path | None,
                baseline: Path | None) -> None:
    """Certify an endpoint: run the built-in canonical cases (and yours, with --with)
    against a target of the suite in this folder, as a normal run, and say for each
    behaviour whether it is certified — a plain reply, a deterministic answer, a tool
    call with valid arguments, no tool when none fits, a JSON-only answer, a tool result
    carried into the answer, a reply in the question's language.

    Exit status: 0 every behaviour certified, 1 one is not certified (a regression against
    --baseline is one), 2 invalid input or usage, 3 none failed but endpoint errors left
    one inconclusive, 130 interrupted."""
    from .results.conformance import CASES_DIR, ConformanceRequest, list_cases, run_conformance
    from .results.terminal import print_conformance

    if list_only:
        try:
            cases = list_cases(with_paths, runs)
        except InputError as exc:
            print_diagnostics(exc.diagnostics, _read_sources(exc.diagnostics))
            sys.exit(EXIT_INPUT)
        width = max([len("case"), *(len(c.id) for c in cases)])
        click.echo(f"{'case':<{width}}  runs  min_pass  certifies")
        for c in cases:
            mine = "" if c.builtin else f"  ({c.file})"
            click.echo(f"{c.id:<{width}}  {c.runs:>4}  {c.min_pass:>8}  {c.certifies}{mine}")
        builtin = sum(c.builtin for c in cases)
        theirs = len(cases) - builtin
        click.echo(f"\n{builtin} built-in cases (in {CASES_DIR})"
                   + (f" and {theirs} of yours" if theirs else "")
                   + "; a case is certified when at least min_pass of its runs pass.")
        return
    if target is None:
        raise click.UsageError("Missing option '--target': name the target to certify "
                               "(or give --list to see the cases)")
    request = ConformanceRequest(target, with_paths, runs, concurrency, out, record, baseline,
                                 tuple(sys.argv[1:]))
    hooks, progress_done = _progress_hooks(False)
    result = _or_exit(lambda: run_conformance(request, hooks), progress_done)
    run_result = result.run
    print_summary(run_result.summary, comparison=run_result.comparison)
    print_conformance(result.certificate)
    for note in run_result.notes:
        click.echo(note, err=True)
    click.echo(f"\nReport: {run_result.run_dir / 'report.html'}")
    if run_result.interrupted:
        click.echo(run_result.interrupted, err=True)
    sys.exit(result.exit_code)
