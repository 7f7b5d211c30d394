"""The statistics every summary, comparison and history shows, in one place.

Each function is exact arithmetic on counts; nothing is rounded here (rounding is for
display, in the terminal, the report and summary.md). The tests check every one against an
independent implementation (statsmodels, scipy) to 1e-9.

* :func:`wilson` — the 95% Wilson score interval of a pass rate (k passes of n).
  Unlike ``k/n ± 1.96·√(p(1−p)/n)`` it stays inside 0..1 and is honest at 0 of 5 or 5 of 5.
* :func:`newcombe` — the difference of two pass rates and its 95% hybrid score interval
  (Newcombe 1998, method 10), built from the two Wilson intervals.
* :func:`pass_at_k` — the chance that at least one of k attempts passes, estimated without
  bias from n attempts with c passes: ``1 − C(n−c, k) / C(n, k)`` (Chen et al. 2021).
* :func:`pass_hat_k` — pass^k, the chance that all k attempts pass:
  ``C(c, k) / C(n, k)`` (Yao et al. 2024, τ-bench).
* :func:`prf` — precision, recall and F1 from true positives, false positives and false
  negatives (tool calls: dsl/toolcalls.py says what each is).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any, Literal

import msgspec

Z95 = 1.959963984540054  # the 97.5th percentile of the standard normal distribution
PASS_K = (1, 3, 5, 10)  # the k of pass@k and pass^k that a summary reports (k ≤ attempts)


class Interval(msgspec.Struct, frozen=True):
    """A 95% confidence interval, ends included."""

    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0 or self.high < 0

    def as_json(self) -> list[float]:
        return [self.low, self.high]


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval for k successes in n trials (0..1 each side); (0, 1) when
    n is 0: nothing is known."""
    if n <= 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe(k1: int, n1: int, k2: int, n2: int) -> tuple[float, Interval]:
    """The difference p1 − p2 (p = k ÷ n) and its 95% hybrid score interval. ValueError
    when a side has no trial (there is no rate to compare)."""
    if n1 <= 0 or n2 <= 0:
        raise ValueError("both sides need at least one decided attempt")
    p1, p2 = k1 / n1, k2 / n2
    l1, u1 = wilson(k1, n1)
    l2, u2 = wilson(k2, n2)
    d = p1 - p2
    low = d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2)
    high = d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2)
    return d, Interval(max(-1.0, low), min(1.0, high))


def _check_counts(n: int, c: int, k: int) -> None:
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"need 0 ≤ c ≤ n and 1 ≤ k ≤ n (n={n}, c={c}, k={k})")


