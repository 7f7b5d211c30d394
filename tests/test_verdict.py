"""The verdict rule (dsl/verdict.py): one Tally for early stop, the summary and the rest."""

from __future__ import annotations

import itertools

import pytest

from dsl.verdict import VERDICTS, Tally, min_pass_for, scaled_min_pass, words


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
