"""Fake tools (dsl/compiler/faketools.py): what a tool answers, by argument, with templates in
its data, and the errors the model sees."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from dsl.compiler.faketools import ToolResult, answer, compile_tool
from dsl.errors import Collector
from dsl.model import ToolSpec
from dsl.source.load import load_text
from dsl.toolcalls import args_match

AT = dt.datetime.fromisoformat("2026-09-29T10:00:00-03:00")


def tool(yaml: str) -> ToolSpec:
    doc = load_text(yaml, "t.yaml")
    diags = Collector()
    spec = compile_tool(doc, (), "find_patient", doc.data, diags)
    assert diags.diagnostics == []
    return spec


ANSWERS = """
description: Look a patient up.
input_schema:
  type: object
  properties: {patient_id: {type: string}, archived: {type: boolean}}
answers:
  - when: {patient_id: P-1}
    returns: {name: Ana, visits: ["{{ args.patient_id }}/1", {at: "{{ now }}"}], age: 41}
  - when: {patient_id: P-1, archived: true}
    returns: never reached
  - when: {patient_id: P-2}
    error: "{{ args.patient_id }} is archived"
  - when: {}
    returns: "{{ args | tojson }}"
"""


@pytest.mark.parametrize(("args", "result"), [
    ({"patient_id": "P-1"}, ToolResult(
        '{"name": "Ana", "visits": ["P-1/1", {"at": "Tuesday 29 September 2026, 10:00 '
        '(UTC-03:00)"}], "age": 41}')),
    ({"patient_id": "P-1", "archived": True, "extra": 1}, ToolResult(
        '{"name": "Ana", "visits": ["P-1/1", {"at": "Tuesday 29 September 2026, 10:00 '
        '(UTC-03:00)"}], "age": 41}')),  # the first match wins; extra arguments are allowed
    ({"patient_id": "P-2"}, ToolResult("error: P-2 is archived", "tool-error")),
    ({"patient_id": "P-3"}, ToolResult('{"patient_id": "P-3"}')),  # when: {} matches all
])
def test_the_first_matching_answer_answers(args: dict[str, Any], result: ToolResult) -> None:
    assert answer(tool(ANSWERS), args, AT) == result


def test_no_match_and_no_returns_is_an_error_no_match_with_returns_is_returns() -> None:
    only = tool("description: x\ninput_schema: {type: object, properties: {id: {}}}\nanswers:\n  - when: {id: 1}\n    returns: one\n")
    assert answer(only, {"id": 2}, AT) == ToolResult(
        'error: no record for these arguments: {"id": 2}', "no-record")
    assert answer(only, None, AT) == ToolResult(
        "error: no record for these arguments: {}", "no-record")
    assert answer(only, {"id": 1}, AT) == ToolResult("one")
    fallback = tool("input_schema: {type: object, properties: {id: {}}}\nanswers:\n  - when: {id: 1}\n    returns: one\nreturns: [none, 0]\n")
    assert answer(fallback, {"id": 2}, AT) == ToolResult('["none", 0]')
    assert answer(tool("description: x\n"), {}, AT) == ToolResult("OK")


def test_a_tool_with_error_always_fails() -> None:
    down = tool("error: 'Down since {{ at.hour }}:00'\n")
    assert answer(down, {"anything": 1}, AT) == ToolResult("error: Down since 10:00",
                                                            "tool-error")
    said = tool("error: 'Error 503: try later'\n")
    assert answer(said, {}, AT) == ToolResult("Error 503: try later", "tool-error")


def test_values_compare_as_the_calls_check_compares_them() -> None:
    assert args_match({"n": 1}, {"n": 1, "m": 2})
    assert not args_match({"n": 1}, {"n": "1"})
    assert not args_match({"n": 1}, None)
    assert args_match({}, {})


def test_a_template_that_fails_on_the_models_arguments_answers_with_an_error() -> None:
    t = tool("returns: {x: \"{{ args.n * 100000000000 }}\"}\n")
    out = answer(t, {"n": "ab"}, AT)
    assert out.output.startswith("error: the tool failed: ")
    assert out.error is None
