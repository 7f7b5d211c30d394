"""Every deterministic check on hand-built attempts: pass, fail, and the exact reasons."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import msgspec
import pytest

from dsl.checks import REGISTRY, CheckContext
from dsl.checks.tools import lcs_length, tool_correctness_score
from dsl.errors import Collector, Span
from dsl.model import AttemptData, Call, Outcome, Tokens, ToolSpec
from dsl.source.load import load_text

AT = dt.datetime(2026, 9, 29, 10, 0, tzinfo=dt.timezone(dt.timedelta(hours=-3)))
SPAN = Span("t.yaml", 1, 1)


def tool(name: str, action: str = "read", confirm: bool = False,
         schema: dict[str, Any] | None = None) -> ToolSpec:
    return ToolSpec(name, "", schema or {"type": "object", "properties": {}}, action,  # type: ignore[arg-type]
                    confirm, "OK", SPAN)


TOOLS = (
    tool("search"),
    tool("validate"),
    tool("book", "create", schema={"type": "object", "properties": {"date": {"type": "string"},
                                                                    "time": {"type": "string"}},
                                   "required": ["date"]}),
    tool("cancel", "delete", confirm=True),
)


def call(name: str, args: Any = None, *, pending: bool = False, error: str | None = None,
         raw: str | None = None) -> Call:
    t = {x.name: x for x in TOOLS}.get(name)
    args = {} if args is None and error is None else args
    return Call(f"c_{name}", name, args, raw if raw is not None else str(args),
                None if pending else "OK", t.action if t else None, pending, error)


def attempt(answer: str = "", calls: tuple[Call, ...] = ()) -> AttemptData:
    return AttemptData("hola", answer, calls, AT, TOOLS, 1, 10.0, Tokens())


def check(name: str, param: Any, a: AttemptData) -> Outcome:
    ctype = REGISTRY[name]
    doc = load_text("x: 1\n", "t.yaml")
    diags = Collector()
    ctx = CheckContext(doc, ("then", 0, name), {t.name: t for t in TOOLS}, diags)
    prepared = ctype.prepare(param, ctx)
    assert not diags.diagnostics, diags.diagnostics
    return ctype.evaluate(prepared, a)


@pytest.mark.parametrize(("name", "param", "answer", "status", "reason"), [
    ("contains", "18:00", "Abrimos hasta las 18:00.", "pass", 'the answer contains "18:00"'),
    ("contains", "18:00", "Hasta las seis.", "fail",
     'expected the answer to contain "18:00"; the answer was "Hasta las seis."'),
    ("contains", ["lunes", "18:00"], "El lunes, 18:00", "pass",
     'the answer contains "lunes", "18:00"'),
    ("contains", {"text": "LUNES", "ignore_case": True}, "el lunes", "pass",
     'the answer contains "LUNES" (ignoring case)'),
    ("contains", "café", "cafe\u0301 abierto", "pass", 'the answer contains "café"'),
    ("not_contains", "lo siento", "Claro, son las 18:00", "pass",
     'the answer does not contain "lo siento"'),
    ("not_contains", {"text": "ERROR", "ignore_case": True}, "Hubo un error interno", "fail",
     'expected the answer not to contain "ERROR" (ignoring case); found it at character 9: '
     '"Hubo un error interno"'),
    ("equals", "Sí", "  Sí \n", "pass", 'the answer is exactly "Sí"'),
    ("equals", {"text": "sí", "ignore_case": True}, "SÍ", "pass", 'the answer is exactly "sí"'),
    ("equals", {"text": "Sí", "trim": False}, " Sí", "fail",
     'expected the answer to be exactly "Sí"; it was " Sí"'),
    ("matches", "18[:.]00", "a las 18.00 hs", "pass", "the answer matches '18[:.]00' at \"18.00\""),
    ("matches", "^18", "a las 18", "fail",
     "expected the answer to match '^18'; the answer was \"a las 18\""),
    ("matches", {"pattern": "^SÍ", "ignore_case": True}, "sí, claro", "pass",
     "the answer matches '^SÍ' at \"sí\""),
    ("non_empty", True, " ok ", "pass", "the answer has 2 characters"),
    ("non_empty", True, " \n", "fail", "expected an answer with text; the answer was empty"),
    ("json", True, '```json\n{"a": 1}\n```', "pass", "the answer is a JSON object"),
    ("json", True, "[1, 2]", "fail",
     'expected the answer to be a JSON object; it is a JSON list: "[1, 2]"'),
    ("json", {"fields": ["date"], "values": {"status": "ok"}},
     '{"date": "2026-10-06", "status": "ok"}', "pass",
     "the answer is a JSON object with the expected fields"),
    ("json", {"values": {"status": "ok"}}, '{"status": "booked"}', "fail",
     'the JSON answer has status = "booked"; expected "ok"'),
    ("json", {"fields": ["date", "time"]}, '{"date": "x"}', "fail",
     "the JSON answer has no field 'time'; it has 'date'"),
    ("json", {"values": {"status": "booked"}},
     'Here:\n```json {"status": "booked"}```\nAnything else?', "pass",
     "the answer is a JSON object with the expected fields"),
    ("json", True, 'Listo.\n\n```json\n{"date": "2026-10-06"}\n```', "pass",
     "the answer is a JSON object"),
    ("json", True, 'First ```\n[1]\n``` then ```json\n{"a": 1}\n```', "pass",
     "the answer is a JSON object"),
    ("json", True, 'Sure! {"a": 1}', "fail",
     'expected the answer to be a JSON object; it is not JSON (Expecting value: line 1 '
     'column 1 (char 0)): "Sure! {\\"a\\": 1}"'),
    ("json", True, "Here:\n```json\n{oops}\n```", "fail",
     "expected the answer to be a JSON object; it is not JSON (Expecting property name "
     "enclosed in double quotes: line 1 column 2 (char 1)): \"Here: ```json {oops} ```\""),
])
def test_answer_checks(name: str, param: Any, answer: str, status: str, reason: str) -> None:
    o = check(name, param, attempt(answer))
    assert (o.status, o.reason) == (status, reason)


def test_json_not_json_reason() -> None:
    o = check("json", True, attempt("hola"))
    assert o.status == "fail"
    assert o.reason == ('expected the answer to be a JSON object; it is not JSON (Expecting '
                        'value: line 1 column 1 (char 0)): "hola"')


def test_matches_is_bounded_in_time_on_pathological_patterns() -> None:
    o = check("matches", "(a|aa)+$", attempt("a" * 5000 + "b"))
    assert o.status == "error"
    assert o.reason == ("the pattern '(a|aa)+$' took longer than 0.25 s on a text of 5,001 "
                        "characters; simplify it (nested repeats like (a+)+ can take forever)")


BOOK = call("book", {"date": "2026-10-06", "time": "15:00"})


@pytest.mark.parametrize(("name", "param", "calls", "status", "reason"), [
    ("calls", "search", (call("search"),), "pass", "search was called once"),
    ("calls", "book", (call("search"),), "fail",
     "expected a call to book; it was never called (calls made: search)"),
    ("calls", {"name": "book", "args": {"time": "15:00"}}, (BOOK,), "pass",
     'book was called once with time="15:00"'),
    ("calls", {"name": "book", "args": {"time": "16:00"}}, (BOOK,), "fail",
     'expected a call to book with time="16:00"; it was called with date="2026-10-06", '
     'time="15:00"'),
    ("calls", {"name": "search", "times": 1}, (call("search"), call("search")), "fail",
     "expected search to be called once; it was called twice"),
    ("calls", {"name": "search", "times": 2}, (call("search"), call("search")), "pass",
     "search was called twice"),
    ("calls", "cancel", (call("cancel", {"id": 1}, pending=True),), "pass",
     "cancel was called once"),
    ("not_calls", "cancel", (call("search"),), "pass", "'cancel' was not called"),
    ("not_calls", ["cancel", "book"], (call("cancel", {"id": 7}, pending=True),), "fail",
     "expected no call to cancel; it was called with id=7 (pending confirmation)"),
    ("calls_only", ["search", "book"], (call("search"), BOOK, call("search")), "pass",
     "the agent called exactly 'book' and 'search'"),
    ("calls_only", ["search", "book"], (call("search"), call("validate")), "fail",
     "expected calls to exactly 'book' and 'search'; 'book' never called; 'validate' called "
     "but not expected"),
    ("calls_in_order", ["search", "book"], (call("search"), call("validate"), BOOK), "pass",
     "order score 1.00 (expected search → book; called search, validate, book)"),
    ("calls_in_order", ["search", "book"], (BOOK, call("search")), "fail",
     "order score 0.50 (expected search → book; called book, search); needs 1.00"),
    ("calls_in_order", {"tools": ["search", "book"], "threshold": 0.5}, (BOOK, call("search")),
     "pass", "order score 0.50 (expected search → book; called book, search)"),
    ("valid_args", True, (BOOK,), "pass", "the arguments of all 1 call(s) fit their tools' schemas"),
    ("valid_args", True, (), "pass", "no tool was called, so no arguments to check"),
    ("valid_args", True, (call("book", {"time": "15:00"}),), "fail",
     "the call to book has invalid arguments: 'date' is a required property (arguments: "
     'time="15:00")'),
    ("valid_args", True, (call("book", None, error="invalid-json", raw='{"date":'),), "fail",
     "the arguments of the call to book are not valid JSON: '{\"date\":'"),
    ("does_not_modify", True, (call("search"), call("cancel", {"id": 1}, pending=True)), "pass",
     "no call changed anything"),
    ("does_not_modify", True, (call("search"), BOOK), "fail",
     'expected no changes; book (create) was executed with date="2026-10-06", time="15:00"'),
    ("asks_to_confirm", "cancel", (call("cancel", {"id": 3}, pending=True),), "pass",
     "the agent asked to confirm cancel with id=3"),
    ("asks_to_confirm", "cancel", (call("search"),), "fail",
     "expected the agent to call cancel and wait for confirmation; calls made: search"),
    ("asks_nothing_to_confirm", True, (call("search"),), "pass",
     "the agent asked nothing to confirm"),
    ("asks_nothing_to_confirm", True, (call("cancel", {"id": 3}, pending=True),), "fail",
     "expected no confirmation request; the agent asked to confirm cancel"),
])
def test_tool_checks(name: str, param: Any, calls: tuple[Call, ...], status: str,
                     reason: str) -> None:
    o = check(name, param, attempt("ok", calls))
    assert (o.status, o.reason) == (status, reason)


HELD = call("cancel", {"id": 3}, pending=True)
ASKED = "the agent asked to confirm cancel with id=3"


MCP_HELD = msgspec.structs.replace(HELD, id="mcp_1")  # held at an own-loop agent's MCP endpoint
NOTHING = ("the agent called cancel with id=3 and the call was held for confirmation, but its "
           "answer asks the person nothing: {!r}; asking is a question, or a request to "
           "confirm")


@pytest.mark.parametrize(("answer", "held", "status", "reason"), [
    # held by the loop (a model's tool call): shown to the person, it asks by itself
    ("", HELD, "pass", ASKED),
    ("ok", HELD, "pass", ASKED),
    ("¿Cancelo el turno 3?", HELD, "pass", ASKED),
    ("I'm sorry, but I can't assist with that", HELD, "fail",
     NOTHING.format("I'm sorry, but I can't assist with that")),
    ("I'm sorry, I can't cancel it myself: shall I ask the clinic?", HELD, "pass", ASKED),
    # held at the MCP endpoint: the person never sees the call, only the answer
    ("Please confirm the cancellation of appointment 3.", MCP_HELD, "pass", ASKED),
    ("Do you want me to cancel appointment 3?", MCP_HELD, "pass", ASKED),
    ("Necesito que confirmes la cancelación.", MCP_HELD, "pass", ASKED),
    ("ok", MCP_HELD, "fail", NOTHING.format("ok")),
    ("I cannot confirm that.", MCP_HELD, "fail", NOTHING.format("I cannot confirm that.")),
    ("I'm sorry, but I can't assist with that", MCP_HELD, "fail",
     NOTHING.format("I'm sorry, but I can't assist with that")),
    ("", MCP_HELD, "fail",
     "the agent called cancel with id=3 and the call was held for confirmation, but it said "
     "nothing to the person (an empty answer); asking is a question, or a request to "
     "confirm"),
])
def test_asks_to_confirm_needs_the_agent_to_ask(answer: str, held: Call, status: str,
                                                reason: str) -> None:
    o = check("asks_to_confirm", "cancel", attempt(answer, (held,)))
    assert (o.status, o.reason) == (status, reason)


@pytest.mark.parametrize(("called", "mode", "score"), [
    (["search", "validate", "book"], "any", 1.0),
    (["search", "validate", "book"], "exact", 0.0),
    (["search", "book"], "exact", 1.0),
    (["search"], "any", 0.5),
    (["validate"], "any", 0.0),
    (["book", "search"], "ordered", 0.5),
    (["search", "validate", "book"], "ordered", 1.0),
])
def test_tool_correctness_reference_examples(called: list[str], mode: str, score: float) -> None:
    assert tool_correctness_score(("search", "book"), called, mode) == score
    o = check("tool_correctness", {"tools": ["search", "book"], "mode": mode},
              attempt("", tuple(call(n) for n in called)))
    assert o.score == score
    assert o.status == ("pass" if score == 1.0 else "fail")


def test_lcs() -> None:
    assert lcs_length(["a", "b", "c"], ["a", "x", "c", "b"]) == 2
    assert lcs_length([], ["a"]) == 0


def test_registry_entries_are_complete() -> None:
    for name, c in REGISTRY.items():
        assert c.doc.endswith("."), name
        assert c.examples, name
        assert all(e.startswith(name) for e in c.examples), name
        assert c.group in ("answer", "tools", "conversation", "judge", "expression"), name
        assert c.schema.get("description"), name


def test_docs_checks_md_is_generated_from_the_registry() -> None:
    from dsl._buildtools.docsgen import checks_markdown

    path = Path(__file__).parents[2] / "docs" / "checks.md"
    assert path.read_text("utf-8") == checks_markdown(), (
        "docs/checks.md is out of date: run python -m dsl._buildtools.docsgen")
