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

from ..errors import STDERR_QUOTE, explain, on_terminal, said_label, said_short

if TYPE_CHECKING:
    from ..execution.run import Totals
    from ..store import AttemptRecord
    from ..store.summaryfile import Summary, SummaryRow
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

    def update(self, record: AttemptRecord, totals: Totals) -> None:
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
                "inconclusive": ("? flipped within noise", "yellow"), "new": ("new", None),
                "removed": ("removed", None)}


def _change(c: Change | None, color: bool) -> str:
    """The change against the baseline, when there is one worth a word."""
    # why: the comparison with a baseline; not for plan, lint, runs, checks or schema
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


def problem_lines(row: SummaryRow) -> list[str]:
    """Each kind of endpoint error (and of failure before the checks: model_output,
    max_steps) in a scenario × target, with what it means in plain words and what the
    server said (or, when no server said anything, what happened) — the same sentences as
    the report's (dsl/errors.py)."""
    out = []
    for kind, n in row.problem_kinds.items():
        out.append(f"{kind} ×{n}: {explain(kind)}")
        raw = " ".join(on_terminal(row.error_messages.get(kind, "")).split())
        head, quote, stderr = raw.partition(STDERR_QUOTE)
        if head:
            out.append(f"  {said_label(kind)}: {said_short(head, MAX_SAID)}")
        if quote:  # an agent program's standard error: its end, where the exception is
            tail = stderr if len(stderr) <= MAX_SAID else "…" + stderr[-(MAX_SAID - 1):]
            out.append(f"  {STDERR_QUOTE.strip('; ')} {tail}")
    return out


def retried_words(n: int) -> str:
    """What the terminal says of a row whose own-loop turns were sent again."""
    one = n == 1
    return (f"{n} turn{'' if one else 's'} {'was' if one else 'were'} sent again after a "
            f"failed try (retry: {{turns: true}}): what {'that try' if one else 'those tries'}"
            " did was discarded and the world put back; the report says why")


def fewer_attempts(summary: Summary) -> list[str]:
    """Why fewer attempts ran than the scenario files ask for: ``--runs`` asked fewer, or
    early stop did not need them (each such scenario's verdict was decided)."""
    # why: the verdict rule; runs, checks or schema load this module without it
    from ..verdict import words

    rows = summary.scenarios
    out = []
    fewer = [r for r in rows if r.runs_asked > r.planned]
    if fewer:
        n = fewer[0].planned
        asked = sorted({r.runs_asked for r in fewer})
        runs = " or ".join(str(a) for a in asked)
        out.append(f"--runs {n}: each scenario ran at most {n} time{'s' if n != 1 else ''}, "
                   f"fewer than the {runs} its file asks for; min_pass was scaled to match "
                   "(run without --runs for the full count).")
    saved = [r for r in rows if r.saved]
    if saved:
        total = sum(r.saved for r in saved)
        planned = sum(r.planned for r in rows)
        said = []
        for r in saved[:3]:
            what = words(r.verdict).past
            why = ": an always check failed" if r.verdict_reason == "always_broken" else ""
            said.append(f"{r.scenario} {what} after {r.runs} of {r.planned}{why}")
        more = f", and {len(saved) - 3} more" if len(saved) > 3 else ""
        out.append(f"Early stop: {total} of the {planned} planned attempts were not run, "
                   "because their scenario's verdict was already decided "
                   f"({'; '.join(said)}{more}); --no-early-stop runs them all.")
    return out


