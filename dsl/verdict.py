"""The verdict rule: what one scenario × target's attempts say, and the words for it.

A scenario × target plans ``runs`` attempts and needs ``min_pass`` of them to pass. Each
finished attempt is a pass, a fail, *unsure* (the judge could not tell: counted against
``min_pass``, as a fail is) or an endpoint *error* (it says nothing about the model). The
verdict is:

* ``pass`` — passes ≥ min_pass;
* ``fail`` — even if every attempt not yet counted as a fail or unsure passed (those not run,
  and those that ended in an endpoint error), min_pass is out of reach;
* ``inconclusive`` — neither yet: attempts still to run, or endpoint errors, decide it.

:class:`Tally` is the only place this rule is written. The scheduler asks it whether more
attempts could change anything (early stop), the summary asks it for the verdict of what
ran, the terminal, the report and the baseline read the verdict it gave. Because early stop
stops only when :attr:`Tally.verdict` is no longer ``inconclusive``, and later attempts can
only add passes or fails to a decided tally, a verdict reached early is the verdict the
full run would have reached: passes never shrink, and a fail is declared only when even all
the remaining attempts could not reach min_pass.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

Verdict = Literal["pass", "fail", "inconclusive"]
AttemptStatus = Literal["pass", "fail", "unsure", "error"]


@dataclass(frozen=True, slots=True)
class VerdictWords:
    """How each surface names a verdict."""

    word: str  # the report's badge: "passed"
    mark: str  # the terminal's four letters: "PASS"
    color: str  # the terminal's colour
    markdown: str  # summary.md: "✅ pass"
    past: str  # "passed before and now"
    order: int  # how every list is ordered: failures first


VERDICTS: dict[str, VerdictWords] = {
    "fail": VerdictWords("failed", "FAIL", "red", "❌ fail", "failed", 0),
    "inconclusive": VerdictWords("no verdict", "????", "yellow", "⚠️ no verdict",
                                 "had no verdict", 1),
    "pass": VerdictWords("passed", "PASS", "green", "✅ pass", "passed", 2),
}


def words(verdict: str) -> VerdictWords:
    """The words for a verdict read from a file (an unknown one reads as no verdict)."""
    return VERDICTS.get(verdict) or VERDICTS["inconclusive"]


@dataclass(slots=True)
class Tally:
    """What is known so far about one scenario × target: the counts, and the rule."""

    planned: int  # runs the plan asks for
    min_pass: int
    passes: int = 0
    fails: int = 0
    unsure: int = 0
    errors: int = 0
    steps: int = 0  # model calls the counted attempts made

    def add(self, status: str, steps: int = 0) -> None:
        """Count one finished attempt."""
        if status == "pass":
            self.passes += 1
        elif status == "fail":
            self.fails += 1
        elif status == "unsure":
            self.unsure += 1
        else:
            self.errors += 1
        self.steps += steps

    @property
    def finished(self) -> int:
        return self.passes + self.fails + self.unsure + self.errors

    @property
    def decided(self) -> int:
        """Attempts that said something about the model (not endpoint errors)."""
        return self.passes + self.fails + self.unsure

    @property
    def against(self) -> int:
        """Attempts that count against min_pass: fails and unsure."""
        return self.fails + self.unsure

    @property
    def verdict(self) -> Verdict:
        if self.passes >= self.min_pass:
            return "pass"
        if self.planned - self.against < self.min_pass:
            return "fail"
        return "inconclusive"

    @property
    def settled(self) -> bool:
        """No further attempt can change the verdict (early stop may skip the rest)."""
        return self.verdict != "inconclusive"

    @property
    def pass_rate(self) -> float | None:
        return self.passes / self.decided if self.decided else None


def min_pass_for(rate: float, runs: int) -> int:
    """The runs that must pass for a share ``rate`` of ``runs`` (rounded up: 0.8 of 5 → 4).
    The small epsilon keeps 0.7 × 10 at 7 despite binary floating point."""
    return math.ceil(rate * runs - 1e-9)


def scaled_min_pass(min_pass: int, runs: int, new_runs: int) -> int:
    """``min_pass`` of ``runs`` carried over to ``new_runs`` (``--runs`` on the command line)
    at the same share, rounded up."""
    return math.ceil(min_pass * new_runs / runs - 1e-9)
