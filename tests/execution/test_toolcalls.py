"""Tool-call precision, recall and F1: what a scenario expects (from its tool checks), how
each attempt is counted (TP, FP, FN, TN), and tool_correctness's any mode and empty list."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from dsl.checks import REGISTRY, CheckContext
from dsl.checks.tools import tool_correctness_score, tool_expectation
from dsl.errors import Collector, Span
from dsl.model import AttemptData, Call, Tokens, ToolSpec, Turn
from dsl.source.load import load_text
from dsl.toolcalls import COUNTS, CallRule, ToolExpectation, expectation_of
from tests.conftest import FakeServer, run_cli, suite_yaml, write

SPAN = Span("t.yaml", 1, 1)
TOOLS = tuple(ToolSpec(n, "", {"type": "object", "properties": {}}, "read", False, "OK", SPAN)
              for n in ("search", "book", "cancel"))


class Prepared(NamedTuple):
    name: str
    params: Any


def prepared(name: str, param: Any) -> Prepared:
    doc = load_text("x: 1\n", "t.yaml")
    diags = Collector()
    ctx = CheckContext(doc, ("then", 0, name), {t.name: t for t in TOOLS}, diags)
    out = REGISTRY[name].prepare(param, ctx)
    assert not [d for d in diags.diagnostics if d.severity == "error"]
    return Prepared(name, out)


def named(*names: str, **args: dict[str, Any]) -> tuple[Call, ...]:
    """Calls by name, each with the arguments ``args`` gives for its name (else none)."""
    return tuple(Call(f"c{i}", n, args.get(n, {}), "{}", "OK", "read")
                 for i, n in enumerate(names))


BOOK_AT_3 = CallRule("book", {"time": "15:00"})


@pytest.mark.parametrize(("expectation", "calls", "outcome"), [
    # a tool was expected
    (ToolExpectation(("search",)), named("search"), "tp"),
    (ToolExpectation(("search",)), named("search", "book"), "tp"),  # calls: allows others
    (ToolExpectation(("search",)), named("book"), "wrong"),  # the wrong tool instead
    (ToolExpectation(("search",)), named(), "fn"),  # none called
    (ToolExpectation(("search", "book")), named("search"), "fp"),  # one expected missing
    (ToolExpectation(("search", "book")), named("book", "search", "search"), "tp"),
    (ToolExpectation(("search",), forbidden=("cancel",)), named("search", "cancel"), "fp"),
    (ToolExpectation(("search",), only=True), named("search", "book"), "fp"),  # calls_only
    (ToolExpectation(("search",), only=True), named("search", "search"), "tp"),
    # not_calls with args: that call is a wrong one, another call to the tool is not
    (ToolExpectation(("book",), forbidden_calls=(BOOK_AT_3,)),
     named("book", book={"time": "15:00"}), "fp"),
    (ToolExpectation(("book",), forbidden_calls=(BOOK_AT_3,)),
     named("book", book={"time": "16:00"}), "tp"),
    # calls with args: only a call with those values is the expected one
    (ToolExpectation(("book",), expected_calls=(BOOK_AT_3,)),
     named("book", book={"time": "15:00", "date": "x"}), "tp"),
    (ToolExpectation(("book",), expected_calls=(BOOK_AT_3,)),
     named("book", book={"time": "16:00"}), "wrong"),
    # none was expected
    (ToolExpectation(none=True), named(), "tn"),
    (ToolExpectation(none=True), named("search"), "fp"),
])
def test_each_attempt_is_counted_once(expectation: ToolExpectation, calls: tuple[Call, ...],
                                      outcome: str) -> None:
    assert expectation.classify(calls) == outcome
    again = ToolExpectation.from_json(json.loads(json.dumps(expectation.as_json())))
    assert again == expectation


def test_a_wrong_tool_instead_is_both_a_wrong_call_and_a_missed_one() -> None:
    assert COUNTS["wrong"] == ("fp", "fn")
    assert {k: COUNTS[k] for k in ("tp", "fp", "fn", "tn")} == {
        "tp": ("tp",), "fp": ("fp",), "fn": ("fn",), "tn": ("tn",)}


@pytest.mark.parametrize(("checks", "expected"), [
    ([("calls", "search")], ToolExpectation(("search",))),
    ([("calls", {"name": "book", "times": 1}), ("calls_in_order", ["search", "book"])],
     ToolExpectation(("book", "search"))),
    ([("calls_only", ["search", "book"])], ToolExpectation(("search", "book"), only=True)),
    ([("tool_correctness", {"tools": ["search"], "mode": "exact"})],
     ToolExpectation(("search",))),
    ([("calls", "search"), ("not_calls", "cancel")],
     ToolExpectation(("search",), forbidden=("cancel",))),
    ([("calls", {"name": "cancel", "args": {"day": "mon"}}),
      ("not_calls", {"name": "cancel", "args": {"day": "sun"}})],
     ToolExpectation(("cancel",), expected_calls=(CallRule("cancel", {"day": "mon"}),),
                     forbidden_calls=(CallRule("cancel", {"day": "sun"}),))),
    ([("not_calls", ["search", "book", "cancel"])],  # every tool: none expected
     ToolExpectation(forbidden=("search", "book", "cancel"), none=True)),
    ([("tool_correctness", [])], ToolExpectation(none=True)),
    ([("not_calls", "cancel")], None),  # says nothing about which tool to call
    ([("asks_to_confirm", "cancel")], None),  # not one of the four expecting checks
    ([("contains", "x")], None),
])
def test_the_expectation_comes_from_the_tool_checks(checks: list[tuple[str, Any]],
                                                    expected: ToolExpectation | None) -> None:
    tools = (*TOOLS[:2], ToolSpec("cancel", "", {"type": "object"}, "delete", True, "OK", SPAN))
    doc = load_text("x: 1\n", "t.yaml")
    compiled = []
    for name, param in checks:
        ctx = CheckContext(doc, ("then", 0, name), {t.name: t for t in tools}, Collector())
        compiled.append(Prepared(name, REGISTRY[name].prepare(param, ctx)))
    assert tool_expectation(compiled, tools) == expected


def test_older_plans_kept_only_the_expected_tools() -> None:
    assert expectation_of({"expected_tools": ["a"]}) == ToolExpectation(("a",))
    assert expectation_of({"expected_tools": []}) is None
    assert expectation_of({"tool_expectation": None, "expected_tools": ["a"]}) is None
    e = ToolExpectation(("a",), ("b",), True, False)
    assert ToolExpectation.from_json(json.loads(json.dumps(e.as_json()))) == e


def turned(*turns: list[str]) -> tuple[tuple[Call, ...], tuple[Turn, ...]]:
    """A conversation's calls and turns: each turn's calls by name."""
    calls = tuple(Call(f"c{i}", n, {}, "{}", "OK", "read")
                  for i, n in enumerate(n for t in turns for n in t))
    return calls, tuple(Turn("say", "x", "ok", len(t), (), 1, 2) for t in turns)


SEARCH = ToolExpectation(("search",))
NOT_SEARCH = ToolExpectation(forbidden=("search",), none=True)


@pytest.mark.parametrize(("expectation", "turns", "outcome"), [
    # turn 1 must not search, turn 2 must: each turn's own calls (before: fp)
    (ToolExpectation(whole=False, turns=((0, NOT_SEARCH), (1, SEARCH))), [[], ["search"]],
     "tp"),
    (ToolExpectation(whole=False, turns=((0, NOT_SEARCH), (1, SEARCH))),
     [["search"], ["search"]], "fp"),
    (ToolExpectation(whole=False, turns=((0, NOT_SEARCH), (1, SEARCH))), [[], []], "fn"),
    (ToolExpectation(whole=False, turns=((0, NOT_SEARCH),)), [[], ["search"]], "tn"),
    # the scenario's own expectation sees every call of the conversation
    (ToolExpectation(("book",), turns=((1, SEARCH),)), [["book"], ["search"]], "tp"),
    (ToolExpectation(("book",), turns=((1, SEARCH),)), [["book"], []], "fp"),  # one missing
    (ToolExpectation(("book",), turns=((1, SEARCH),)), [[], ["search"]], "wrong"),
    (ToolExpectation(("book",), turns=((0, NOT_SEARCH),)), [["search", "book"], []], "fp"),
    (ToolExpectation(whole=False, turns=((0, NOT_SEARCH),)), [["search"], []], "fp"),
    (ToolExpectation(whole=False, turns=((2, SEARCH),)), [[], []], "fn"),  # never reached
])
def test_a_turns_expectation_applies_to_its_own_calls(
        expectation: ToolExpectation, turns: list[list[str]], outcome: str) -> None:
    calls, done = turned(*turns)
    assert expectation.classify_attempt(calls, done) == outcome
    again = ToolExpectation.from_json(json.loads(json.dumps(expectation.as_json())))
    assert again == expectation


CONVERSATION = """
    given:
      at: 2026-09-29T10:00:00-03:00
      tools: [list_business_hours, book_appointment]
    when:
      - say: "Hola, soy Ana."
        then:
          - not_calls: list_business_hours
      - say: "¿Hasta qué hora abren?"
        then:
          - calls: list_business_hours
    then:
      - contains: "18:00"
    runs: 2
    min_pass: 1
    """


def test_tool_call_f1_in_a_conversation_counts_each_turn_on_its_own_calls(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """The issue's example: before, tp 0, fp 2, F1 0.0 although every check passed."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "talk.yaml", CONVERSATION)
    server.script({"rules": [
        {"match": "Ana", "per_turn": True, "replies": [{"text": "¡Hola Ana!"}]},
        {"match": "abren", "per_turn": True, "replies": [
            {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
            {"text": "Hoy hasta las 18:00."}]}]})
    r = run_cli("run", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    (row,) = summary["scenarios"]
    assert row["passes"] == 2
    assert row["tool_calls"] == {"tp": 2, "fp": 0, "fn": 0, "tn": 0, "precision": 1.0,
                                 "recall": 1.0, "f1": 1.0}
    plan = json.loads((run_dir / "plan.json").read_text())
    (spec,) = plan["scenarios"]
    assert spec["tool_expectation"] == {
        "expected": [], "forbidden": [], "only": False, "none": False, "whole": False,
        "turns": [{"turn": 2, "expected": ["list_business_hours"], "forbidden": [],
                   "only": False, "none": False}]}
    assert spec["expected_tools"] == ["list_business_hours"]


def attempt(*names: str) -> AttemptData:
    calls = tuple(Call(f"c{i}", n, {}, "{}", "OK", "read") for i, n in enumerate(names))
    return AttemptData("hola", "ok", calls, dt.datetime(2026, 1, 1, tzinfo=dt.UTC), TOOLS, 1,
                       1.0, Tokens())


@pytest.mark.parametrize(("expected", "called", "score"), [
    (("search", "search"), ["search"], 0.5),  # each expected entry needs its own call
    (("search", "search"), ["search", "search"], 1.0),
    (("search", "book"), ["book", "search"], 1.0),
    (("search",), ["search", "search"], 1.0),
    ((), [], 1.0),  # nothing expected, nothing called
    ((), ["search"], 0.0),
])
def test_tool_correctness_any_matches_each_expected_entry_to_a_distinct_call(
        expected: tuple[str, ...], called: list[str], score: float) -> None:
    assert tool_correctness_score(expected, called, "any") == score


@pytest.mark.parametrize("mode", ["any", "exact", "ordered"])
def test_an_empty_expected_list_is_defined_in_every_mode(mode: str) -> None:
    assert tool_correctness_score((), [], mode) == 1.0
    assert tool_correctness_score((), ["search"], mode) == 0.0


def test_tool_correctness_of_nothing_through_the_check() -> None:
    p = prepared("tool_correctness", [])
    none = REGISTRY["tool_correctness"].evaluate(p.params, attempt())
    assert (none.status, none.reason) == (
        "pass", "tool correctness (any) 1.00: expected no call; called none")
    some = REGISTRY["tool_correctness"].evaluate(p.params, attempt("search"))
    assert (some.status, some.reason) == (
        "fail", "tool correctness (any) 0.00: expected no call; called search; needs 1.00")
    twice = prepared("tool_correctness", ["search", "search"])
    o = REGISTRY["tool_correctness"].evaluate(twice.params, attempt("search"))
    assert (o.status, o.score) == ("fail", 0.5)


TOOLING = {
    "rules": [
        {"match": "hours", "replies": [
            {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
            {"text": "Until 18:00."}]},
        {"match": "book", "by_seed": {
            "1": [{"tool_calls": [{"name": "book_appointment",
                                   "arguments": {"date": "2026-10-01", "time": "10:00"}}]},
                  {"text": "Booked."}],
            "2": [{"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
                  {"text": "Here are the hours."}],
            "3": [{"text": "I cannot book."}]}},
        {"match": "chat", "replies": [{"text": "Hello!"}]},
    ]
}


def test_a_run_reports_tool_call_f1_per_scenario_per_target_and_for_the_suite(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    targets = {n: {"kind": "openai", "base_url": server.url, "model": f"m-{n}",
                   "retry": {"max_attempts": 1}} for n in ("a", "b")}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets))
    for name, when, then in (
            ("hours", "hours?", "[{calls: list_business_hours}]"),
            ("book", "book me", "[{calls: book_appointment}]"),
            ("chat", "chat", "[{not_calls: [list_business_hours, book_appointment]}]")):
        write(tmp_path / f"{name}.yaml", f"""
            given:
              at: 2026-09-29T10:00:00-03:00
              tools: [list_business_hours, book_appointment]
            when: "{when}"
            then: {then}
            runs: 3
            min_pass: 1
            """)
    server.script(TOOLING)
    r = run_cli("run", "-t", "a", "-t", "b", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = {(x["scenario"], x["target"]): x["tool_calls"] for x in summary["scenarios"]}
    # book: seed 1 right, seed 2 the wrong tool instead (wrong and missed), seed 3 no call
    assert rows[("book", "a")] == {"tp": 1, "fp": 1, "fn": 2, "tn": 0, "precision": 0.5,
                                   "recall": pytest.approx(1 / 3), "f1": 0.4}
    assert rows[("hours", "a")]["tp"] == 3
    assert rows[("chat", "a")] == {"tp": 0, "fp": 0, "fn": 0, "tn": 3, "precision": 1.0,
                                   "recall": 1.0, "f1": 1.0}
    every = {"tp": 8, "fp": 2, "fn": 4, "tn": 6, "precision": 0.8,
             "recall": pytest.approx(2 / 3), "f1": pytest.approx(16 / 22, abs=1e-12)}
    assert summary["tool_calls"]["all"] == every
    half = {"tp": 4, "fp": 1, "fn": 2, "tn": 3, "precision": 0.8,
            "recall": pytest.approx(2 / 3), "f1": pytest.approx(8 / 11, abs=1e-12)}
    assert summary["tool_calls"]["by_target"] == {"a": half, "b": half}
    assert ("Tool calls: F1 73% (precision 80%, recall 67%; 8 right, 2 wrong, 4 missed); "
            "a F1 73%, b F1 73%") in r.output.splitlines()
    md = (run_dir / "summary.md").read_text()
    assert ("Tool calls: F1 73% (precision 80%, recall 67%; 8 right, 2 wrong, 4 missed) · "
            "`a` F1 73% · `b` F1 73%") in md
    html = (run_dir / "report.html").read_text()
    assert 'id="tool-calls"' in html
    assert "(precision 50%, recall 33%; 1 right, 1 wrong, 2 missed, 0 rightly none)" in html


WRONG_TOOL = {"rules": [
    {"match": "book me", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "We are open until 18:00."}]},
    {"match": "hours and book", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}},
                        {"name": "book_appointment",
                         "arguments": {"date": "2026-09-30", "time": "15:00"}}]},
        {"text": "Booked."}]},
]}