def print_summary(summary: Summary, *, quiet: bool = False,
                  comparison: Comparison | None = None) -> None:
    """Failing scenarios first, each with its failing checks; then those without a verdict;
    then the passing ones (left out with ``quiet``); then one line of totals."""
    # why: the verdict rule and the words of a summary; runs, checks, lint or schema load
    # this module without them
    from ..verdict import check_title, words
    from .words import tokens_text

    color = use_color()
    echo = functools.partial(click.echo, color=color)  # click strips colour off a pipe else
    rows = sorted(summary.scenarios, key=lambda r: words(r.verdict).order)
    t = summary.totals
    changes = comparison.by_key() if comparison else {}
    width = max((len(r.scenario) for r in rows), default=8)
    twidth = max((len(r.target) for r in rows), default=6)
    for r in rows:
        if quiet and r.verdict == "pass":
            continue
        w = words(r.verdict)
        mark, fg = w.mark, w.color
        extra = []
        if r.unsure:
            extra.append(f"{r.unsure} unsure")
        if r.errors:
            kinds = ", ".join(f"{k}" for k in r.error_kinds)
            extra.append(f"{r.errors} error{'s' if r.errors != 1 else ''} ({kinds})")
        if r.not_run:
            extra.append(f"{r.not_run} not run")
        if r.saved:
            extra.append(f"{r.saved} not needed")
        rate = (f" {_pct(r.pass_rate)} [{_pct(r.ci_low).strip()}–"
                f"{_pct(r.ci_high).strip()}]" if r.decided else "    –")
        echo(
            f"{style(mark, color, fg=fg, bold=True)}  {r.scenario:<{width}}  "
            f"{r.target:<{twidth}}  {r.passes:>3}/{r.decided:<3} min {r.min_pass:<3}"
            + rate + (f"  {'; '.join(extra)}" if extra else "")
            + _change(changes.get(r.key), color)
        )
        if r.verdict != "pass":
            # a broken always check is never among the "more": it decided the verdict
            failing = r.failing_checks
            shown = [fc for i, fc in enumerate(failing) if i < 5 or fc.always]
            for fc in shown:
                why = "; once is enough to fail the scenario" if fc.always else ""
                echo(f"      {style('✗', color, fg='red')} {check_title(fc)}  "
                     f"(failed {fc.count} of {r.decided}{why})")
            if len(failing) > len(shown):
                echo(f"      … and {len(failing) - len(shown)} more failing checks")
            if r.verdict_reason == "always_unseen":
                unseen = r.planned - r.decided
                echo(f"      {style('?', color, fg='yellow')} an always check must pass in "
                     f"every attempt, and {unseen} of the {r.planned} did not reach the "
                     "model, so no one knows whether it held there")
        for line in problem_lines(r):  # the server's words under the sentence
            echo(f"        {line.lstrip()}" if line.startswith(" ") else
                 f"      {style('!', color, fg='yellow')} {line}")
        if r.turns_retried:
            echo(f"      {style('↻', color, fg='yellow')} {retried_words(r.turns_retried)}")
        # after what really failed, the checks that could not decide (counted neither way)
        for c in r.checks if r.verdict != "pass" else ():
            if c.not_evaluated:
                # why: the words of a row; plan, lint, runs, checks or schema load this module
                # without it
                from .words import unseen_why

                echo(f"      {style('–', color, fg='cyan')} {check_title(c)}  (not evaluated "
                     f"in {c.not_evaluated} of {r.decided}: {unseen_why([c])})")
    skipped = summary.skipped
    for k in (() if quiet else skipped):
        echo(f"{style('SKIP', color, fg='cyan', bold=True)}  {k.scenario:<{width}}  "
             f"{k.target:<{twidth}}  {k.reason}")
    missing = summary.missing_shards
    if missing:
        # why: the words of a row; plan, lint, runs, checks or schema load this module without it
        from .words import not_run_reason

        for m in missing:  # shown even with --quiet: a scenario that never ran is a problem
            for sid in m.scenarios if m.scenarios is not None else (f"shard {m.name}",):
                echo(f"{style('MISS', color, fg='yellow', bold=True)}  {sid:<{width}}  "
                     f"{not_run_reason(m)}")
    parts = [f"{t.passed}/{t.scenarios} passed"]
    if missing:
        known = [sid for m in missing for sid in m.scenarios or ()]
        unknown = [m for m in missing if m.scenarios is None]
        lost = (f"{len(known)} scenario{'s' if len(known) != 1 else ''} not run"
                if known else "")
        if unknown:
            lost += (" and " if lost else "") + "the scenarios of " + ", ".join(
                f"shard {m.name}" for m in unknown) + " not run"
        parts.append(style(lost + " (missing shards)", color, fg="yellow"))
    if t.failed:
        parts.append(style(f"{t.failed} failed", color, fg="red"))
    if t.inconclusive:
        parts.append(style(f"{t.inconclusive} inconclusive", color, fg="yellow"))
    if skipped:
        parts.append(f"{len(skipped)} skipped")
    parts.append(f"{t.attempts} attempts")
    if t.unsure:
        parts.append(f"{t.unsure} unsure")
    if t.errors:
        parts.append(style(f"{t.errors} endpoint errors", color, fg="yellow"))
    parts.append(tokens_text(t.tokens, t.tokens_unknown))
    if t.judge_questions:
        cached = t.judge_questions - t.judge_asked
        q = t.judge_questions
        validation = summary.judge.validation if summary.judge else ""
        parts.append(f"judge: {q} question{'s' if q != 1 else ''} ({cached} cached), "
                     f"{t.judge_tokens:,} tokens" + (f", {validation}" if validation else ""))
    early = summary.early_stop
    if early is not None and early.runs:
        parts.append(f"early stop saved {early.runs} runs (~{early.model_calls} model "
                     "calls)")
    if summary.duration_s:
        parts.append(f"{summary.duration_s:.1f}s")
    echo("\n" + " · ".join(parts))
    for line in fewer_attempts(summary):  # what the totals' counts leave unsaid
        echo(line)
    tools = summary.tool_calls.all
    if tools.relevant:
        # why: the words of a row; plan, lint, runs, checks or schema load this module without it
        from .words import prf_text

        by_target = summary.tool_calls.by_target
        line = f"Tool calls: {prf_text(tools)}"
        if len(by_target) > 1:
            line += "; " + ", ".join(f"{name} F1 {_pct(c.f1).strip()}"
                                     for name, c in by_target.items())
        echo(line)
    if comparison is not None:
        counts = comparison.counts()
        said = [f"{n} {status}" for status, n in counts.items() if n]
        base = comparison.baseline_run_id or "the baseline"
        line = f"Against {base}: " + (", ".join(said) or "nothing to compare")
        echo(style(line, color, fg="red", bold=True) if counts["regressed"] else line)
    for pair in summary.compare:
        # why: the comparison with a baseline; not for plan, lint, runs, checks or schema
        from .baseline import Comparison as _Comparison

        echo("")
        print_pair(_Comparison.from_json(pair), color)


