"""Runs tests/expr/cases.yaml: the expression language, case by case, word for word."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from dsl.expr import EvalError, compile_expression, env_for, problems_of, verdict
from dsl.expr.runtime import display
from dsl.expr.sample import attempt
from dsl.source.load import load_text

CASES_FILE = Path(__file__).with_name("cases.yaml")
KINDS = ("value", "shown", "problems", "error", "reason")


def load_cases() -> list[dict[str, Any]]:
    doc = load_text(CASES_FILE.read_text("utf-8"), str(CASES_FILE))
    assert doc.diagnostics == (), doc.diagnostics
    cases: list[dict[str, Any]] = doc.data
    for c in cases:
        assert sum(k in c for k in KINDS) == 1, f"each case states exactly one result: {c}"
    return cases


CASES = load_cases()


def strictly_equal(a: Any, b: Any) -> bool:
    """Equal values of the same types (true is not 1, 2 is not 2.0)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(strictly_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(strictly_equal(a[k], b[k]) for k in a)
    return bool(a == b)


@pytest.mark.parametrize("case", CASES, ids=[c["expr"][:60] for c in CASES])
def test_case(case: dict[str, Any]) -> None:
    expr = case["expr"]
    named = case.get("named", [])
    env = env_for(attempt(**case.get("attempt", {})))
    if "problems" in case:
        expected = case["problems"]
        expected = [expected] if isinstance(expected, str) else expected
        got = [f"{p.code} {p.offset + 1}: {p.message}" for p in problems_of(expr, named)]
        assert got == expected
        return
    if "reason" in case:
        status, reason = verdict(compile_expression(expr, named), env)
        assert (status, reason) == (case["status"], case["reason"])
        return
    program = compile_expression(expr, named, condition=False)
    if "error" in case:
        with pytest.raises(EvalError) as info:
            program.evaluate(env)
        assert info.value.message == case["error"]
        return
    value = program.evaluate(env)
    if "shown" in case:
        assert isinstance(value, dt.date)
        assert display(value) == case["shown"]
    else:
        assert strictly_equal(value, case["value"]), value


def test_cases_cover_every_problem_code_and_function() -> None:
    from dsl.expr.functions import FUNCTIONS

    text = CASES_FILE.read_text("utf-8")
    for code in ("X301", "X302", "X303", "X304", "X305", "E204"):
        assert f'"{code} ' in text, code
    for name in FUNCTIONS:
        assert f"{name}(" in text, name
