"""The words for a summary row, shared by every surface that shows one — the report, the
terminal and the CI files (junit.xml, summary.md, GitHub annotations): a rate and its
interval, a check's rate, tool-call F1, one side of a comparison, what a target runs, and a
scenario × target's outcome in one paragraph. (The verdicts' own words are dsl/verdict.py's;
a comparison's are dsl/results/baseline.py's.)"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

from ..store.planfile import PlannedTarget
from ..store.runfile import MissingShard
from ..store.summaryfile import CheckRow, SummaryRow, ToolCounts
from ..targets.kinds import what_it_runs
from ..verdict import check_title
from .baseline import Side
from .stats import (
    MAX_POWER_RUNS,
    POWER,
    GateRule,
    gate_power,
    runs_to_see,
    smallest_gate,
    wilson,
)


def pct(x: float | None) -> str:
    return "–" if x is None else f"{x * 100:.0f}%"


def ci_text(row: SummaryRow) -> str:
    return f"{row.ci_low * 100:.0f}–{row.ci_high * 100:.0f}%"


def rate_text(row: SummaryRow) -> str:
    """``60% (23–88%)``: the pass rate and its 95% interval; ``–`` when nothing was decided."""
    return f"{pct(row.pass_rate)} ({ci_text(row)})" if row.decided else "–"


def side_text(side: Side | None) -> str:
    """One side of a change: ``3/5 60% (23–88%)``; ``–`` when it has no decided attempt."""
    if side is None or not side.decided:
        return "–"
    low, high = wilson(side.passes, side.decided)
    return (f"{side.passes}/{side.decided} {pct(side.rate)} "
            f"({low * 100:.0f}–{high * 100:.0f}%)")


def check_text(check: CheckRow) -> str:
    """A check's pass rate with its interval: ``40%, 95% CI 12–77%``."""
    if not check.evaluated:
        return "–"
    return (f"{pct(check.pass_rate)}, 95% CI {check.ci_low * 100:.0f}–"
            f"{check.ci_high * 100:.0f}%")


class Counted(Protocol):
    """Tool-call counts as a summary or the report keeps them."""

    @property
    def tp(self) -> int: ...
    @property
    def fp(self) -> int: ...
    @property
    def fn(self) -> int: ...
    @property
    def tn(self) -> int: ...
    @property
    def recall(self) -> float: ...
    @property
    def expected(self) -> int | None: ...


def recall_text(t: Counted) -> str:
    """``recall 85%``. When recall counts nothing (no TP, no FN) it says why, truly: calls
    were expected and each attempt made one of them but not the right calls (a forbidden
    call beside, an expected tool missing): ``recall not measured (every attempt made an
    expected call, and none the right calls)``; no counted attempt expected one: ``no calls
    were expected``; no attempt was counted (each ended in an error): ``no attempt was
    counted``."""
    if t.tp + t.fn:
        return f"recall {pct(t.recall)}"
    if t.expected:
        return "recall not measured (every attempt made an expected call, and none the right " \
               "calls)"
    return "no calls were expected" if t.fp + t.tn else "no attempt was counted"


def prf_text(t: ToolCounts) -> str:
    """``F1 87% (precision 90%, recall 85%; 17 right, 2 wrong, 3 missed)``; when no call
    was expected anywhere, recall has nothing to measure and says so: ``F1 0% (precision
    0%, no calls were expected; 0 right, 2 wrong, 0 missed)`` (:func:`recall_text`). An
    attempt that called another tool instead of the expected one is both wrong and missed
    (dsl/toolcalls.py)."""
    return (f"F1 {pct(t.f1)} (precision {pct(t.precision)}, {recall_text(t)}; "
            f"{t.tp} right, {t.fp} wrong, {t.fn} missed)")


