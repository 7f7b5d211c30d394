"""The commands for writing scenarios: ``init``, ``lint``, ``plan``, ``try``, ``schema``
and ``checks`` (none of them runs a suite)."""

from __future__ import annotations

import contextlib
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..errors import on_terminal
from ..exits import EXIT_FAILED, EXIT_INPUT, EXIT_INTERRUPTED, EXIT_NO_VERDICT, EXIT_OK
from ..results.terminal import use_color
from .common import PATHS, PATTERN, TAGS, main, or_exit, selection_of

if TYPE_CHECKING:
    from ..model import Plan, Scenario, Target
    from ..results.stats import GateRule


@main.command()
@PATHS
@click.option("--target", "-t", "targets", multiple=True, metavar="NAME",
              help="Target(s) to plan for (default: the suite's default).")
@click.option("--runs", type=click.IntRange(min=1), help="Runs per scenario.")
@click.option("--judge", "judge_target", metavar="TARGET", help="The target that judges.")
@click.option("--json", "as_json", is_flag=True, help="Print the plan as JSON.")
@click.option("--power", metavar="P_GOOD:P_BAD", callback=lambda c, p, v: _power_rates(c, p, v),
              help="For each scenario: the chance its gate (runs, min_pass) passes an agent "
              "whose true pass rate is P_GOOD and one whose rate is P_BAD (e.g. 0.9:0.7), and "
              "the fewest runs (at most 100), with their smallest min_pass, that pass the "
              "first and fail the second at least 95% of the time each.")
@TAGS
@PATTERN
def plan(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
         judge_target: str | None, as_json: bool, power: tuple[float, float] | None,
         tags: tuple[str, ...], patterns: tuple[str, ...]) -> None:
    """Show what a run would do: scenarios × targets × runs, and the most model calls;
    with --tag or -k, which scenarios they select; with --power, how many runs each gate
    needs (docs/statistics.md)."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline import plan_set_aside

    with plan_set_aside():
        _plan(paths, targets, runs, judge_target, as_json, tags, patterns, power)


POWER_USAGE = ("--power takes two pass rates between 0 and 1, P_GOOD:P_BAD, the first above "
               "the second: the agent you want to pass and the one you want to fail, e.g. "
               "--power 0.9:0.7")


def _power_rates(ctx: click.Context, param: click.Parameter, value: str | None
                 ) -> tuple[float, float] | None:
    """``--power 0.9:0.7`` as (0.9, 0.7); a usage error (exit 2) that says what it takes."""
    if value is None:
        return None
    parts = value.split(":")
    try:
        good, bad = (float(x) for x in parts) if len(parts) == 2 else (None, None)
    except ValueError:
        good = bad = None
    if good is None or bad is None or not (0 <= bad < good <= 1):
        raise click.BadParameter(f"{value!r}: {POWER_USAGE}", ctx=ctx, param=param)
    return good, bad


def _plan(paths: tuple[Path, ...], targets: tuple[str, ...], runs: int | None,
          judge_target: str | None, as_json: bool, tags: tuple[str, ...],
          patterns: tuple[str, ...], power: tuple[float, float] | None = None) -> None:
    # why: loaded when the command runs (every command's module loads at start)
    from ..compiler.compile import build_plan
    from ..compiler.plan import kept_plan, plan_json
    from ..pipeline import compiled_apart
    paths = paths or (Path("."),)
    selection = selection_of(tags, patterns)
    p, compiled = or_exit(lambda: compiled_apart(lambda: build_plan(
        paths, targets=targets, runs=runs, judge_target=judge_target, selection=selection)))
    if as_json:
        # why: regex, for --json only (it prints the scenarios' texts, as plan.json keeps them)
        from ..compiler.redact import redactor_for

        out = kept_plan(plan_json(p), redactor_for(p.redact, p.suite_targets))
        if power is not None:
            # why: loaded when the command runs (every command's module loads at start)
            from ..results.stats import gate_power

            for planned, gate in zip(out["scenarios"], _gates(p), strict=True):
                planned["power"] = gate_power(gate[1], gate[2], *power, gate[3]).as_json()
        click.echo(json.dumps(out, ensure_ascii=False, indent=2))
        return
    click.echo(_plan_text(p))  # names and counts: no text of a scenario
    if p.skipped:
        click.echo(f"{len(p.skipped)} scenario × target pair(s) skipped: the scenario's "
                   "targets: leave the target out")
    if selection.active:
        click.echo(f"{selection.flags()} selected {len(p.scenarios):,} of "
                   f"{compiled.considered:,} scenarios")
    if power is not None:
        # why: loaded when the command runs (every command's module loads at start)
        from ..results.words import power_lines

        click.echo("")
        click.echo("\n".join(power_lines(_gates(p), *power)))


def _gates(p: Plan) -> list[tuple[str, int, int, GateRule]]:
    """Each scenario's gate for ``--power``: id, runs, min_pass and its always rule."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..results.stats import gate_rule

    return [(s.id, s.runs, s.min_pass, gate_rule(c.always for c in s.all_checks))
            for s in p.scenarios]


