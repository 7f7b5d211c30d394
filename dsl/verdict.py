"""The verdict rule: what one scenario × target's attempts say, and the words for it.

A scenario × target plans ``runs`` attempts and needs ``min_pass`` of them to pass. Each
finished attempt is a pass, a fail, *unsure* (the judge could not tell: counted against
``min_pass``, as a fail is) or an endpoint *error* (it says nothing about the model). Some
checks may be marked ``always: true`` (a rule that must never break): an attempt *breaks*
it when such a check does not pass there — fails, cannot be evaluated, or leaves the judge
unsure — in an attempt that reached the model (:func:`breaks_always`); a check in a turn
that was never played (an earlier turn failed) is *not evaluated* and breaks nothing.
The verdict is:

* ``fail`` — an attempt broke an ``always`` check, whatever min_pass says; or, even if
  every attempt not yet counted as a fail or unsure passed (those not run, and those that
  ended in an endpoint error), min_pass is out of reach;
* ``pass`` — passes ≥ min_pass and, when the scenario has ``always`` checks, every planned
  attempt reached the model (one not run, or lost to an endpoint error, might have broken
  the rule);
* ``inconclusive`` — neither yet: attempts still to run, or endpoint errors, decide it.

:class:`Tally` is the only place this rule is written. The scheduler asks it whether more
attempts could change anything (early stop), the summary asks it for the verdict of what
ran, the terminal, the report and the baseline read the verdict it gave. Early stop stops
only when :attr:`Tally.verdict` is no longer ``inconclusive``, and a decided verdict is the
verdict of every way the remaining attempts could end: passes, fails and broken ``always``
checks only grow; a fail is declared only when min_pass is out of reach or a rule broke
(neither can be undone); and a pass with ``always`` checks only once no attempt is left
that could break one. So a verdict reached early is the verdict the full run would have
reached (tests/results/test_verdict.py checks it on every sequence of outcomes).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Literal, Protocol

import msgspec

Verdict = Literal["pass", "fail", "inconclusive"]
AttemptStatus = Literal["pass", "fail", "unsure", "error"]
VerdictReason = Literal["min_pass", "always_broken", "always_unseen"]


class VerdictWords(msgspec.Struct, frozen=True):
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


class Titled(Protocol):
    """A check of a plan or a summary, as text shows it."""

    @property
    def label(self) -> str: ...

    @property
    def always(self) -> bool: ...


def check_title(entry: Titled) -> str:
    """How every surface names a check of a plan or a summary in text: its ``label`` — the
    readable name its author gave it (``name:``), else the check as written — marked
    ``[always]`` when it must pass in every attempt."""
    return f"{entry.label} [always]" if entry.always else entry.label


def words(verdict: str) -> VerdictWords:
    """The words for a verdict read from a file (an unknown one reads as no verdict)."""
    return VERDICTS.get(verdict) or VERDICTS["inconclusive"]


def breaks_always(status: str, checks: Iterable[tuple[bool, str]]) -> bool:
    """Whether an attempt of this ``status`` broke an ``always`` check, from its checks'
    ``(always, status)``: one of them did not pass, in an attempt that reached the model
    (an endpoint error says nothing about the model, so it breaks nothing — and leaves the
    verdict open instead: see :attr:`Tally.verdict`). A check that was not evaluated (its
    turn was never played: an earlier turn failed) broke nothing either: the attempt fails
    for what really failed."""
    return status != "error" and any(always and s not in ("pass", "not_evaluated")
                                     for always, s in checks)


class Tally(msgspec.Struct):
    """What is known so far about one scenario × target: the counts, and the rule."""

    planned: int  # runs the plan asks for
    min_pass: int
    always: bool = False  # the scenario has checks marked `always: true`
    passes: int = 0
    fails: int = 0
    unsure: int = 0
    errors: int = 0
    broken: int = 0  # attempts that broke an `always` check (each is a fail or unsure too)
    steps: int = 0  # model calls the counted attempts made

    def add(self, status: str, steps: int = 0, broke_always: bool = False) -> None:
        """Count one finished attempt (``broke_always``: :func:`breaks_always`)."""
        if broke_always:
            self.broken += 1
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
    def open(self) -> int:
        """Planned attempts that have not said anything about the model yet: not run, or
        ended in an endpoint error."""
        return max(0, self.planned - self.decided)

    @property
    def verdict(self) -> Verdict:
        if self.broken:
            return "fail"
        if self.passes >= self.min_pass and not (self.always and self.open):
            return "pass"
        if self.planned - self.against < self.min_pass:
            return "fail"
        return "inconclusive"

    @property
    def reason(self) -> VerdictReason:
        """What decided the verdict (or keeps it open): ``always_broken`` — an attempt broke
        an ``always`` check, min_pass does not apply; ``always_unseen`` — enough passes, but
        attempts not run or lost to endpoint errors might have broken one; else
        ``min_pass``."""
        if self.broken:
            return "always_broken"
        if self.always and self.open and self.passes >= self.min_pass:
            return "always_unseen"
        return "min_pass"

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