def missing_text(m: MissingShard, shown: Callable[[str], str] = str) -> str:
    """What a merge without shard ``m`` left out, in one sentence: ``shard 2/3 is missing
    from the merge: its 2 scenarios were not run: b, e`` (each id as ``shown`` shows it)."""
    if m.scenarios is None:
        return (f"shard {m.name} is missing from the merge: the scenarios it holds were not "
                "run (which ones is not known: the shards were run by a Scenarist that did "
                "not keep the whole plan's scenarios)")
    n = len(m.scenarios)
    return (f"shard {m.name} is missing from the merge: its {n} scenario"
            f"{'s were' if n != 1 else ' was'} not run: {', '.join(map(shown, m.scenarios))}")


def missing_shards_text(missing: Sequence[MissingShard]) -> str:
    """Every shard a merge lacks, in one sentence: ``shard(s) 2/4, 3/4 are missing: their
    scenarios were not run: b, c, f``."""
    names = ", ".join(m.name for m in missing)
    known = [sid for m in missing for sid in m.scenarios or ()]
    unknown = [m.name for m in missing if m.scenarios is None]
    said = f"their scenarios were not run: {', '.join(known)}" if known else \
        "their scenarios were not run"
    if unknown:
        said += (f" (which scenarios shard(s) {', '.join(unknown)} hold is not known: the "
                 "shards were run by a Scenarist that did not keep the whole plan's "
                 "scenarios)")
    return f"shard(s) {names} are missing: {said}"


def not_run_reason(m: MissingShard) -> str:
    """Why one of a missing shard's scenarios has no row: ``not run: shard 2/3 is missing
    from the merge``."""
    return f"not run: shard {m.name} is missing from the merge"


def kinds_text(kinds: Mapping[str, int]) -> str:
    return ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in kinds.items())


def outcome_text(row: SummaryRow) -> str:
    """One scenario × target's result in one paragraph, e.g.

    ``2 of 5 attempts passed (40%, 95% CI 12–77%); min_pass is 4 of 5. Failing checks:
    contains: "18:00" (failed 3 of 5).``
    """
    if row.decided:
        text = (f"{row.passes} of {row.decided} attempts passed "
                f"({pct(row.pass_rate)}, 95% CI {ci_text(row)}); "
                f"min_pass is {row.min_pass} of {row.planned}.")
    else:
        text = f"no attempt passed or failed; min_pass is {row.min_pass} of {row.planned}."
    if row.verdict_reason == "always_broken":
        n = row.always_broken
        text += (f" An always check failed in {n} attempt{'s' if n != 1 else ''}: that fails "
                 "the scenario whatever min_pass says.")
    elif row.verdict_reason == "always_unseen":
        text += (" An always check must pass in every attempt, and some did not reach the "
                 "model.")
    if row.verdict == "inconclusive":
        text = "No verdict: " + text
    extra = []
    if row.unsure:
        extra.append(f"{row.unsure} unsure (the judge could not tell)")
    if row.errors:
        extra.append(f"{row.errors} ended in endpoint errors ({kinds_text(row.error_kinds)})")
    if row.not_run:
        extra.append(f"{row.not_run} not run")
    if extra:
        text += " " + "; ".join(extra) + "."
    failed_first = failed_before_checks(row)
    if failed_first:
        text += " " + failed_first
    failing = row.failing_checks
    if failing:
        text += " Failing checks: " + "; ".join(
            f"{check_title(fc)} (failed {fc.count} of {row.decided})" for fc in failing) + "."
    unseen = not_evaluated_text(row)
    if unseen:
        text += " " + unseen
    return text


def failed_before_checks(row: SummaryRow) -> str:
    """What really failed when attempts failed before their checks could decide (a turn
    that failed: max_steps, a confirm with nothing waiting; a reply the server could not
    parse), in the words of the first such attempt: ``2 attempts failed before their checks
    could decide: turn 1: reached max_steps (3 model calls) without a text answer.``"""
    kinds = row.failure_kinds
    if not kinds:
        return ""
    n = sum(kinds.values())
    said = "; ".join(dict.fromkeys(row.error_messages.get(k) or k for k in kinds))
    return (f"{n} attempt{'s' if n != 1 else ''} failed before {'their' if n != 1 else 'its'} "
            f"checks could decide: {said.rstrip('.')}.")