def test_a_forbidden_call_and_a_wrong_tool_are_never_right(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """Issue 32, item 12: a call `not_calls` forbids with arguments was counted right, and
    the wrong tool instead of the expected one left recall at 100% and the summary saying
    "no calls were expected" although `calls` expected one."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    for name, when, then in (
            ("instead", "book me", "[{calls: book_appointment}]"),
            ("forbidden", "hours and book",
             "[{calls: list_business_hours}, "
             "{not_calls: {name: book_appointment, args: {time: '15:00'}}}]")):
        write(tmp_path / f"{name}.yaml", f"""
            given:
              at: 2026-09-29T10:00:00-03:00
              tools: [list_business_hours, book_appointment]
            when: "{when}"
            then: {then}
            runs: 2
            min_pass: 1
            """)
    server.script(WRONG_TOOL)
    r = run_cli("run", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    rows = {x["scenario"]: x["tool_calls"] for x in summary["scenarios"]}
    # the wrong tool instead: a wrong call and a missed one, each attempt
    assert rows["instead"] == {"tp": 0, "fp": 2, "fn": 2, "tn": 0, "precision": 0.0,
                               "recall": 0.0, "f1": 0.0}
    # the expected tool and a call not_calls forbids with these arguments beside it: a
    # wrong call (never right), the expected one not missed — and calls were expected
    assert rows["forbidden"] == {"tp": 0, "fp": 2, "fn": 0, "tn": 0, "precision": 0.0,
                                 "recall": 1.0, "f1": 0.0, "expected": 2}
    assert summary["tool_calls"]["all"] == {"tp": 0, "fp": 4, "fn": 2, "tn": 0,
                                            "precision": 0.0, "recall": 0.0, "f1": 0.0}
    line = "Tool calls: F1 0% (precision 0%, recall 0%; 0 right, 4 wrong, 2 missed)"
    assert line in r.output.splitlines()
    assert line in (run_dir / "summary.md").read_text()
    html = (run_dir / "report.html").read_text()
    assert "(precision 0%, recall 0%; 0 right, 2 wrong, 2 missed, 0 rightly none)" in html
    assert ("(precision 0%, recall not measured (every attempt made an expected call, and none "
            "the right calls); 0 right, 2 wrong, 0 missed, 0 rightly none)") in html
    for text in (r.output, html, (run_dir / "summary.md").read_text()):
        assert "no calls were expected" not in text
    plan = json.loads((run_dir / "plan.json").read_text())
    spec = next(s for s in plan["scenarios"] if s["id"] == "forbidden")
    assert spec["tool_expectation"]["forbidden_calls"] == [
        {"name": "book_appointment", "args": {"time": "15:00"}}]


def test_no_attempt_counted_is_not_no_call_expected() -> None:
    """Every attempt ended in an error: recall measured nothing, and no call was said to
    be unexpected."""
    from dsl.results.words import prf_text
    from dsl.store.summaryfile import ToolCounts

    assert prf_text(ToolCounts()) == (
        "F1 100% (precision 100%, no attempt was counted; 0 right, 0 wrong, 0 missed)")
    assert prf_text(ToolCounts(fp=2, precision=0.0, f1=0.0)) == (
        "F1 0% (precision 0%, no calls were expected; 0 right, 2 wrong, 0 missed)")
    # calls were expected; each attempt made one, but not the right calls
    assert prf_text(ToolCounts(fp=2, precision=0.0, f1=0.0, expected=2)) == (
        "F1 0% (precision 0%, recall not measured (every attempt made an expected call, and "
        "none the right calls); 0 right, 2 wrong, 0 missed)")