def _plan_text(p: Plan) -> str:
    """The plan as a table, and its bound. Model calls are the ones Scenarist makes
    (:func:`dsl.compiler.plan.most_calls`, the count plan.json keeps): the loop of the
    targets it runs (a model endpoint, a replay) and a simulated user's messages. An agent
    that runs its own loop (python, http, command) is sent turns, and its model calls are
    its own: the table shows turns when every target is such an agent, and the bound says
    how many turns it is sent."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..compiler.plan import max_model_calls, most_calls
    from ..targets.kinds import describe, kind_of

    loops = [t for t in p.targets if kind_of(t).is_model]
    own = [t for t in p.targets if not kind_of(t).is_model]
    width = max([len("scenario"), *(len(s.id) for s in p.scenarios)])
    skips = bool(p.skipped)

    def on(s: Scenario, targets: list[Target]) -> int:
        return sum(s.runs_on(t.name) for t in targets)

    def most_turns(s: Scenario) -> int:  # a simulated user's at most; else the script's
        return s.user.max_turns if s.user is not None else max(1, len(s.turns))

    def turns(s: Scenario) -> str:
        return f"≤{most_turns(s)}" if s.user is not None else str(most_turns(s))

    if loops:
        lines = [f"{'scenario':<{width}}  runs  min_pass  max_steps  checks  most calls"
                 + ("  skips" if skips else "")]
    else:
        lines = [f"{'scenario':<{width}}  runs  min_pass  turns  checks"
                 + ("  skips" if skips else "")]
    for s in p.scenarios:
        if loops:
            calls = sum(most_calls(s, t) for t in p.targets)
            line = (f"{s.id:<{width}}  {s.runs:>4}  {s.min_pass:>8}  {s.max_steps:>9}  "
                    f"{len(s.all_checks):>6}  {calls:>10}")
        else:
            line = (f"{s.id:<{width}}  {s.runs:>4}  {s.min_pass:>8}  {turns(s):>5}  "
                    f"{len(s.all_checks):>6}")
        if skips:
            line += "  " + ", ".join(t.name for t in p.targets if not s.runs_on(t.name))
        lines.append(line.rstrip())
    names = ", ".join(f"{t.name} ({describe(t)})" for t in p.targets)
    bounds = []
    calls = max_model_calls(p)
    if loops or calls:
        users = "" if loops else " (the simulated user's)"
        bounds.append(f"at most {calls} model calls{users}")
    if own:
        sent = sum(s.runs * most_turns(s) * on(s, own) for s in p.scenarios)
        who = ("an agent that runs its own loop (its model calls are its own)" if len(own) == 1
               else "agents that run their own loop (their model calls are their own)")
        upto = "at most " if any(s.user is not None for s in p.scenarios) else ""
        bounds.append(f"{upto}{sent} turns sent to {who}")
    judged = ""
    if p.judge_calls:
        judge_name = p.judge.target.name if p.judge else "?"
        judged = (f" and {p.judge_calls} judge questions ({judge_name}; up to "
                  f"{p.judge.tries if p.judge else 1} tries each)")
    lines.append(f"\n{len(p.scenarios)} scenarios × {len(p.targets)} target(s) [{names}] = "
                 f"{p.attempts} attempts; {'; '.join(bounds)}{judged}")
    return "\n".join(lines)


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
    # why: loaded when the command runs (every command's module loads at start)
    from ..compiler.lint import format_result, lint_paths

    selection = selection_of(tags, patterns)
    result = lint_paths(paths or (Path("."),), strict=strict, jobs=jobs, selection=selection)
    use = use_color(sys.stdout) if color is None else color
    click.echo(format_result(result, fmt, color=use, quiet=quiet),  # type: ignore[arg-type]
               nl=False, color=use)
    if result.selected == 0:
        sys.exit(EXIT_INPUT)
    sys.exit(EXIT_FAILED if result.errors else EXIT_OK)


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
    # why: loaded when the command runs (every command's module loads at start)
    from ..init import ABOUT, InitRefused, endpoint_of, init_suite

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
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline.tryout import NotTryable, Terminal, check_lines, intro, play, session_for

    try:
        session = or_exit(lambda: session_for(scenario, target, scenario_id, cassette))
    except NotTryable as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(EXIT_INPUT)
    with contextlib.suppress(ImportError):  # line editing and history for input()
        import readline  # noqa: F401
    for line in intro(session):
        click.echo(line)
    terminal = Terminal(lambda text: click.echo(on_terminal(text)), input)
    try:
        outcome = play(session, terminal)
    except KeyboardInterrupt:
        click.echo("\nInterrupted: nothing was checked.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    for line in check_lines(outcome):
        click.echo(on_terminal(line))
    sys.exit(EXIT_NO_VERDICT if outcome.error is not None else EXIT_OK)


@main.command()
@click.option("--suite", is_flag=True, help="The schema of scenarist.yaml instead.")
def schema(suite: bool) -> None:
    """Print the JSON Schema of scenario files (or of scenarist.yaml) for editors."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..source.resources import resource_path

    name = "suite.schema.json" if suite else "scenario.schema.json"
    click.echo(resource_path("schemas", name).read_text("utf-8"), nl=False)


@main.command()
def checks() -> None:
    """List the checks a scenario can use."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..checks import REGISTRY

    width = max(len(n) for n in REGISTRY)
    for name, c in sorted(REGISTRY.items(), key=lambda kv: (kv[1].group, kv[0])):
        judge = " (judge)" if c.judge else ""
        click.echo(f"{name:<{width}}  {c.doc}{judge}")


