"""The commands that make a run folder or read one: ``run``, ``recheck``, ``report``,
``merge`` and ``diff`` (each calls dsl/pipeline/, then prints)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import click

from ..errors import RunDirError, on_terminal
from ..exits import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from ..results.terminal import print_comparison, print_conformance, print_summary
from .common import (
    BASELINE,
    FAIL_ON_REGRESSION,
    PATHS,
    PATTERN,
    TAGS,
    finished_lines,
    load_baseline,
    main,
    or_exit,
    parse_shard,
    progress_hooks,
    run_options,
    selection_of,
    shown_path,
)


@main.command()
@PATHS
@click.option("--target", "-t", "targets", multiple=True, metavar="NAME",
              help="Target to run against; repeat for several (default: the suite's "
              "defaults.target).")
@run_options("Runs per scenario (overrides the files; min_pass is scaled to match).")
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
              "(deterministic; combine the shards with scenarist merge). auto (or auto/N): "
              "I and N from the environment — SCENARIST_SHARD, GitLab, CircleCI, Buildkite, "
              "a Kubernetes Indexed Job (docs/ci.md).")
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
        concurrency: int | None, out: Path | None, record: Path | None, no_early_stop: bool,
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
    # why: loaded when the command runs (every command's module loads at start)
    from ..compiler.suite import parse_pair
    from ..pipeline import RunRequest, run_suite

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
    hooks, progress_done = progress_hooks(quiet)
    result = or_exit(lambda: run_suite(request, hooks), progress_done)
    print_summary(result.summary, quiet=quiet, comparison=result.comparison)
    if result.certificate is not None:  # a conformance run, resumed

        print_conformance(result.certificate)
    if fmt == "github":
        # why: loaded when the command runs (every command's module loads at start)
        from ..results.cioutputs import emit_github

        emit_github(result.summary, result.run_dir, result.comparison, click.echo,
                    lambda m: click.echo(m, err=True))
    for note in result.notes:
        click.echo(on_terminal(note), err=True)
    click.echo("\n" + finished_lines(result.run_dir))
    if result.interrupted:
        click.echo(result.interrupted, err=True)
    sys.exit(result.exit_code)


@main.command()
@click.argument("run_dir", type=click.Path(path_type=Path, file_okay=False))
@click.option("-o", "--output", type=click.Path(path_type=Path), help="Where to write the "
              "report (default: RUN_DIR/report.html).")
@BASELINE
def report(run_dir: Path, output: Path | None, baseline: Path | None) -> None:
    """Regenerate the report of a run folder from its stored results (no model calls),
    with its summary.json, junit.xml and summary.md."""
    before = load_baseline(baseline)
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
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline import report_run

    finished = or_exit(lambda: report_run(run_dir, output, before))
    for note in finished.notes:
        click.echo(on_terminal(note), err=True)
    click.echo(f"Report: {finished.report}")


@main.command()
@click.argument("run_dirs", nargs=-1, required=True,
                type=click.Path(path_type=Path, file_okay=False, exists=True))
@click.option("--out", type=click.Path(path_type=Path),
              help="Folder that receives the merged run folder (default: runs/ beside the "
              "scenarist.yaml of the current folder or its parents; without one, runs/ "
              "here).")
@click.option("--quiet", "-q", is_flag=True, help="Print only failing scenarios and totals.")
@click.option("--allow-missing", is_flag=True,
              help="Accept a merge that lacks some shards: exit as if they were not part of "
              "the run (the files still name their scenarios as not run). Without it, a "
              "missing shard exits 3.")
def merge(run_dirs: tuple[Path, ...], out: Path | None, quiet: bool,
          allow_missing: bool) -> None:
    """Combine the run folders of shards (scenarist run --shard I/N) into one run, with one
    summary and report. Exit codes as for run; 3 when a shard is missing (its scenarios
    were not run, and every file says so) unless --allow-missing."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline import merge_shards
    from ..results.words import missing_shards_text

    try:
        merged = merge_shards(list(run_dirs), out, allow_missing)
    except RunDirError as exc:
        click.echo(f"error: cannot merge: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    result = merged.run
    if merged.missing:
        click.echo(f"warning: {missing_shards_text(merged.missing)}", err=True)
        if not allow_missing:
            click.echo("error: the merged run has no verdict for the scenarios of the missing "
                       "shards (exit 3): merge every shard's run folder, or accept the "
                       "partial run with --allow-missing", err=True)
    for note in result.notes:
        click.echo(on_terminal(note), err=True)
    print_summary(result.summary, quiet=quiet)
    click.echo(f"\nMerged {len(run_dirs)} runs into {shown_path(result.run_dir)}\n"
               f"Report: {shown_path(result.run_dir) / 'report.html'}")
    sys.exit(result.exit_code)


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
    # why: loaded when the command runs (every command's module loads at start)
    from ..results.baseline import diff as compare_runs
    from ..results.cioutputs import comparison_markdown

    comparison = or_exit(lambda: compare_runs(base, new))
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
@click.option("--suite", "suite", type=click.Path(path_type=Path, file_okay=False, exists=True),
              metavar="DIR", help="The suite's folder to read the scenarios from (a copy, or "
              "where it was moved); default: the one the run names.")
def recheck(run_dir: Path, out: Path | None, ask_judge: bool, quiet: bool,
            suite: Path | None) -> None:
    """Apply the scenarios' current checks to the transcripts RUNDIR stored, with no model
    calls, into a new run folder marked as a recheck of RUNDIR. Judge checks are answered
    from the judge's cache. The scenarios are read from the suite the run names, or from
    --suite DIR (a copy, a moved folder); the command says which folder it read.

    A scenario whose given or when changed since the run is refused by name: its
    transcripts answer a different question.

    Exit status as for run; 2 when nothing can be rechecked (the suite the run names is
    gone: pass --suite)."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline import recheck_run

    result = or_exit(lambda: recheck_run(run_dir, out, ask_judge, suite))
    print_summary(result.summary, quiet=quiet)
    for note in result.notes:
        click.echo(on_terminal(note), err=True)
    how = "--suite" if suite is not None else "the suite the run names"
    click.echo(on_terminal(f"Read the scenarios of {result.suite} ({how})"))
    click.echo(f"\nRechecked {run_dir} into {result.run_dir}\n"
               f"Report: {result.run_dir / 'report.html'}")
    sys.exit(result.exit_code)


