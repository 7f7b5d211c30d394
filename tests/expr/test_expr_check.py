"""The `expect` check in the pipeline: compiled from scenario files and scenarist.yaml,
problems located in the right file at the right line and column, outcomes on attempts."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

import pytest

from dsl.compiler.compile import compile_paths
from dsl.errors import Diagnostic
from dsl.expr import env_for
from dsl.expr.sample import attempt
from dsl.model import Scenario

SUITE = Path(__file__).with_name("suite")
LINT_OUTPUT = Path(__file__).with_name("lint_output.txt")  # what `scenarist lint` prints
HEADER = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [search_slots, book_appointment]
when: "Quiero un turno"
then:
"""


def make_suite(tmp_path: Path, scenario: str, extra_checks: str = "") -> Path:
    """The test suite plus ``extra_checks`` (under checks:), and s.yaml with ``scenario``
    as its ``then`` items."""
    suite = (SUITE / "scenarist.yaml").read_text("utf-8")
    suite += textwrap.indent(textwrap.dedent(extra_checks), "  ")
    (tmp_path / "scenarist.yaml").write_text(suite, "utf-8")
    then = textwrap.indent(textwrap.dedent(scenario), "  ")
    (tmp_path / "s.yaml").write_text(HEADER + then, "utf-8")
    return tmp_path


def diagnostics(tmp_path: Path, scenario: str, extra_checks: str = "") -> list[str]:
    root = make_suite(tmp_path, scenario, extra_checks)
    result = compile_paths([root / "s.yaml"])
    return [_line(d, root) for d in sorted(result.diagnostics, key=Diagnostic.sort_key)]


def _line(d: Diagnostic, root: Path) -> str:
    file = Path(d.span.file).name
    return f"{file}:{d.span.line}:{d.span.col} {d.severity} {d.code} {d.message}"


def booking() -> Scenario:
    result = compile_paths([SUITE])
    assert result.diagnostics == []
    (scenario,) = result.scenarios
    return scenario


def test_the_test_suite_compiles_with_readable_labels() -> None:
    labels = [c.label for c in booking().checks]
    assert labels == [
        'calls: "book_appointment"',
        "expect: count(calls) <= 3 and '15:00' in answer",
        "expect: books_a_weekday",
        "expect: searched_first",
        "expect: books the first free slot",
        "expect: all(calls, action != 'delete') and date(call('book_appointment').args.date) "
        "- d…",
    ]


def test_outcomes_on_attempts() -> None:
    checks = {c.label: c for c in booking().checks}
    good = attempt()
    for c in checks.values():
        assert c.run(good).status == "pass", c.label
    sunday = attempt(calls=[
        {"name": "search_slots", "output": '{"slots": ["09:00"]}'},
        {"name": "book_appointment", "args": {"date": "2026-10-04", "time": "15:00"},
         "action": "create"},
    ])
    named = checks["expect: books_a_weekday"].run(sunday)
    assert (named.status, named.reason, named.score) == (
        "fail",
        "books_a_weekday: expected weekday(date(call('book_appointment').args.date)) < 5 to "
        "be true; it was false (weekday(...) = 6; call('book_appointment').args.date = "
        "\"2026-10-04\")",
        0.0,
    )
    titled = checks["expect: books the first free slot"].run(sunday)
    assert titled.reason == (
        "books the first free slot: expected call('book_appointment').args.time == "
        "call('search_slots').output.slots[0] to be true; it was false "
        "(call('book_appointment').args.time = \"15:00\"; "
        "call('search_slots').output.slots[0] = \"09:00\")")
    nothing = attempt(calls=[])
    outcomes = [(o.status, o.reason) for o in (c.run(nothing) for c in checks.values())]
    assert outcomes == [
        ("fail", "expected a call to book_appointment; it was never called (calls made: none)"),
        ("pass", "count(calls) <= 3 and '15:00' in answer is true"),
        ("error", "books_a_weekday: could not evaluate weekday(date(call('book_appointment')"
                  ".args.date)) < 5: weekday(...) is null, so it cannot be compared"),
        ("fail", "searched_first: expected first(calls).name == 'search_slots' to be true; it "
                 "was false (first(calls).name = null)"),
        ("error", "books the first free slot: could not evaluate call('book_appointment')"
                  ".args.time == call('search_slots').output.slots[0]: both "
                  "call('book_appointment').args.time and call('search_slots').output.slots[0] "
                  "are null, so nothing was compared; to ask whether something is missing, "
                  "compare it with null"),
        ("error", "could not evaluate all(calls, action != 'delete') and date(call("
                  "'book_appointment').args.date) - date(at.date) <= 7: date(call("
                  "'book_appointment').args.date…: date(call('book_appointment').args.date) "
                  "is null"),
    ]


def test_one_env_per_attempt() -> None:
    a = attempt()
    assert env_for(a) is env_for(a)
    assert env_for(attempt()) is not env_for(a)