def pass_at_k(n: int, c: int, k: int) -> float:
    """pass@k: the chance that at least one of k attempts drawn from the n that ran (c of
    them passed) passes — the unbiased estimator ``1 − C(n−c, k) / C(n, k)``."""
    _check_counts(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that all of k attempts drawn from the n that ran pass —
    ``C(c, k) / C(n, k)``. Where pass@k asks "can it?", pass^k asks "does it, every time?"."""
    _check_counts(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def pass_k_table(n: int, c: int) -> tuple[dict[str, float], dict[str, float]]:
    """pass@k and pass^k for each k of :data:`PASS_K` that is at most n, keyed by k."""
    ks = [k for k in PASS_K if k <= n]
    return ({str(k): pass_at_k(n, c, k) for k in ks},
            {str(k): pass_hat_k(n, c, k) for k in ks})


class PRF(msgspec.Struct, frozen=True):
    """Precision, recall and F1 of a confusion count (true negatives play no part).

    A ratio with nothing to count is 1: precision when nothing was predicted, recall when
    nothing was expected — so (1, 1, 1) when no case is relevant — and F1 is
    ``2·TP / (2·TP + FP + FN)``, 1 when all three are 0."""

    tp: int
    fp: int
    fn: int
    tn: int = 0

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 1.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 1.0

    @property
    def f1(self) -> float:
        denom = 2 * self.tp + self.fp + self.fn
        return 2 * self.tp / denom if denom else 1.0

    @property
    def relevant(self) -> int:
        return self.tp + self.fp + self.fn

    def __add__(self, other: PRF) -> PRF:
        return PRF(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn,
                   self.tn + other.tn)

    def as_json(self) -> dict[str, float | int]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "tn": self.tn,
                "precision": self.precision, "recall": self.recall, "f1": self.f1}


def prf(tp: int, fp: int, fn: int, tn: int = 0) -> PRF:
    return PRF(tp, fp, fn, tn)


def percentile(values: list[float], q: float) -> float | None:
    """Linear-interpolated percentile (q in 0..100) of unsorted values; None for none."""
    if not values:
        return None
    v = sorted(values)
    pos = (len(v) - 1) * q / 100
    lo = math.floor(pos)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (v[hi] - v[lo]) * (pos - lo)


# ---- how many runs a rule needs ------------------------------------------------------------

POWER = 0.95  # a gate should pass a good agent, and fail a bad one, this often
MAX_POWER_RUNS = 100  # the most runs plan --power suggests


def pass_chance(runs: int, min_pass: int, p: float) -> float:
    """The chance that an agent whose attempts pass with probability ``p`` (each on its
    own) passes a gate of ``min_pass`` of ``runs``: ``P(X ≥ min_pass)`` for ``X ~
    Binomial(runs, p)``, summed exactly over the binomial terms."""
    if min_pass <= 0:
        return 1.0
    if min_pass > runs:
        return 0.0
    q = 1.0 - p
    return math.fsum(math.comb(runs, k) * p ** k * q ** (runs - k)
                     for k in range(min_pass, runs + 1))


GateRule = Literal["min_pass", "every", "some"]


def gate_rule(always: Iterable[bool]) -> GateRule:
    """What a scenario's gate asks, from whether each of its checks is ``always: true``: an
    attempt that breaks such a rule fails the scenario whatever ``min_pass`` says
    (dsl/verdict.py). ``every`` — every check is a rule, so every attempt must pass;
    ``some`` — some are, so a failed attempt may or may not break one; ``min_pass`` — none
    is."""
    flags = list(always)
    if not any(flags):
        return "min_pass"
    return "every" if all(flags) else "some"


def gate_chance(runs: int, min_pass: int, p: float, rule: GateRule = "min_pass"
                ) -> tuple[float, float]:
    """The least and the most often a gate passes an agent whose attempts pass with
    probability ``p``: the binomial tail (:func:`pass_chance`) under ``min_pass``; every
    attempt passing (``p ** runs``) when every failure breaks an ``always`` rule; between
    the two when some checks are rules (a failure may break one or not)."""
    alone = pass_chance(runs, min_pass, p)
    if rule == "min_pass":
        return alone, alone
    every = p ** runs if min_pass <= runs else 0.0
    return (every, every) if rule == "every" else (every, alone)


class Power(msgspec.Struct, frozen=True):
    """What a gate (``runs``, ``min_pass``, its ``rule``) does with an agent whose true pass
    rate is ``p_good`` and with one whose rate is ``p_bad``; and the smallest gate of that
    rule that passes the good one and fails the bad one, each at least :data:`POWER` of
    the time (None: none within :data:`MAX_POWER_RUNS` runs). ``pass_chance_good`` is the
    least often it passes the good agent and ``pass_chance_bad`` the most often it passes
    the bad one — exact unless the rule is ``some``, where ``good_most`` and ``bad_least``
    are the other ends."""

    p_good: float
    p_bad: float
    pass_chance_good: float
    pass_chance_bad: float
    suggested_runs: int | None
    suggested_min_pass: int | None
    rule: GateRule = "min_pass"
    good_most: float | None = None
    bad_least: float | None = None

    @property
    def tells_apart(self) -> bool:
        """The gate passes the good agent and fails the bad one, each at least POWER of
        the time (at worst, when the rule leaves a range)."""
        return self.pass_chance_good >= POWER and self.pass_chance_bad <= 1 - POWER

    def as_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"p_good": self.p_good, "p_bad": self.p_bad,
                               "pass_chance_good": self.pass_chance_good,
                               "pass_chance_bad": self.pass_chance_bad,
                               "suggested_runs": self.suggested_runs,
                               "suggested_min_pass": self.suggested_min_pass}
        if self.rule != "min_pass":  # an always rule: say so, and the range when there is one
            out["always"] = self.rule
        if self.rule == "some":
            out["pass_chance_good_most"] = self.good_most
            out["pass_chance_bad_least"] = self.bad_least
        return out


def smallest_gate(p_good: float, p_bad: float, power: float = POWER,
                  max_runs: int = MAX_POWER_RUNS, rule: GateRule = "min_pass"
                  ) -> tuple[int, int] | None:
    """The fewest runs (up to ``max_runs``), then the smallest min_pass for them, such that
    an agent at ``p_good`` passes at least ``power`` of the time and one at ``p_bad`` fails
    at least ``power`` of the time (at worst: :func:`gate_chance`); None when no gate of at
    most ``max_runs`` does both. With an ``always`` rule the good agent passes at worst only
    when every attempt passes, which gets rarer with every run: then the suggestion has
    ``min_pass`` equal to its runs when every check is a rule, else the smallest that fails
    the bad agent."""
    for runs in range(1, max_runs + 1):
        if rule != "min_pass" and p_good ** runs < power:
            return None  # passing every attempt only gets rarer with more runs
        for need in range(runs + 1):  # the chances fall as min_pass rises
            if gate_chance(runs, need, p_bad, rule)[1] <= 1.0 - power:
                if gate_chance(runs, need, p_good, rule)[0] >= power:
                    return runs, (runs if rule == "every" else need)
                break  # a higher min_pass passes the good agent even less often
    return None


def gate_power(runs: int, min_pass: int, p_good: float, p_bad: float,
               rule: GateRule = "min_pass") -> Power:
    """:class:`Power` for one gate and its rule."""
    best = smallest_gate(p_good, p_bad, rule=rule)
    good = gate_chance(runs, min_pass, p_good, rule)
    bad = gate_chance(runs, min_pass, p_bad, rule)
    return Power(p_good, p_bad, good[0], bad[1], best[0] if best else None,
                 best[1] if best else None, rule,
                 good[1] if rule == "some" else None, bad[0] if rule == "some" else None)


def runs_to_see(before: float, after: float, max_runs: int = 10_000) -> int | None:
    """How many decided runs per side a change of pass rate from ``before`` to ``after``
    needs before the 95% Newcombe interval of the difference (the one ``scenarist diff``
    uses: :func:`newcombe`) leaves out 0, when each side shows exactly its rate (its passes
    rounded to whole runs); None when no count up to ``max_runs`` does (no change, or
    one too small)."""
    if before == after:
        return None
    for n in range(1, max_runs + 1):
        _, interval = newcombe(round(after * n), n, round(before * n), n)
        if round(after * n) != round(before * n) and interval.excludes_zero():
            return n
    return None
