"""Arguments a scenario writes for a tool, against its input_schema (dsl/compiler/arguments.py): the
rule on its own (what a fake tool's answers will use too), and through lint, word for word,
at the place in the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsl.compiler.arguments import argument_problems
from dsl.compiler.lint import lint_paths
from dsl.errors import Span
from dsl.model import ToolSpec
from tests.conftest import write

BOOK = {
    "type": "object",
    "properties": {
        "date": {"type": "string", "description": "YYYY-MM-DD"},
        "time": {"type": "string"},
        "treatment": {"type": "string", "enum": ["cleaning", "checkup", "filling"]},
        "people": {"type": "integer", "minimum": 1},
        "patient": {"$ref": "#/$defs/patient"},
    },
    "required": ["date", "time"],
    "$defs": {"patient": {"type": "object", "properties": {"name": {"type": "string"}}}},
}


def tool(schema: dict[str, Any] | None, declared: bool | None = True) -> ToolSpec:
    return ToolSpec("book_appointment", "Book.", schema or {"type": "object", "properties": {}},
                    "create", False, "OK", Span("s.yaml", 1, 1), args_declared=declared)


def problems(args: dict[str, Any], schema: dict[str, Any] | None = BOOK,
             declared: bool | None = True) -> list[tuple[Any, ...]]:
    return [(p.code, p.where, p.at_key, p.severity, p.message, p.hint)
            for p in argument_problems(tool(schema, declared), args)]


def test_arguments_that_fit_say_nothing() -> None:
    assert problems({"date": "2026-10-06", "treatment": "cleaning", "people": 2,
                     "patient": {"name": "Ana"}}) == []
    assert problems({"time": "15:00"}) == []  # the others are not required of a check


def test_an_unknown_argument_with_did_you_mean() -> None:
    assert problems({"dat": "2026-10-06"}) == [(
        "E232", ("dat",), True, "error",
        "the tool 'book_appointment' has no argument 'dat'; did you mean 'date'?",
        "the arguments in its input_schema: 'date', 'patient', 'people', 'time' and "
        "'treatment'")]


def test_values_of_the_wrong_type_or_outside_the_schema() -> None:
    assert problems({"date": 20261006, "treatment": "cleanin", "people": "2",
                     "patient": {"name": 7}}) == [
        ("E233", ("date",), False, "error",
         "the argument 'date' of the tool 'book_appointment' must be text, not a number "
         "(20261006)", 'put it in quotes: "20261006"'),
        ("E233", ("treatment",), False, "error",
         "the argument 'treatment' of the tool 'book_appointment' must be 'cleaning', "
         "'checkup' or 'filling'; got \"cleanin\"; did you mean 'cleaning'?",
         "the values its input_schema allows"),
        ("E233", ("people",), False, "error",
         "the argument 'people' of the tool 'book_appointment' must be a whole number, not "
         "text (\"2\")", ""),
        ("E233", ("patient", "name"), False, "error",  # through $ref, at the nested value
         "the argument 'patient' (name) of the tool 'book_appointment' must be text, not a "
         "number (7)", 'put it in quotes: "7"'),
    ]
    assert problems({"people": 0}) == [(
        "E233", ("people",), False, "error",
        "the argument 'people' of the tool 'book_appointment' does not fit its input_schema: "
        "0 is less than the minimum of 1", "")]


def test_a_tool_without_input_schema_warns() -> None:
    assert problems({"day": "monday"}, None, declared=False) == [(
        "W410", (), True, "warning",
        "the tool 'book_appointment' has no input_schema, so the model is told it takes no "
        "arguments, and it will not send 'day'",
        "describe its arguments in the tool's input_schema, e.g. input_schema: {type: object, "
        "properties: {day: {type: string}}}")]


@pytest.mark.parametrize("schema", [
    {"type": "object", "properties": {"a": {"type": "string"}}, "additionalProperties": True},
    {"type": "object", "properties": {"a": {}}, "patternProperties": {"^x_": {}}},
    {"type": "object"},  # no properties named: nothing to compare names with
])
def test_schemas_that_allow_other_arguments(schema: dict[str, Any]) -> None:
    assert problems({"x_other": 1}, schema) == []


def test_a_schema_that_cannot_be_trusted_is_not_used() -> None:
    assert problems({"anything": 1}, BOOK, declared=None) == []


def test_lint_reports_them_where_they_are_written(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "scenarist.yaml", """
        targets:
          local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", model: m}
        tools:
          list_business_hours:
            description: List the opening hours.
            returns: "09:00-18:00"
        """)
    write(tmp_path / "book.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools:
            - list_business_hours
            - name: book_appointment
              description: Book an appointment.
              input_schema:
                type: object
                properties:
                  date: {type: string}
                  treatment: {type: string, enum: [cleaning, checkup]}
        when: Quiero una limpieza el 6 de octubre
        then:
          - calls: {name: book_appointment, args: {dat: "2026-10-06", treatment: limpieza}}
          - calls: {name: list_business_hours, args: {day: tuesday}}
        """)
    got = [(str(d.span), d.severity, d.code) for d in lint_paths([Path(".")]).diagnostics]
    assert got == [("book.yaml:14:44", "error", "E232"), ("book.yaml:14:74", "error", "E233"),
                   ("book.yaml:15:40", "warning", "W410")]


def test_a_fake_tools_answers_are_checked_as_a_checks_args_are(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "scenarist.yaml", """
        targets:
          local: {kind: openai, base_url: "http://127.0.0.1:8080/v1", model: m}
        tools:
          lookup_prescription:
            description: Look up a prescription.
            input_schema:
              type: object
              properties:
                rx: {type: string}
            answers:
              - {when: {rx: RX-1}, returns: {refills_left: 2}}
              - {when: {rxx: RX-999}, error: not found}
          list_hours:
            description: List the opening hours.
            answers:
              - {when: {day: monday}, returns: "09:00-18:00"}
        """)
    write(tmp_path / "refill.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools:
            - lookup_prescription
            - list_hours
            - name: count_pills
              description: Count.
              input_schema:
                type: object
                properties:
                  n: {type: integer}
              answers:
                - {when: {n: "3"}, returns: three}
        when: Refill RX-1
        then:
          - calls: lookup_prescription
        """)
    got = [(str(d.span), d.severity, d.code, d.message)
           for d in lint_paths([Path(".")]).diagnostics]
    assert got == [
        ("refill.yaml:13:22", "error", "E233",
         "the argument 'n' of the tool 'count_pills' must be a whole number, not text "
         "(\"3\")"),
        ("scenarist.yaml:12:17", "error", "E232",
         "the tool 'lookup_prescription' has no argument 'rxx'; did you mean 'rx'?"),
        ("scenarist.yaml:16:10", "warning", "W410",
         "the tool 'list_hours' has no input_schema, so the model is told it takes no "
         "arguments, and it will not send 'day'"),
    ]
