"""How good is a judge, in numbers: agreement, Cohen's kappa, Brier score, expected
calibration error, coverage — and the temperature that minimises the log loss.

Pure functions over :class:`Case` values (the person's label, the judge's verdict, the
judge's probability of pass); ``dsl/pipeline/judgecheck.py`` builds the cases by asking the judge.

* **agreement** and **kappa**: the judge's likelier verdict (pass when P(pass) ≥ 0.5) on
  every question, against the labels; a question without a probability (an unreadable
  reply) counts as a disagreement and is left out of kappa.
* **brier**: mean of (P(pass) − label)², label 1 for pass, 0 for fail.
* **ece**: expected calibration error over 10 equal bins of the likelier verdict's
  probability: Σ (questions in bin / questions) · |share right − mean probability|.
* **coverage**: share of questions with a verdict (pass or fail, not unsure) at the
  configured ``min_confidence``; **agreement_covered** and **kappa_covered** on those.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

ECE_BINS = 10
LOG_LOSS_FLOOR = 1e-6  # a probability of exactly 0 or 1 costs -log(1e-6), not infinity
TEMPERATURE_RANGE = (0.05, 20.0)  # the search for a temperature stays inside
_GRID = 81  # points of the coarse search, evenly spaced in log(temperature)
_GOLDEN_STEPS = 60


@dataclass(frozen=True, slots=True)
class Case:
    """One labelled question as the judge answered it."""

    expected: str  # pass | fail: the person's verdict
    verdict: str  # pass | fail | unsure: the judge's, at min_confidence
    p_pass: float | None  # the judge's probability of pass; None: it gave none

    @property
    def likelier(self) -> str | None:
        if self.p_pass is None:
            return None
        return "pass" if self.p_pass >= 0.5 else "fail"


@dataclass(frozen=True, slots=True)
class Figures:
    questions: int
    agreement: float | None
    kappa: float | None
    brier: float | None
    ece: float | None
    coverage: float | None
    agreement_covered: float | None
    kappa_covered: float | None

    def as_json(self) -> dict[str, Any]:
        return {k: (round(v, 4) if isinstance(v, float) else v)
                for k, v in asdict(self).items()}


def cohen_kappa(pairs: Sequence[tuple[str, str]]) -> float | None:
    """Cohen's kappa for two raters over labels (here: expected vs judged, pass/fail)."""
    n = len(pairs)
    if n == 0:
        return None
    labels = sorted({x for p in pairs for x in p})
    observed = sum(a == b for a, b in pairs) / n
    expected = sum((sum(a == k for a, _ in pairs) / n) * (sum(b == k for _, b in pairs) / n)
                   for k in labels)
    if expected == 1:
        return 1.0 if observed == 1 else 0.0
    return (observed - expected) / (1 - expected)


def brier(cases: Sequence[Case]) -> float | None:
    scored = [(c.p_pass, c.expected == "pass") for c in cases if c.p_pass is not None]
    if not scored:
        return None
    return sum((p - y) ** 2 for p, y in scored) / len(scored)


def expected_calibration_error(cases: Sequence[Case], bins: int = ECE_BINS) -> float | None:
    scored = [(max(c.p_pass, 1 - c.p_pass), c.likelier == c.expected)
              for c in cases if c.p_pass is not None]
    if not scored:
        return None
    total = 0.0
    for b in range(bins):
        members = [(conf, right) for conf, right in scored
                   if min(int(conf * bins), bins - 1) == b]
        if members:
            accuracy = sum(right for _, right in members) / len(members)
            confidence = sum(conf for conf, _ in members) / len(members)
            total += len(members) / len(scored) * abs(accuracy - confidence)
    return total


def log_loss(pairs: Sequence[tuple[float, bool]]) -> float:
    """Mean −log of the probability given to what the person said."""
    if not pairs:
        return 0.0
    total = 0.0
    for p, passed in pairs:
        q = min(max(p if passed else 1 - p, LOG_LOSS_FLOOR), 1.0)
        total -= math.log(q)
    return total / len(pairs)


def figures(cases: Sequence[Case]) -> Figures:
    n = len(cases)
    likely = [(c.expected, c.likelier) for c in cases if c.likelier is not None]
    covered = [(c.expected, c.verdict) for c in cases if c.verdict in ("pass", "fail")]
    return Figures(
        questions=n,
        agreement=sum(a == b for a, b in likely) / n if n else None,
        kappa=cohen_kappa([(a, b) for a, b in likely if b is not None]),
        brier=brier(cases),
        ece=expected_calibration_error(cases),
        coverage=len(covered) / n if n else None,
        agreement_covered=sum(a == b for a, b in covered) / len(covered) if covered else None,
        kappa_covered=cohen_kappa(covered),
    )


def fit_temperature(loss: Callable[[float], float],
                    bounds: tuple[float, float] = TEMPERATURE_RANGE) -> float:
    """The temperature in ``bounds`` with the lowest loss: a coarse search over a grid even
    in log(temperature), then a golden-section search around the best point. On a flat
    loss (nothing to learn from), the temperature closest to 1."""
    lo, hi = math.log(bounds[0]), math.log(bounds[1])
    grid = [lo + (hi - lo) * i / (_GRID - 1) for i in range(_GRID)]
    values = [loss(math.exp(x)) for x in grid]
    best = min(range(_GRID), key=lambda i: (round(values[i], 12), abs(grid[i])))
    a, b = grid[max(best - 1, 0)], grid[min(best + 1, _GRID - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = loss(math.exp(c)), loss(math.exp(d))
    for _ in range(_GOLDEN_STEPS):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = loss(math.exp(c))
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = loss(math.exp(d))
    x = (a + b) / 2
    return math.exp(x) if loss(math.exp(x)) < values[best] - 1e-12 else math.exp(grid[best])