def _side(side: Any) -> str:
    # why: the words of a row; plan, lint, runs, checks or schema load this module without it
    from .words import side_text

    return side_text(side)


def print_pair(c: Comparison, color: bool) -> None:
    """``run --compare old:new``: each scenario's two pass rates and the change."""
    echo = functools.partial(click.echo, color=color)
    echo(f"{c.after} against {c.before}:")
    rows = c.ordered()
    width = max([len("scenario"), *(len(ch.scenario) for ch in rows)])
    w_old = max([len(c.before), *(len(_side(ch.before)) for ch in rows)])
    w_new = max([len(c.after), *(len(_side(ch.now)) for ch in rows)])
    echo(f"  {'scenario':<{width}}  {c.before:<{w_old}}  {c.after:<{w_new}}  change")
    for ch in rows:
        echo(f"  {ch.scenario:<{width}}  {_side(ch.before):<{w_old}}  {_side(ch.now):<{w_new}}"
             f"  {_change_words(ch, color)}")
    counts = c.counts()
    line = "  " + ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    echo(style(line, color, fg="red", bold=True) if counts["regressed"] else line)


def _change_words(c: Change, color: bool) -> str:
    # why: the comparison with a baseline; not for plan, lint, runs, checks or schema
    from .baseline import describe_delta

    text, fg = CHANGE_WORDS[c.status]
    if c.delta is not None:
        text += f" {describe_delta(c.delta, c.interval)}"
    return style(text, color, fg=fg, bold=c.status == "regressed") if fg else text


CHANGE_WORDS: dict[str, tuple[str, str | None]] = {
    "regressed": ("▼ regressed", "red"), "improved": ("▲ improved", "green"),
    "inconclusive": ("? inconclusive", "yellow"), "new": ("new", None),
    "removed": ("removed", None), "unchanged": ("= unchanged", None)}


def print_comparison(c: Comparison, *, quiet: bool = False) -> None:
    """``scenarist diff`` as text: one line per scenario × target (without the unchanged
    ones with ``quiet``), what needs a look first, then the counts."""
    color = use_color()
    echo = functools.partial(click.echo, color=color)
    rows = [ch for ch in c.ordered() if not (quiet and ch.status == "unchanged")]
    width = max((len(ch.scenario) for ch in rows), default=8)
    twidth = max((len(ch.target) for ch in rows), default=6)
    w_old = max((len(_side(ch.before)) for ch in rows), default=1)
    w_new = max((len(_side(ch.now)) for ch in rows), default=1)
    # why: the words of a row; plan, lint, runs, checks or schema load this module without it
    from .words import runs_needed_text

    for ch in rows:
        echo(f"{ch.scenario:<{width}}  {ch.target:<{twidth}}  {_side(ch.before):>{w_old}} → "
             f"{_side(ch.now):<{w_new}}  {_change_words(ch, color)}")
        unseen = _too_few_runs(ch)
        if unseen is not None:  # a change the interval cannot tell from noise yet
            before, now = unseen
            echo(f"    {runs_needed_text(before, now)} (this comparison had "
                 f"{ch.before.decided if ch.before else 0} and "
                 f"{ch.now.decided if ch.now else 0})")
    counts = c.counts()
    said = ", ".join(f"{n} {status}" for status, n in counts.items() if n)
    line = f"{c.after or 'the new run'} against {c.before or 'the baseline'}: " + (
        said or "nothing to compare")
    echo(("\n" if rows else "") + (style(line, color, fg="red", bold=True)
                                   if counts["regressed"] else line))


