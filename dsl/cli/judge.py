"""``scenarist judge-check``: how far the judge agrees with hand labels (dsl/pipeline/judgecheck.py
measures it; this prints it)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING

import click

from ..results.terminal import style, use_color
from .common import main, or_exit

if TYPE_CHECKING:
    from ..judge.calibration import Figures
    from ..model import Calibration
    from ..pipeline.judgecheck import Calibrated


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
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline.judgecheck import JudgeCheck, NoJudge, check_judge
    from ..targets.kinds import model_named

    request = JudgeCheck(labels, judge_target, not no_judge_cache, concurrency, calibrate, mode)
    try:
        checked = or_exit(lambda: check_judge(request))
    except NoJudge as exc:
        raise click.UsageError(str(exc)) from None
    if checked.not_kept is not None:
        click.echo(f"warning: the result was not kept: {checked.not_kept}", err=True)
    data, target, config = checked.report, checked.target, checked.config
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
    model = config.model or model_named(target) or target.kind
    click.echo(f"\n{data['examples']} examples, judge {target.name} ({model}, "
               f"{config.mode} mode): agreement {agreement} on {data['decided']} decided, "
               f"Cohen's kappa {kappa}; {data['unsure']} unsure, {data['errors']} errors")
    for check, s in data["by_check"].items():
        k = "–" if s["kappa"] is None else f"{s['kappa']:.2f}"
        click.echo(f"  {check}: agreement {s['agreement']:.0%} on {s['decided']}, kappa {k}")
    if calibrate:
        for line in _calibration_lines(checked.calibrated, checked.grounded):
            click.echo(line)
    if checked.kept is not None:
        root = checked.suite_root
        shown = checked.kept.relative_to(root) if checked.kept.is_relative_to(root) else \
            checked.kept
        click.echo(f"\nKept in {shown}: reports show this judge's kappa and coverage.")


def _figures_row(label: str, f: Figures, calibration: Calibration | None = None) -> str:
    def pct(x: float | None) -> str:
        return "–" if x is None else f"{x:.0%}"

    def num(x: float | None, digits: int = 2) -> str:
        return "–" if x is None else f"{x:.{digits}f}"

    yes_no, digits = (("–", "–") if calibration is None else
                      (f"{calibration.yes_no:g}", f"{calibration.digits:g}"))
    return (f"  {label:<14} {yes_no:>6} {digits:>6} {pct(f.agreement):>9} {num(f.kappa):>6} "
            f"{num(f.brier, 3):>6} {num(f.ece, 3):>6} {pct(f.coverage):>8} | "
            f"{pct(f.agreement_covered):>9} {num(f.kappa_covered):>6}")


def _calibration_lines(c: Calibrated, grounded: Figures | None) -> list[str]:
    # why: loaded when the command runs (every command's module loads at start)
    from ..pipeline.judgecheck import calibration_block

    n = c.questions
    lines = [f"\nCalibration ({c.mode} mode, min_confidence {c.min_confidence:g}; "
             f"{n['yes_no']} yes/no and {n['digits']} digit questions):",
             f"  {'':<14} {'yes_no':>6} {'digits':>6} {'agreement':>9} {'kappa':>6} "
             f"{'Brier':>6} {'ECE':>6} {'coverage':>8} | {'agreement':>9} {'kappa':>6}"]
    if c.fitted is None or c.after is None:  # (they are fitted and measured together)
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


def _edge_notes(c: Calibrated) -> list[str]:
    """A temperature fitted at the edge of the search says the fit found nothing."""
    # why: loaded when the command runs (every command's module loads at start)
    from ..judge.calibration import TEMPERATURE_RANGE

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


