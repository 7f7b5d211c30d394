"""The moment a scenario happens: parsed with its UTC offset, said in words."""

from __future__ import annotations

import pytest

from dsl.compiler.moment import MomentError, parse_moment, say


def test_moment_is_said_in_its_own_offset() -> None:
    at = parse_moment("2026-09-29T10:00:00-03:00")
    assert say(at) == "Tuesday 29 September 2026, 10:00 (UTC-03:00)"
    assert say(parse_moment("2026-12-24T18:30:00Z")) == "Thursday 24 December 2026, 18:30 (UTC+00:00)"
    assert say(parse_moment("2026-01-05T08:00:00+05:30")) == "Monday 5 January 2026, 08:00 (UTC+05:30)"


@pytest.mark.parametrize(("text", "code"), [
    ("2026-09-29T10:00:00", "E203"), ("2026-09-29", "E209"), ("mañana", "E209")])
def test_bad_moments(text: str, code: str) -> None:
    with pytest.raises(MomentError) as info:
        parse_moment(text)
    assert info.value.code == code