def _too_few_runs(ch: Change) -> tuple[float, float] | None:
    """The two rates of a change whose 95% interval still spans 0 (too few runs to tell
    it from noise), or None."""
    before, now = ch.rate_before, ch.rate_now
    if (before is None or now is None or before == now or ch.interval is None
            or ch.interval.excludes_zero()):
        return None
    return before, now


def _when(iso: str | None) -> str:
    """``2026-11-30 09:15`` (UTC) from an ISO time; ``–`` when there is none."""
    # why: the moment in words; diff or schema load this module without it
    from ..compiler.moment import minute

    return minute(iso, missing="–")


def _rate_ci(rate: float | None, low: float, high: float) -> str:
    return "–" if rate is None else f"{rate * 100:.0f}% [{low * 100:.0f}–{high * 100:.0f}]"


def print_runs(runs: list[Any], where: str, trends: dict[Any, Any], scenario: str | None,
               target: str | None) -> None:
    """``scenarist runs list``: the latest runs first, one line each (with ``--scenario``,
    its verdict and pass rate in each run)."""
    color = use_color()
    echo = functools.partial(click.echo, color=color)
    if not runs:
        what = " that ran " + scenario if scenario else ""
        what += (" on " if scenario else " against ") + target if target else ""
        echo(f"No runs{what} in the history {where}.")
        return
    points: dict[tuple[str, str], Any] = {}
    for (_, tgt), found in trends.items():
        for p in found:
            points[(p.run_id, tgt)] = p
    width = max(len(r.run_id) for r in runs)
    for r in runs:
        commit = (r.git_commit or "")[:8] or "–"
        branch = f" {r.git_branch}" if r.git_branch else ""
        names = ", ".join(f"{t.name} ({t.model})" if t.model else t.name for t in r.targets)
        line = (f"{r.run_id:<{width}}  {_when(r.started_at)}  {commit}{branch}  "
                f"{r.passed}/{r.scenarios} passed  {names}")
        if r.recheck_of:
            line += f"  (recheck of {r.recheck_of})"
        echo(line)
        if scenario:
            for t in r.targets:
                if target and t.name != target:
                    continue
                p = points.get((r.run_id, t.name))
                if p is not None:
                    w = _verdict_words(p.verdict)
                    echo(f"    {style(w.mark, color, fg=w.color, bold=True)}  {t.name}  "
                         f"{p.passes}/{p.decided}  {_rate_ci(p.pass_rate, p.ci_low, p.ci_high)}")
    echo(f"\n{len(runs)} run{'s' if len(runs) != 1 else ''} in the history {where}")


def _verdict_words(verdict: str) -> Any:
    # why: the verdict rule; runs, checks or schema load this module without it
    from ..verdict import words

    return words(verdict)


