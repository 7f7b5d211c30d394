"""``scenarist conformance``: certify an endpoint (dsl/results/conformance.py, run by
dsl/pipeline/)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from ..errors import on_terminal
from ..results.terminal import print_conformance, print_summary
from .common import finished_lines, main, or_exit, progress_hooks, run_options


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
@run_options("Runs per case (default: each case's own, 10 for the built-in ones; min_pass "
             "is scaled to match).")
@click.option("--baseline", type=click.Path(path_type=Path, exists=True), metavar="RUNDIR",
              help="An earlier conformance run (its folder): list the cases whose verdict "
              "regressed since.")
def conformance(target: str | None, with_paths: tuple[Path, ...], list_only: bool,
                runs: int | None, concurrency: int | None, out: Path | None, record: Path | None,
                baseline: Path | None) -> None:
    """Certify an endpoint: run the built-in canonical cases (and yours, with --with)
    against a target of the suite in this folder, as a normal run, and say for each
    behaviour whether it is certified — a plain reply, a deterministic answer, a tool
    call with valid arguments, no tool when none fits, a JSON-only answer, a tool result
    carried into the answer, a reply in the question's language.

    Exit status: 0 every behaviour certified, 1 one is not certified (a regression against
    --baseline is one), 2 invalid input or usage, 3 none failed but endpoint errors left
    one inconclusive, 130 interrupted."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline import run_conformance
    from ..results.conformance import CASES_DIR, ConformanceRequest, list_cases

    if list_only:
        cases = or_exit(lambda: list_cases(with_paths, runs))
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
    hooks, progress_done = progress_hooks(False)
    result = or_exit(lambda: run_conformance(request, hooks), progress_done)
    run_result = result.run
    print_summary(run_result.summary, comparison=run_result.comparison)
    print_conformance(result.certificate)
    for note in run_result.notes:
        click.echo(on_terminal(note), err=True)
    click.echo("\n" + finished_lines(run_result.run_dir))
    if run_result.interrupted:
        click.echo(run_result.interrupted, err=True)
    sys.exit(result.exit_code)