def unseen_why(checks: Sequence[CheckRow]) -> str:
    """Why these checks were not evaluated (``not_evaluated``), in words every surface
    uses: ``its turn was never played``; ``the attempt failed before it could decide``
    (``not_decided``: max_steps, a reply the server could not parse); or both."""
    decided_not = sum(c.not_decided for c in checks)
    if not decided_not:
        return "its turn was never played"
    if decided_not == sum(c.not_evaluated for c in checks):
        return "the attempt failed before it could decide"
    return "its turn was never played, or the attempt failed before it could decide"


def not_evaluated_text(row: SummaryRow) -> str:
    """The checks that were not evaluated, which count neither way, by why: ``Not evaluated
    (the attempt failed before they could decide, so they count neither way): non_empty (in
    3 of 3 attempts). Not evaluated (their turn was never played, so they count neither
    way): turn 2 · not_contains: "4111" [always] (in 3 of 3 attempts).``"""
    out = []
    for why, group in unseen_groups(row.checks):
        out.append(f"Not evaluated ({why}, so they count neither way): " + "; ".join(
            f"{check_title(c)} (in {n} of {row.decided} attempts)" for c, n in group) + ".")
    return " ".join(out)


def unseen_groups(checks: Sequence[CheckRow]) -> list[tuple[str, list[tuple[CheckRow, int]]]]:
    """The checks not evaluated, by why — ``the attempt failed before they could decide``,
    then ``their turn was never played`` — each with the attempts it was so in."""
    failed = [(c, c.not_decided) for c in checks if c.not_decided]
    unplayed = [(c, c.not_evaluated - c.not_decided) for c in checks
                if c.not_evaluated > c.not_decided]
    return [(why, group) for why, group in
            (("the attempt failed before they could decide", failed),
             ("their turn was never played", unplayed)) if group]


def target_what(target: PlannedTarget) -> str:
    """What a target runs: its model, cassette or entry point (its kind says which)."""
    return what_it_runs(target) or target.kind


