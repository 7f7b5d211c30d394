"""Redaction: secrets are replaced before anything reaches the judge or a file."""

from __future__ import annotations

import json

import pytest

from dsl.redact import build


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


def test_short_or_missing_values_are_not_secrets() -> None:
    r = build(["SHORT", "MISSING"], {}, {"SHORT": "abc"})
    assert r("abc is fine") == "abc is fine"


def test_own_patterns_with_groups_and_backslashes_in_names() -> None:
    r = build([], {"ticket\\id": r"TCK-(\d+)"})
    assert r("see TCK-123") == "see [REDACTED:ticket\\id]"