def test_problems_are_reported_at_the_yaml_line_and_column(tmp_path: Path) -> None:
    assert diagnostics(tmp_path, """\
      - expect: "answer = 'x'"
      - expect: count(calls) <= 2 && called('search_slots')
      - expect: {name: two calls, expr: "count(calls) == '2'"}
      - expect: |
          called('search_slots')
          and anwser != ''
    """) == [
        "s.yaml:6:21 error X301 '=' compares nothing; to compare use '=='",
        "s.yaml:7:31 error X301 '&&' is not an operator; to require both conditions use 'and'",
        "s.yaml:8:51 error X303 '==' compares a number with text, so it is never true",
        "s.yaml:11:11 error X302 unknown name 'anwser'; did you mean 'answer'?",
    ]


def test_named_checks_and_their_problems(tmp_path: Path) -> None:
    assert diagnostics(tmp_path, """\
      - expect: books_a_weekday
      - expect: books_a_wekday
      - expect: broken
      - expect: "count(calls) > 0"
    """, """\
      broken: "count(calls) <= 'two'"
      answer: "true"
      uses_cancel: "not called('cancel_appointmnt')"
    """) == [
        "s.yaml:7:13 error E217 there is no check named 'books_a_wekday' in scenarist.yaml; did "
        "you mean 'books_a_weekday'?",
        "scenarist.yaml:31:25 error X303 '<=' cannot compare a number with text",
        "scenarist.yaml:32:3 error S105 'answer' cannot name a check: in an expression it "
        "already means something else",
    ]


def test_unknown_bare_names_without_named_checks(tmp_path: Path) -> None:
    root = make_suite(tmp_path, "- expect: anwser\n- expect: answer\n")
    text = (root / "scenarist.yaml").read_text("utf-8")
    (root / "scenarist.yaml").write_text(text[: text.index("checks:")], "utf-8")
    result = compile_paths([root / "s.yaml"])
    assert [_line(d, root) for d in result.diagnostics] == [
        "s.yaml:6:13 error E217 'anwser' is neither a check defined in scenarist.yaml nor a "
        "value an expression can use; did you mean 'answer'?",
        "s.yaml:7:13 error X303 an expect expression must be true or false; this one is text",
    ]


def test_tools_the_scenario_does_not_have(tmp_path: Path) -> None:
    assert diagnostics(tmp_path, """\
      - expect: "called('bok_appointment')"
      - expect: "call('cancel_appointment').pending"
      - expect: uses_cancel
    """, """\
      uses_cancel: "not called('cancel_appointment')"
    """) == [
        "s.yaml:6:21 warning W413 the scenario has no tool 'bok_appointment': the agent is "
        "not offered it, so called('bok_appointment') is false unless the agent calls a tool "
        "it was not given by that name; did you mean 'book_appointment'?",
        "s.yaml:7:19 warning W413 the scenario has no tool 'cancel_appointment': the agent is "
        "not offered it, so call('cancel_appointment') is null unless the agent calls a tool "
        "it was not given by that name; did you mean 'book_appointment'?",
        "s.yaml:8:13 warning W413 the check 'uses_cancel' uses called('cancel_appointment'), "
        "but the scenario has no tool 'cancel_appointment': the agent is not offered it, so "
        "called('cancel_appointment') is false unless the agent calls a tool it was not given "
        "by that name; did you mean 'book_appointment'?",
    ]


def test_the_shape_of_expect_and_checks_is_validated(tmp_path: Path) -> None:
    """The JSON Schema (generated from the registry) catches malformed expect checks and
    checks: entries; the wording of these messages belongs to dsl/source/validate.py."""
    found = diagnostics(tmp_path, """\
      - expect: {name: no expression}
      - expect: 42
      - expect: ""
    """)
    assert [f.split(" ")[0:3] for f in found] == [
        ["s.yaml:6:5", "error", "S104"],
        ["s.yaml:7:13", "error", "S103"],
        ["s.yaml:8:13", "error", "S105"],
    ]
    root = make_suite(tmp_path, "- expect: \"true\"\n", "n: 5\nm: \"\"\n")
    suite = [d for d in compile_paths([root / "s.yaml"]).diagnostics
             if d.span.file.endswith("scenarist.yaml")]
    assert sorted((d.span.line, d.span.col, d.code) for d in suite) == [(31, 6, "S103"),
                                                                  (32, 6, "S105")]


def test_lint_prints_expression_problems_with_a_caret(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from click.testing import CliRunner

    from dsl.cli import main

    make_suite(tmp_path, """\
      - expect: "answer = 'x'"
      - expect: "len(latency_ms) > 3 and '18:00' in anwser"
      - expect: "answer matches '18(:'"
      - expect: books_a_wekday
    """, """\
      broken: "count(calls) <= 'two'"
    """)
    shutil.copy(SUITE / "booking.yaml", tmp_path / "booking.yaml")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    result = CliRunner().invoke(main, ["lint", "."])
    assert result.exit_code == 1
    assert result.output == LINT_OUTPUT.read_text("utf-8")


def test_expressions_that_ignore_the_attempt_are_reported(tmp_path: Path) -> None:
    assert diagnostics(tmp_path, """\
      - expect: "1 < 2"
      - expect: constant
    """, """\
      constant: "'a' in 'abc'"
    """) == [
        "s.yaml:6:14 warning W404 this expression does not look at the attempt, so it gives "
        "the same result every time",
        "scenarist.yaml:31:14 warning W404 this expression does not look at the attempt, so it "
        "gives the same result every time",
    ]
