"""The grounded check on a table of answers and what the agent was given, in English and
Spanish (tests/cases/grounded.yaml): the verdict and the reason, word for word."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ruamel.yaml import YAML

from dsl.checks.grounded import grounded, read_items
from dsl.compiler.moment import parse_moment
from dsl.model import AttemptData, Call, Tokens

TABLE = Path(__file__).parents[1] / "cases" / "grounded.yaml"
DATA = YAML(typ="safe").load(TABLE.read_text("utf-8"))
CASES = DATA["cases"]


def attempt(case: dict[str, Any]) -> AttemptData:
    d = DATA["defaults"]
    calls = []
    for j, t in enumerate(case.get("tools") or []):
        spec = t if isinstance(t, dict) and "output" in t else {"output": t}
        out = spec["output"]
        calls.append(Call(f"call_{j}", "tool", spec.get("args", {}),
                          json.dumps(spec.get("args", {})),
                          out if isinstance(out, str) else json.dumps(out), "read"))
    return AttemptData(case.get("message", d["message"]), case["answer"], tuple(calls),
                       parse_moment(str(case.get("at", d["at"]))), (), 1, 0.0, Tokens(),
                       messages=tuple(case.get("messages") or ()))


def test_the_table_is_large_and_bilingual() -> None:
    assert len(CASES) >= 40
    ids = [c["id"] for c in CASES]
    assert len(set(ids)) == len(ids)
    assert sum(i.startswith("es-") for i in ids) >= 15
    assert sum(i.startswith("en-") for i in ids) >= 15
    assert {c["expected"] for c in CASES} == {"pass", "fail"}


@pytest.mark.parametrize("case", CASES, ids=[c["id"] for c in CASES])
def test_grounded(case: dict[str, Any]) -> None:
    outcome = grounded(True, attempt(case))
    assert (outcome.status, outcome.reason) == (case["expected"], case["reason"])


@pytest.mark.parametrize(("text", "written"), [
    ("Cerramos a las 6 de la tarde, o 18 hs.", ["6 de la tarde", "18 hs"]),
    ("Tuesday, October 6th at 4:30 pm", ["Tuesday, October 6th", "4:30 pm"]),
    ("US$ 20 o 20 dólares", ["US$ 20", "20 dólares"]),
    ("1. Limpieza\n2. Control: 800", ["800"]),
    ("May I help you with las 3 citas?", ["3"]),
])
def test_items_are_reported_as_written(text: str, written: list[str]) -> None:
    assert [i.text for i in read_items(text)] == written


PIECES = ["0", "1", "12", "2026", ":", ".", ",", "/", "-", "+", " ", "$", "€", "%", "h", "hs",
          "am", "p.m.", "octubre", "October", "29 February", "de la tarde", "las ", "at ",
          "UTC-", "martes", "\n1. ", "(", "noon", " y media", "NaN", "２３"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(PIECES), max_size=30), st.lists(st.sampled_from(PIECES),
                                                                max_size=30))
def test_grounded_never_raises(answer: list[str], source: list[str]) -> None:
    case = {"answer": "".join(answer), "tools": ["".join(source), {"n": 1.5, "s": "".join(
        source)}]}
    assert grounded(True, attempt(case)).status in ("pass", "fail")
