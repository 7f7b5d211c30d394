"""The verdict rule (dsl/verdict.py): one Tally for early stop, the summary and the rest."""

from __future__ import annotations

import itertools

import pytest

from dsl.store.summaryfile import CheckRow, FailingCheck
from dsl.verdict import (
    VERDICTS,
    Tally,
    breaks_always,
    check_title,
    min_pass_for,
    scaled_min_pass,
    words,
)


def tally(passes: int, fails: int, planned: int, min_pass: int, unsure: int = 0,
          errors: int = 0) -> Tally:
    t = Tally(planned, min_pass)
    for status, n in (("pass", passes), ("fail", fails), ("unsure", unsure),
                      ("error", errors)):
        for _ in range(n):
            t.add(status, steps=2)
    return t


@pytest.mark.parametrize(("passes", "fails", "errors", "planned", "min_pass", "expected"), [
    (4, 1, 0, 5, 4, "pass"),
    (3, 2, 0, 5, 4, "fail"),
    (3, 0, 2, 5, 4, "inconclusive"),  # two attempts errored: could still have passed
    (0, 2, 0, 5, 4, "fail"),          # even if the 3 others pass, 3 < 4
    (0, 0, 0, 5, 4, "inconclusive"),  # nothing ran yet
])
def test_verdict(passes: int, fails: int, errors: int, planned: int, min_pass: int,
                 expected: str) -> None:
    assert tally(passes, fails, planned, min_pass, errors=errors).verdict == expected


def test_unsure_counts_against_min_pass_but_apart_from_fails() -> None:
    t = tally(3, 0, 5, 4, unsure=2)
    assert (t.fails, t.unsure, t.against, t.decided, t.finished) == (0, 2, 2, 5, 5)
    assert t.verdict == "fail"
    assert t.pass_rate == pytest.approx(0.6)
    assert t.steps == 10


def test_a_settled_tally_never_changes_its_verdict() -> None:
    """What early stop relies on: once settled, any further attempts keep the verdict."""
    for planned in range(1, 7):
        for min_pass in range(1, planned + 1):
            for outcomes in itertools.product("pfue", repeat=planned):
                t = Tally(planned, min_pass)
                first = None
                for o in outcomes:
                    t.add({"p": "pass", "f": "fail", "u": "unsure", "e": "error"}[o])
                    if first is None and t.settled:
                        first = t.verdict
                if first is not None:
                    assert t.verdict == first, (planned, min_pass, outcomes)


def test_min_pass_rounding() -> None:
    assert min_pass_for(0.8, 5) == 4
    assert min_pass_for(0.7, 10) == 7  # not 8: binary floating point
    assert min_pass_for(0.6, 3) == 2
    assert scaled_min_pass(4, 5, 10) == 8
    assert scaled_min_pass(9, 10, 3) == 3


def test_every_verdict_has_its_words() -> None:
    assert [words(v).mark for v in ("pass", "fail", "inconclusive")] == ["PASS", "FAIL", "????"]
    assert words("something else") is VERDICTS["inconclusive"]
    assert sorted(VERDICTS, key=lambda v: VERDICTS[v].order) == ["fail", "inconclusive", "pass"]


# ---- checks that must hold every time (always: true) -------------------------------------

OUTCOMES = {  # status, and whether the attempt broke an always check
    "p": ("pass", False), "f": ("fail", False), "u": ("unsure", False), "e": ("error", False),
    "b": ("fail", True),  # an always check failed (or could not be evaluated)
    "B": ("unsure", True),  # the judge was unsure about an always check
}


def test_one_broken_always_check_fails_whatever_min_pass_says() -> None:
    t = Tally(10, 1, always=True)
    for _ in range(9):
        t.add("pass")
    t.add("fail", broke_always=True)
    assert (t.passes, t.broken, t.verdict, t.reason) == (9, 1, "fail", "always_broken")


def test_with_always_checks_a_pass_waits_for_every_attempt() -> None:
    t = Tally(5, 2, always=True)
    for _ in range(3):
        t.add("pass")
    assert (t.verdict, t.reason) == ("inconclusive", "always_unseen")  # 2 still to run
    t.add("pass")
    t.add("error")  # it never reached the model: the rule was not seen to hold there
    assert (t.verdict, t.reason, t.open) == ("inconclusive", "always_unseen", 1)
    u = Tally(5, 2, always=True)
    for status in ("pass", "pass", "fail", "pass", "unsure"):
        u.add(status)
    assert (u.verdict, u.reason) == ("pass", "min_pass")
    without = Tally(5, 2)
    for _ in range(2):
        without.add("pass")
    assert without.verdict == "pass"  # no always check: min_pass alone


def test_which_attempts_break_an_always_check() -> None:
    assert breaks_always("fail", [(False, "pass"), (True, "fail")])
    assert breaks_always("fail", [(True, "error")])  # could not be evaluated
    assert breaks_always("unsure", [(True, "unsure")])  # the judge could not tell
    assert not breaks_always("fail", [(False, "fail"), (True, "pass")])
    assert not breaks_always("error", [(True, "error")])  # the endpoint failed, not the rule


@pytest.mark.parametrize("always", [False, True])
def test_a_settled_tally_never_changes_its_verdict_with_always_checks(always: bool) -> None:
    """Early stop skips the rest once settled: every way the rest can end gives the verdict
    it had then (all sequences of outcomes of up to 5 runs, every min_pass)."""
    letters = "pfueBb" if always else "pfue"
    for planned in range(1, 6):
        for min_pass in range(planned + 1):
            for outcomes in itertools.product(letters, repeat=planned):
                t = Tally(planned, min_pass, always=always)
                first = None
                for o in outcomes:
                    status, broke = OUTCOMES[o]
                    t.add(status, broke_always=broke)
                    if first is None and t.settled:
                        first = t.verdict
                if first is not None:
                    assert t.verdict == first, (planned, min_pass, outcomes)
                if always and any(o in "bB" for o in outcomes):
                    assert t.verdict == "fail"


def test_check_title_marks_always_checks() -> None:
    assert check_title(FailingCheck("never refills", 2, always=True)) == \
        "never refills [always]"
    assert check_title(CheckRow(check="non_empty", label="non_empty", passes=1, evaluated=1,
                                 pass_rate=1.0)) == "non_empty"
