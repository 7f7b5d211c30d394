"""Property-based tests: whatever text an author (or a fuzzer) writes, and whatever an
agent answers, an expression only ever gives a value or the language's own errors —
never a Python exception, never a Python object."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsl.errors import CODES
from dsl.expr import EvalError, ProblemsFound, compile_expression, env_for, verdict
from dsl.expr.functions import FUNCTIONS
from dsl.expr.parse import parse
from dsl.expr.sample import attempt
from dsl.expr.types import CALL_FIELDS, GLOBALS, MOMENT_FIELDS
from dsl.model import AttemptData

PLAIN = (type(None), bool, int, float, str, list, dict, dt.date)
SETTINGS = settings(max_examples=300, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def plain(v: Any) -> bool:
    """Only the language's own values: no Python object can come out of an expression."""
    if isinstance(v, list):
        return all(plain(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and plain(x) for k, x in v.items())
    return type(v) in PLAIN


def run(text: str, a: AttemptData) -> str:
    """Compile and evaluate ``text``; fail the test on anything but a value, a located
    problem or an EvalError. Also checks that the expect check's verdict never raises."""
    try:
        program = compile_expression(text, condition=False)
    except ProblemsFound as exc:
        problems = exc.problems
    else:
        problems = ()
    if problems:
        for p in problems:
            assert p.code in CODES
            assert 0 <= p.offset <= len(text)
            assert p.message
        return "problems"
    env = env_for(a)
    error = None
    try:
        value = program.evaluate(env)
    except EvalError as exc:
        error = exc
    if error is not None:
        assert error.message
        outcome = "error"
    else:
        assert plain(value), value
        outcome = "value"
    try:
        condition = compile_expression(text)
    except ProblemsFound:
        return outcome
    status, reason = verdict(condition, env)
    assert status in ("pass", "fail", "error")
    assert reason
    assert env.items == []  # every condition cleaned up after itself
    return outcome


# ---------------------------------------------------------------- attempts

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False,
                                                                          allow_infinity=False)
    | st.text(max_size=20),
    lambda kids: st.lists(kids, max_size=4) | st.dictionaries(
        st.sampled_from(["date", "time", "slots", "items", "x", "name", "answer", "a"]), kids,
        max_size=4),
    max_leaves=12,
)
outputs = st.one_of(st.none(), st.text(max_size=40),
                    json_values.map(lambda v: json.dumps(v, ensure_ascii=False)))
calls = st.fixed_dictionaries(
    {"name": st.sampled_from(["search_slots", "book_appointment", "cancel_appointment", "x"]),
     "args": json_values, "output": outputs, "action": st.sampled_from(["read", "create"]),
     "pending": st.booleans()},
)
attempts = st.builds(
    lambda answer, cs: attempt(answer=answer, calls=cs),
    st.text(max_size=60) | st.sampled_from(["", "15:00", '{"status": "booked"}', "42"]),
    st.lists(calls, max_size=3),
) | st.just(attempt())

# ---------------------------------------------------------------- expressions

TOKENS = [
    *GLOBALS, *FUNCTIONS, *CALL_FIELDS, *MOMENT_FIELDS, "item",
    "and", "or", "not", "in", "matches", "true", "false", "null",
    "==", "!=", "<", "<=", ">", ">=", "+", "-", "*", "/", "%", "=", "&&", "!",
    "(", ")", "[", "]", ",", ".", "'", '"',
    "0", "1", "2", "-1", "1.5", "1e3", "'15:00'", "'x'", '"search_slots"', "'book_appointment'",
    "'^a+$'", "'(a|aa)+$'", "'2026-10-06'", "[]", "__class__", "__import__",
    "1e300", "9" * 40, "0.0", "-0",
]


def quote(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'").replace("\n", "\\n") + "'"


literals = st.one_of(
    st.integers(-1000, 1000).map(str),
    st.sampled_from(["true", "false", "null", "1.5", "0", "[]", "[1, 2]", "['a', 'b']",
                     "1e300", "9" * 40, "0.0"]),
    st.text(max_size=10).map(quote),
)
names = st.sampled_from([*GLOBALS, "item", "name", "args", "output", "pending"])
leaves = literals | names | st.sampled_from(
    ["call('search_slots')", "call('book_appointment')", "calls[0]", "at.date"])
OPERATORS = ["and", "or", "==", "!=", "<", "<=", ">", ">=", "in", "not in", "+", "-", "*",
             "/", "%"]


def extend(kids: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    return st.one_of(
        st.tuples(kids, st.sampled_from(OPERATORS), kids).map(lambda t: f"({t[0]} {t[1]} {t[2]})"),
        st.tuples(kids, st.sampled_from(["'a'", "'^\\d+$'", "'(?i)x'"])).map(
            lambda t: f"({t[0]} matches {t[1]})"),
        kids.map(lambda k: f"(not ({k}))"),
        kids.map(lambda k: f"-({k})"),
        st.tuples(kids, st.sampled_from([*CALL_FIELDS, *MOMENT_FIELDS, "x", "slots"])).map(
            lambda t: f"({t[0]}).{t[1]}"),
        st.tuples(kids, kids).map(lambda t: f"({t[0]})[{t[1]}]"),
        st.tuples(st.sampled_from(sorted(FUNCTIONS)), st.lists(kids, max_size=3)).map(
            lambda t: f"{t[0]}({', '.join(t[1])})"),
        st.lists(kids, max_size=3).map(lambda ks: f"[{', '.join(ks)}]"),
    )


expressions = st.recursive(leaves, extend, max_leaves=12)


@SETTINGS
@given(st.text(max_size=300))
def test_any_text_is_a_value_or_the_languages_own_error(text: str) -> None:
    run(text, attempt())


@SETTINGS
@given(st.lists(st.sampled_from(TOKENS), max_size=25).map(" ".join), attempts)
def test_any_sequence_of_tokens(text: str, a: AttemptData) -> None:
    run(text, a)


@SETTINGS
@given(expressions, attempts)
def test_grammatical_expressions_parse_and_run(text: str, a: AttemptData) -> None:
    codes: set[str] = set()
    try:
        parse(text)
    except ProblemsFound as exc:
        codes = {p.code for p in exc.problems}
    assert codes <= {"X305"}, text  # generated text is grammatical: only limits apply
    run(text, a)


@SETTINGS
@given(st.text(max_size=200))
def test_quoted_text_reads_back_as_written(s: str) -> None:
    program = compile_expression(quote(s), condition=False)
    assert program.evaluate(env_for(attempt())) == s