def power_lines(gates: list[tuple[str, int, int, GateRule]], p_good: float, p_bad: float
                ) -> list[str]:
    """``scenarist plan --power``: for each scenario (id, runs, min_pass, its rule:
    :func:`dsl.results.stats.gate_rule`), how often its gate passes an agent at ``p_good``
    and one at ``p_bad`` (:func:`dsl.results.stats.gate_power`, as ``--json`` says it); then
    the smallest gate that tells them apart — one for the gates without an ``always`` rule,
    one for those with (docs/statistics.md)."""
    good, bad = pct(p_good), pct(p_bad)
    width = max([len("scenario"), *(len(g[0]) for g in gates)])
    powers = [(sid, runs, need, gate_power(runs, need, p_good, p_bad, rule))
              for sid, runs, need, rule in gates]
    cells = [(_chance(pw.pass_chance_good, pw.good_most),
              _chance(pw.pass_chance_bad, None) if pw.bad_least is None
              else _chance(pw.bad_least, pw.pass_chance_bad)) for *_, pw in powers]
    wide = max([11, *(len(c) for pair in cells for c in pair)])
    named = [f"{need}/{runs}" + (" always" if pw.rule != "min_pass" else "")
             for _, runs, need, pw in powers]
    gw = max([7, *map(len, named)])
    out = [f"How often each gate passes an agent whose true pass rate is {good}, and one "
           f"whose rate is {bad} (exact binomial):",
           f"{'scenario':<{width}}  {'gate':<{gw}}  {'passes ' + good:>{wide}}  "
           f"{'passes ' + bad:>{wide}}"]
    for (sid, *_, pw), gate, (on_good, on_bad) in zip(powers, named, cells, strict=True):
        out.append(f"{sid:<{width}}  {gate:<{gw}}  {on_good:>{wide}}  {on_bad:>{wide}}"
                   + ("" if pw.tells_apart else "  ✗"))
    if any(not pw.tells_apart for *_, pw in powers):
        out.append(f"✗: this gate does not pass the {good} agent and fail the {bad} one "
                   f"{POWER * 100:.0f}% of the time each.")
    rules = [pw.rule for *_, pw in powers]
    if "every" in rules or "some" in rules:
        out.append("always: the scenario has a check marked always: true, and an attempt that "
                   "breaks it fails the scenario whatever min_pass says. When every check is "
                   "one, every attempt must pass; when some are, the chance lies between "
                   "that and min_pass alone.")
    target = (f"pass a {good} agent and fail a {bad} one, each at least "
              f"{POWER * 100:.0f}% of the time")
    if "min_pass" in rules or not rules:
        best = smallest_gate(p_good, p_bad)
        if best is None:
            out.append(f"To {target}: {MAX_POWER_RUNS} runs are not enough; compare rates "
                       "further apart, or accept more risk.")
        else:
            out.append(f"To {target}: runs: {best[0]} with min_pass: {best[1]} (the fewest "
                       "runs that can).")
    said: dict[str, list[str]] = {}  # what is suggested -> the scenarios it is for
    for sid, *_, pw in powers:
        if pw.rule != "min_pass":
            said.setdefault(_always_gate(p_good, p_bad, pw.rule), []).append(sid)
    for text, ids in said.items():
        out.append(f"With an always rule ({', '.join(ids)}), to {target}: {text}")
    return out


def _chance(low: float, high: float | None) -> str:
    """A chance (``91.9%``), or the range it lies in (``59.0–91.9%``)."""
    if high is None:
        return pct1(low)
    if f"{low * 100:.1f}" == f"{high * 100:.1f}":
        return pct1(low)
    return f"{low * 100:.1f}–{high * 100:.1f}%"


def _always_gate(p_good: float, p_bad: float, rule: GateRule) -> str:
    """The smallest gate of an always rule, or why there is none, in words."""
    best = smallest_gate(p_good, p_bad, rule=rule)
    if best is not None:
        return f"runs: {best[0]} with min_pass: {best[1]} (the fewest runs that can)."
    good = pct(p_good)
    if p_good < POWER:
        return (f"no number of runs can: the good agent is sure to pass only when every "
                f"attempt passes, and a {good} agent passes even one attempt only "
                f"{pct1(p_good)} of the time; make the rule's own check pass more surely, or "
                "drop always: true from it.")
    return (f"no number of runs can: the good agent is sure to pass only when every attempt "
            f"passes, which a {good} agent does {POWER * 100:.0f}% of the time in too few "
            f"runs to fail a {pct(p_bad)} agent as surely; compare rates further apart, or "
            "accept more risk.")


def pct1(x: float) -> str:
    """A chance with one decimal: ``91.9%``."""
    return f"{x * 100:.1f}%"


def runs_needed_text(before: float, after: float) -> str:
    """How many runs per side ``scenarist diff`` needs to see a change from ``before`` to
    ``after`` (the Newcombe interval it uses leaves out 0), in words."""
    n = runs_to_see(before, after)
    if n is None:
        return f"no number of runs tells {pct(before)} from {pct(after)}"
    return (f"a change from {pct(before)} to {pct(after)} needs about {n} decided runs on "
            "each side to be seen")


def tokens_text(tokens: int | None, unknown: tuple[str, ...]) -> str:
    """The run's tokens in words: never "0 tokens" for agents that do not say theirs."""
    if tokens is None:
        return "tokens unknown"
    if unknown:
        return f"{tokens:,} tokens ({', '.join(unknown)}: tokens unknown)"
    return f"{tokens:,} tokens"
