"""How a stored attempt's checks count (issue 32, item 16): an attempt that ended in an
error, or whose part failed before its checks could decide, has its checks *not evaluated*
— also when its record was written before the run stored them so."""

from __future__ import annotations

import msgspec

from dsl.model import Turn
from dsl.store import AttemptError, AttemptRecord, CheckResult


def record(status: str, checks: tuple[CheckResult, ...], **kw: object) -> AttemptRecord:
    return AttemptRecord("s", "t", 1, status, "", "2026-11-30T10:00:00.000+00:00",
                         checks=checks, **kw)  # type: ignore[arg-type]


RULE = CheckResult("not_contains", 'not_contains: "Bruno"', "pass", "ok", always=True)
SAYS = CheckResult("contains", 'contains: "losartán"', "fail", "not said")


def test_an_attempt_that_ended_in_an_error_counts_none_of_its_checks() -> None:
    rec = record("error", (RULE, SAYS), error=AttemptError("judge", "the judge timed out"))
    assert [(c.status, c.reason) for c in rec.counted_checks] == [
        ("not_evaluated", "not evaluated: the attempt ended in an error (judge: the judge "
                          "timed out)")] * 2
    assert not rec.broke_always


def test_a_record_of_an_attempt_that_failed_first_reads_its_checks_as_not_evaluated() -> None:
    rec = record("fail", (RULE, SAYS), failure="reached max_steps (3 model calls) without a "
                                                "text answer", failure_kind="max_steps")
    assert {c.status for c in rec.counted_checks} == {"not_evaluated"}
    assert rec.counted_checks[0].reason == (
        "not evaluated: the attempt failed before its checks could decide (reached max_steps "
        "(3 model calls) without a text answer)")
    assert rec.counted_checks[0].always  # (an always check that did not decide breaks nothing)
    assert not record("fail", (msgspec.structs.replace(SAYS, always=True),), failure="x").broke_always


def test_in_a_conversation_the_turns_played_before_the_failure_still_count() -> None:
    turns = (Turn("say", "hola", "¡Hola!", 0, (), 1, 2),
             Turn("say", "¿y?", "", 3, (), 3, 4, failure="reached max_steps"))
    first = msgspec.structs.replace(SAYS, turn=1, status="pass")
    second = msgspec.structs.replace(SAYS, turn=2)
    rec = record("fail", (first, second, RULE), failure="turn 2: reached max_steps",
                 turns=turns)
    assert [c.status for c in rec.counted_checks] == ["pass", "not_evaluated", "not_evaluated"]
    assert rec.counted_checks[1].reason == (
        "not evaluated: turn 2 failed before its checks could decide (reached max_steps)")
    assert record("pass", (RULE,)).counted_checks == (RULE,)


def test_a_failure_no_more_of_the_attempt_could_undo_still_stands() -> None:
    """A forbidden call made before the attempt failed is what the agent did: that failure
    stands (and breaks an always rule); a pass beside it is not evaluated."""
    refilled = CheckResult("not_calls", "never refills", "fail", "create_refill_request was "
                           "called", always=True)
    rec = record("fail", (refilled, RULE), failure="the server could not parse the reply",
                 failure_kind="model_output")
    assert [c.status for c in rec.counted_checks] == ["fail", "not_evaluated"]
    assert rec.broke_always
    from dsl.checks import REGISTRY
    from dsl.model import FAILS_FOR_GOOD

    assert set(REGISTRY) >= FAILS_FOR_GOOD
