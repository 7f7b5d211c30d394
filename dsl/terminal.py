"""What a person sees in the terminal while and after a run: a progress line on stderr and
a concise summary (failing scenarios first, with their failing checks). Colour follows
the terminal, ``NO_COLOR`` turns it off and ``FORCE_COLOR`` on."""

from __future__ import annotations

import functools
import os
import sys
import time
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from .baseline import Change, Comparison


def use_color(stream: Any = None) -> bool:
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def style(text: str, color: bool, **kw: Any) -> str:
    return click.style(text, **kw) if color else text


class ProgressLine:
    """A one-line progress bar on stderr, redrawn at most ten times a second."""

    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.enabled = enabled
        self.started = time.monotonic()
        self.last = 0.0

    def update(self, record: Any, totals: Any) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.last < 0.1 and totals.attempts < self.total:
            return
        self.last = now
        width = 24
        done = int(width * totals.attempts / max(self.total, 1))
        bar = "#" * done + "." * (width - done)
        line = (f"\r[{bar}] {totals.attempts}/{self.total} attempts · {totals.passed} pass · "
                f"{totals.failed} fail · {totals.errors} error · {now - self.started:.0f}s ")
        sys.stderr.write(line)
        sys.stderr.flush()

    def done(self) -> None:
        if self.enabled:
            sys.stderr.write("\r" + " " * 100 + "\r")
            sys.stderr.flush()


def _pct(x: float | None) -> str:
    return "  –" if x is None else f"{x * 100:3.0f}%"


CHANGE_STYLE = {"regressed": ("▼ regressed", "red"), "improved": ("▲ improved", "green"),
                "inconclusive": ("? flipped within noise", "yellow"), "new": ("new", None)}


def _change(c: Change | None, color: bool) -> str:
    """The change against the baseline, when there is one worth a word."""
    from .baseline import pts

    if c is None or c.status == "unchanged":
        return ""
    if c.status == "inconclusive" and "inconclusive" in (c.verdict_now, c.verdict_before):
        return ""  # the row says ???? already
    text, fg = CHANGE_STYLE[c.status]
    if c.delta is not None:
        text += f" {pts(c.delta)} pts"
    return "  " + (style(text, color, fg=fg, bold=c.status == "regressed") if fg else text)


MAX_SAID = 160  # characters of an endpoint's own words in the terminal (all in the report)


def problem_lines(row: dict[str, Any]) -> list[str]:
    """Each kind of endpoint error (and of failure before the checks: model_output,
    max_steps) in a scenario × target, with what it means in plain words and what the
    server said — the same sentences as the report's (dsl/errors.py)."""
    from .errors import explain

    out = []
    said = row.get("error_messages") or {}
    kinds = {**row.get("error_kinds", {}), **row.get("failure_kinds", {})}
    for kind, n in kinds.items():
        out.append(f"{kind} ×{n}: {explain(kind)}")
        raw = " ".join(str(said.get(kind) or "").split())
        if raw:
            raw = raw if len(raw) <= MAX_SAID else raw[: MAX_SAID - 1] + "…"
            out.append(f"  the server said: {raw}")
    return out


def fewer_attempts(summary: dict[str, Any]) -> list[str]:
    """Why fewer attempts ran than the scenario files ask for: ``--runs`` asked fewer, or
    early stop did not need them (each such scenario's verdict was decided)."""
    from .verdict import words

    rows = summary["scenarios"]
    out = []
    fewer = [r for r in rows if r.get("file_runs", r["planned"]) > r["planned"]]
    if fewer:
        n = fewer[0]["planned"]
        asked = sorted({r["file_runs"] for r in fewer})
        runs = " or ".join(str(a) for a in asked)
        out.append(f"--runs {n}: each scenario ran at most {n} time{'s' if n != 1 else ''}, "
                   f"fewer than the {runs} its file asks for; min_pass was scaled to match "
                   "(run without --runs for the full count).")
    saved = [r for r in rows if r.get("saved")]
    if saved:
        total = sum(r["saved"] for r in saved)
        planned = sum(r["planned"] for r in rows)
        said = []
        for r in saved[:3]:
            what = words(r["verdict"]).past
            why = (": an always check failed" if r.get("verdict_reason") == "always_broken"
                   else "")
            said.append(f"{r['scenario']} {what} after {r['runs']} of {r['planned']}{why}")
        more = f", and {len(saved) - 3} more" if len(saved) > 3 else ""
        out.append(f"Early stop: {total} of the {planned} planned attempts were not run, "
                   "because their scenario's verdict was already decided "
                   f"({'; '.join(said)}{more}); --no-early-stop runs them all.")
    return out