def print_run(entry: Any) -> None:
    """``scenarist runs show ID``: the run, its targets, and every scenario × target."""
    color = use_color()
    echo = functools.partial(click.echo, color=color)
    echo(f"Run {entry.run_id}" + (f" (a recheck of {entry.recheck_of})"
                                  if entry.recheck_of else ""))
    echo(f"  started   {_when(entry.started_at)}" + (f", finished {_when(entry.finished_at)}"
                                                     if entry.finished_at else ""))
    if entry.git_commit:
        echo(f"  commit    {entry.git_commit}" + (f" ({entry.git_branch})"
                                                  if entry.git_branch else ""))
    if entry.suite:
        echo(f"  suite     {entry.suite}")
    echo("  targets   " + ", ".join(f"{t.name} ({t.model})" if t.model else t.name
                                    for t in entry.targets))
    if entry.run_dir:
        echo(f"  folder    {entry.run_dir}")
    rate = "–" if entry.pass_rate is None else f"{entry.pass_rate * 100:.0f}%"
    echo(f"  result    {entry.passed}/{entry.scenarios} passed, {entry.failed} failed, "
         f"{entry.inconclusive} without a verdict; {rate} of {entry.attempts} attempts passed"
         + ("; interrupted" if entry.interrupted else ""))
    if not entry.results:
        return
    echo("")
    width = max(len(r.scenario) for r in entry.results)
    twidth = max(len(r.target) for r in entry.results)
    for r in sorted(entry.results, key=lambda r: (_verdict_words(r.verdict).order,
                                                  r.scenario, r.target)):
        w = _verdict_words(r.verdict)
        echo(f"{style(w.mark, color, fg=w.color, bold=True)}  {r.scenario:<{width}}  "
             f"{r.target:<{twidth}}  {r.passes:>3}/{r.decided:<3} min {r.min_pass:<3} "
             f"{_rate_ci(r.pass_rate, r.ci_low, r.ci_high)}")


def _ms(x: float | None) -> str:
    return "–" if x is None else f"{x:,.0f}"


CERTIFICATION_COLOR = {"certified": "green", "not certified": "red", "inconclusive": "yellow"}


def print_conformance(cert: Any) -> None:
    """``scenarist conformance``: each behaviour certified, not certified or inconclusive,
    tool-call precision, recall and F1, latency, the regressions against a baseline, and the
    conclusion (a :class:`dsl.results.conformance.Certificate`)."""
    # why: the verdict rule and more; not for plan, lint, diff, runs, checks or schema
    from ..verdict import words
    from .baseline import describe_delta
    from .summarize import tool_counts
    from .words import prf_text, side_text

    color = use_color()
    echo = functools.partial(click.echo, color=color)
    rows = cert.behaviours
    width = max([len("case"), *(len(b.case) for b in rows)])
    swidth = max(len(s) for s in CERTIFICATION_COLOR)
    counts = [f"{b.passes}/{b.decided}" for b in rows]
    cwidth = max([len("passed"), *(len(c) for c in counts)])
    echo(f"\nConformance of {cert.target} ({cert.endpoint}):")
    echo(f"  {'case':<{width}}  {'status':<{swidth}}  {'passed':>{cwidth}}  min  {'p50 ms':>7}"
         f"  {'p95 ms':>7}  certifies")
    for b, n in zip(rows, counts, strict=True):
        status = style(f"{b.status:<{swidth}}", color, fg=CERTIFICATION_COLOR[b.status],
                       bold=b.status != "certified")
        echo(f"  {b.case:<{width}}  {status}  {n:>{cwidth}}  {b.min_pass:>3}  "
             f"{_ms(b.p50_ms):>7}  {_ms(b.p95_ms):>7}  {b.certifies}")
    tools = cert.tool_calls
    echo("Tool calls: " + (prf_text(tool_counts(tools)) if tools.relevant
                           else "nothing to count (no attempt of a case that expects a tool "
                                "call, or none, reached the endpoint)"))
    if cert.timed:
        echo(f"Latency per attempt: p50 {_ms(cert.p50_ms)} ms, p95 {_ms(cert.p95_ms)} ms "
             f"(over {cert.timed} attempt{'s' if cert.timed != 1 else ''})")
    else:
        echo("Latency per attempt: no attempt reached the endpoint")
    if cert.errors:
        n = sum(cert.errors.values())
        kinds = ", ".join(f"{k} ×{v}" for k, v in sorted(cert.errors.items()))
        echo(f"Endpoint errors: {n} ({kinds})")
    if cert.baseline is not None:
        said = ", ".join(f"{n} {status}" for status, n in (cert.changes or {}).items())
        if not cert.regressions:
            echo(f"Regressions against {cert.baseline}: none ({said or 'nothing to compare'})")
        else:
            echo(style(f"Regressions against {cert.baseline}: {len(cert.regressions)} "
                       f"({said})", color, fg="red", bold=True))
            for c in cert.regressions:
                echo(f"  ▼ {c.scenario}  {side_text(c.before)} → {side_text(c.now)}  "
                     f"{describe_delta(c.delta, c.interval)}")
    worst = "pass" if cert.certified else (
        "fail" if cert.with_status("not certified") else "inconclusive")
    echo(style(f"Conclusion: {cert.conclusion}", color, fg=words(worst).color, bold=True))
