"""Redaction: secrets are replaced before anything reaches the judge or a file."""

from __future__ import annotations

import json

import pytest

from dsl.compiler.redact import build


@pytest.mark.parametrize(("text", "expected"), [
    ("key sk-abcdefghijklmnop1234 end", "key [REDACTED:api-key] end"),
    ("sk-proj-AbCdEfGhIjKlMnOpQrSt_12", "[REDACTED:api-key]"),
    ("Authorization: Bearer abc.def.ghijklmnop", "Authorization: [REDACTED:bearer-token]"),
    ("id AKIAIOSFODNN7EXAMPLE.", "id [REDACTED:aws-access-key]."),
    ("aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "[REDACTED:aws-secret-key]"),
    ("token ghp_" + "a" * 36, "token [REDACTED:github-token]"),
    ("sk-short and Bearer x and a sketch", "sk-short and Bearer x and a sketch"),
])
def test_default_patterns(text: str, expected: str) -> None:
    assert build([])(text) == expected


def test_env_values_raw_and_json_escaped() -> None:
    secret = 'p@ss"word\\with/quote'
    r = build(["DB_PASS"], {}, {"DB_PASS": secret})
    line = json.dumps({"tool": f"password={secret}"})
    assert secret not in r(line)
    assert json.loads(r(line)) == {"tool": "password=[REDACTED:DB_PASS]"}
    assert r(f"raw {secret}") == "raw [REDACTED:DB_PASS]"


def test_short_values_are_redacted_where_they_stand_as_a_word() -> None:
    """A placeholder key ("dummy") is a secret too, but only as a word of its own: the
    text around it survives."""
    r = build(["SHORT", "MISSING", "EMPTY"], {}, {"SHORT": "abc", "EMPTY": ""})
    assert r("key abc, and abc.") == "key [REDACTED:SHORT], and [REDACTED:SHORT]."
    assert r("abcde xabc a-abc abc_1") == "abcde xabc a-abc abc_1"
    assert r("nothing else") == "nothing else"


def test_values_are_redacted_never_the_serialized_text() -> None:
    """The written line stays valid JSON whatever a pattern matches (issue 11)."""
    r = build([], None, {})
    record = {"args": {"aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
              "raw": 'x {"aws_secret_key": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}'}
    out = r.value(record)
    assert out["args"] == {"aws_secret_key": "[REDACTED:aws-secret-key]"}
    assert "wJalr" not in json.dumps(out)
    digits = build([], {"dni": r"\b\d{8}\b"}, {})
    assert digits.value({"id": 12345678, "n": 7, "ok": True, "s": ["a 87654321 b"]}) == {
        "id": "[REDACTED:dni]", "n": 7, "ok": True, "s": ["a [REDACTED:dni] b"]}


def test_a_value_without_secrets_is_returned_as_it_is() -> None:
    r = build([], None, {})
    data = {"a": ["b", 1, {"c": None}]}
    assert r.value(data) is data


@pytest.mark.parametrize("pattern", [r"^\d{4}$", r"(?<=id )\d+", r"(?m)^x$"])
def test_patterns_that_look_around_are_matched_per_value(pattern: str) -> None:
    """Anchors and lookaround match in each text alone, not in the joined probe."""
    r = build([], {"p": pattern}, {})
    assert not r.probe
    assert r.value({"a": "1234", "b": "id 99", "c": "x"})  == (
        {"a": "[REDACTED:p]", "b": "id 99", "c": "x"} if pattern.startswith("^")
        else {"a": "1234", "b": "id [REDACTED:p]", "c": "x"} if "<=" in pattern
        else {"a": "1234", "b": "id 99", "c": "[REDACTED:p]"})


def test_own_patterns_with_groups_and_backslashes_in_names() -> None:
    r = build([], {"ticket\\id": r"TCK-(\d+)"})
    assert r("see TCK-123") == "see [REDACTED:ticket\\id]"