def print_summary(summary: dict[str, Any], *, quiet: bool = False,
                  comparison: Comparison | None = None) -> None:
    """Failing scenarios first, each with its failing checks; then those without a verdict;
    then the passing ones (left out with ``quiet``); then one line of totals."""
    from .verdict import check_title, words

    color = use_color()
    echo = functools.partial(click.echo, color=color)  # click strips colour off a pipe else
    rows = sorted(summary["scenarios"], key=lambda r: words(r["verdict"]).order)
    t = summary["totals"]
    changes = comparison.by_key() if comparison else {}
    width = max((len(r["scenario"]) for r in rows), default=8)
    twidth = max((len(r["target"]) for r in rows), default=6)
    for r in rows:
        if quiet and r["verdict"] == "pass":
            continue
        w = words(r["verdict"])
        mark, fg = w.mark, w.color
        extra = []
        if r["unsure"]:
            extra.append(f"{r['unsure']} unsure")
        if r["errors"]:
            kinds = ", ".join(f"{k}" for k in r["error_kinds"])
            extra.append(f"{r['errors']} error{'s' if r['errors'] != 1 else ''} ({kinds})")
        if r["not_run"]:
            extra.append(f"{r['not_run']} not run")
        if r.get("saved"):
            extra.append(f"{r['saved']} not needed")
        rate = (f" {_pct(r['pass_rate'])} [{_pct(r['ci_low']).strip()}–"
                f"{_pct(r['ci_high']).strip()}]" if r["decided"] else "    –")
        echo(
            f"{style(mark, color, fg=fg, bold=True)}  {r['scenario']:<{width}}  "
            f"{r['target']:<{twidth}}  {r['passes']:>3}/{r['decided']:<3} min {r['min_pass']:<3}"
            + rate + (f"  {'; '.join(extra)}" if extra else "")
            + _change(changes.get((r["scenario"], r["target"])), color)
        )
        if r["verdict"] != "pass":
            for fc in r["failing_checks"][:5]:
                why = ("; once is enough to fail the scenario" if fc.get("always") else "")
                echo(f"      {style('✗', color, fg='red')} {check_title(fc)}  "
                     f"(failed {fc['count']} of {r['decided']}{why})")
            if len(r["failing_checks"]) > 5:
                echo(f"      … and {len(r['failing_checks']) - 5} more failing checks")
            if r.get("verdict_reason") == "always_unseen":
                unseen = r["planned"] - r["decided"]
                echo(f"      {style('?', color, fg='yellow')} an always check must pass in "
                     f"every attempt, and {unseen} of the {r['planned']} did not reach the "
                     "model, so no one knows whether it held there")
        for line in problem_lines(r):  # the server's words under the sentence
            echo(f"        {line.lstrip()}" if line.startswith(" ") else
                 f"      {style('!', color, fg='yellow')} {line}")
    parts = [f"{t['passed']}/{t['scenarios']} passed"]
    if t["failed"]:
        parts.append(style(f"{t['failed']} failed", color, fg="red"))
    if t["inconclusive"]:
        parts.append(style(f"{t['inconclusive']} inconclusive", color, fg="yellow"))
    parts.append(f"{t['attempts']} attempts")
    if t["unsure"]:
        parts.append(f"{t['unsure']} unsure")
    if t["errors"]:
        parts.append(style(f"{t['errors']} endpoint errors", color, fg="yellow"))
    parts.append(f"{t['tokens']:,} tokens")
    if t.get("judge_questions"):
        cached = t["judge_questions"] - t["judge_asked"]
        q = t["judge_questions"]
        validation = (summary.get("judge") or {}).get("validation")
        parts.append(f"judge: {q} question{'s' if q != 1 else ''} ({cached} cached), "
                     f"{t['judge_tokens']:,} tokens" + (f", {validation}" if validation else ""))
    early = summary.get("early_stop") or {}
    if early.get("runs"):
        parts.append(f"early stop saved {early['runs']} runs (~{early['model_calls']} model "
                     "calls)")
    if summary.get("duration_s"):
        parts.append(f"{summary['duration_s']:.1f}s")
    echo("\n" + " · ".join(parts))
    for line in fewer_attempts(summary):
        echo(line)
    if comparison is not None:
        counts = comparison.counts()
        said = [f"{n} {status}" for status, n in counts.items() if n]
        if comparison.removed:
            said.append(f"{len(comparison.removed)} removed")
        base = comparison.baseline_run_id or "the baseline"
        line = f"Against {base}: " + (", ".join(said) or "nothing to compare")
        echo(style(line, color, fg="red", bold=True) if counts["regressed"] else line)
