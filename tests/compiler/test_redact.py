"""Redaction: secrets are replaced before anything reaches the judge or a file."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.compiler.redact import build, restore


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


# ---- the one rule: what a mark stands for, and putting it back ---------------------------

SECRETS = build(["VAULT"], {"card": r"tok_[A-Z0-9]{8}", "pin": r"\b\d{4}\b"},
                {"VAULT": "vault-Q7x9-Kp2m"})
CARDS = ["tok_AAAA1111", "tok_BBBB2222", "tok_CCCC3333"]
KNOWN = SECRETS.known({"message": f"block {CARDS[1]} or {CARDS[0]}, PIN 4321",
                       "world": [{"id": CARDS[2], "pin": 9876}]})


def test_a_json_text_stays_json_with_its_number_redacted() -> None:
    assert SECRETS.value('{"card": "tok_AAAA1111", "pin": 4321}') == \
        '{"card": "[REDACTED:card]", "pin": "[REDACTED:pin]"}'
    assert SECRETS.value("a PIN 4321 in words") == "a PIN [REDACTED:pin] in words"


def test_traced_says_which_secret_each_mark_stands_for_and_restore_puts_it_back() -> None:
    data = {"args": {"card_id": CARDS[2], "pin": 9876, "raw": '{"pin": 4321}'},
            "answer": f"{CARDS[0]} blocked, key vault-Q7x9-Kp2m, and tok_ZZZZ9999"}
    red, hints = SECRETS.traced(data, KNOWN)
    assert red == {"args": {"card_id": "[REDACTED:card]", "pin": "[REDACTED:pin]",
                            "raw": '{"pin": "[REDACTED:pin]"}'},
                   "answer": "[REDACTED:card] blocked, key [REDACTED:VAULT], and "
                             "[REDACTED:card]"}
    # indexes among the secrets the scenario holds (never the secret); None: made up
    assert KNOWN.marks["[REDACTED:card]"] == tuple(CARDS)
    assert hints == [2, ["n", [1]], ["j", [["n", [0]]]], 0, 0, None]
    assert restore(red, hints, KNOWN) == {
        **data, "answer": f"{CARDS[0]} blocked, key vault-Q7x9-Kp2m, and [REDACTED:card]"}


def test_counts_stay_numbers_where_numbers_are_not_secrets() -> None:
    red, hints = SECRETS.traced({"steps": 4321, "args": {"pin": 4321}}, KNOWN,
                                frozenset({"steps"}), frozenset({"args"}))
    assert red == {"steps": 4321, "args": {"pin": "[REDACTED:pin]"}}
    assert hints == [["n", [0]]]


VALUES = st.recursive(
    st.one_of(st.sampled_from([*CARDS, "vault-Q7x9-Kp2m", "tok_ZZZZ9999", "[REDACTED:card]"]),
              st.sampled_from([4321, 9876, 7, 2.5, True, None]),
              st.builds(lambda a, b: f"{a} and {b}", st.sampled_from(CARDS),
                        st.sampled_from(["4321", "x", "vault-Q7x9-Kp2m"])),
              st.builds(lambda c, p: json.dumps({"card": c, "pin": p}),
                        st.sampled_from(CARDS), st.sampled_from([4321, 9876]))),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["a", "args", "card_id", "pin"]), inner, max_size=3),
    max_leaves=8)


@settings(max_examples=300, deadline=None)
@given(VALUES)
def test_what_the_scenario_holds_is_put_back_exactly(data: object) -> None:
    red, hints = SECRETS.traced(data, KNOWN)
    assert not any(s in json.dumps(red) for s in [*CARDS, "vault-Q7x9-Kp2m"])
    if "tok_ZZZZ9999" in json.dumps(data) or "[REDACTED:" in json.dumps(data):
        return  # made up, or a mark already: it stays a mark
    assert restore(red, hints, KNOWN) == json.loads(json.dumps(data))
