"""The expression language is an allow-list by construction: no way to reach Python
objects, dunder names, files or imports; every limit holds."""

from __future__ import annotations

import datetime as dt
import io
import tokenize
from pathlib import Path
from typing import Any

import pytest

from dsl.expr import (
    EvalError,
    ProblemsFound,
    compile_expression,
    env_for,
    limits,
    problems_of,
    runtime,
    verdict,
)
from dsl.expr.functions import FUNCTIONS
from dsl.expr.runtime import attempt_values
from dsl.expr.sample import attempt

EXPR_PACKAGE = Path(__file__).resolve().parents[2] / "dsl" / "expr"
PLAIN = (type(None), bool, int, float, str, list, dict, dt.date)


def plain(v: Any) -> bool:
    if isinstance(v, list):
        return all(plain(x) for x in v)
    if isinstance(v, dict):
        return all(isinstance(k, str) and plain(x) for k, x in v.items())
    return type(v) in PLAIN


ESCAPES = [
    "answer.__class__",
    "answer.__class__.__mro__",
    "calls.__class__",
    "call('search_slots').__class__",
    "call('search_slots').__dict__",
    "at.__class__.__init__.__globals__",
    "date('2026-10-06').__class__",
    "__import__('os')",
    "__import__('os').system('touch /tmp/scenarist-pwned')",
    "open('/etc/passwd')",
    "eval('1 + 1')",
    "exec('import os')",
    "compile('1', 'x', 'eval')",
    "getattr(answer, 'upper')",
    "globals()",
    "locals()",
    "type(answer)",
    "lower.__globals__",
    "len.__code__",
    "answer.upper()",
    "answer.format",
    "''.join(calls)",
    "[].__class__.__base__.__subclasses__()",
    "().__class__",
    "lambda: 1",
    "import os",
    "os.system('ls')",
    "__builtins__",
    "calls[0].__class__",
    "item.__class__",
]


@pytest.mark.parametrize("text", ESCAPES)
def test_no_way_to_python_objects(text: str) -> None:
    codes: set[str] = set()
    try:
        program = compile_expression(text, condition=False)
    except ProblemsFound as exc:
        codes = {p.code for p in exc.problems}
    if codes:
        assert codes <= {"X301", "X302", "X303", "X304"}
        return
    try:
        value = program.evaluate(env_for(attempt()))
    except EvalError:
        return
    assert plain(value)
    assert value is None  # a dunder "field" of JSON data is just a missing field


def test_dunder_fields_of_json_are_missing_fields() -> None:
    env = env_for(attempt())
    for text in ("call('search_slots').args.__class__", "json('{}').__dict__",
                 "call('search_slots').output.__init__", "call('search_slots').args['__class__']"):
        assert compile_expression(text, condition=False).evaluate(env) is None


def test_text_that_looks_like_code_stays_text(tmp_path: Path) -> None:
    target = tmp_path / "pwned"
    payload = f"__import__('os').system('touch {target}')"
    a = attempt(answer=payload, calls=[{"name": "search_slots", "output": payload}])
    env = env_for(a)
    for text in ("answer == 'x'", "json(answer) == null", "call('search_slots').output.x == 1",
                 "answer matches 'system'", "'os' in answer"):
        verdict(compile_expression(text), env)
    assert not target.exists()


def test_the_values_are_plain_data() -> None:
    assert plain(attempt_values(attempt()))


def test_the_library_is_a_fixed_list() -> None:
    assert sorted(FUNCTIONS) == sorted([
        "abs", "all", "any", "call", "called", "count", "date", "ends_with", "first", "json",
        "last", "len", "lower", "map", "max", "min", "number", "replace", "round", "sorted",
        "starts_with", "sum", "text", "trim", "upper", "weekday",
    ])


FORBIDDEN_CALLS = {"eval", "exec", "compile", "__import__", "getattr", "setattr", "delattr",
                   "globals", "locals", "vars", "open", "input", "breakpoint"}
FORBIDDEN_MODULES = {"ast", "os", "subprocess", "pickle", "marshal", "importlib", "builtins",
                     "ctypes", "shutil", "sys"}


# docs.py is a command-line tool that rewrites docs/expressions.md; it is never imported
# by the evaluator (and may read and write files).
EVALUATOR = sorted(p.name for p in EXPR_PACKAGE.glob("*.py") if p.name != "docs.py")


@pytest.mark.parametrize("module", EVALUATOR)
def test_the_evaluator_never_evaluates_python(module: str) -> None:
    """No eval/exec/compile/getattr call and no import of ast, os, ... in dsl/expr."""
    source = (EXPR_PACKAGE / module).read_text("utf-8")
    tokens = [t for t in tokenize.generate_tokens(io.StringIO(source).readline)
              if t.type in (tokenize.NAME, tokenize.OP)]
    for prev, tok, nxt in zip(tokens, tokens[1:], tokens[2:], strict=False):
        if tok.type == tokenize.NAME and tok.string in FORBIDDEN_CALLS and nxt.string == "(" \
                and prev.string != ".":
            pytest.fail(f"{module}:{tok.start[0]} calls {tok.string}()")
        if tok.type == tokenize.NAME and prev.string in ("import", "from") \
                and tok.string in FORBIDDEN_MODULES:
            pytest.fail(f"{module}:{tok.start[0]} imports {tok.string}")


# ---------------------------------------------------------------- limits


def messages(text: str) -> list[str]:
    return [f"{p.code} {p.offset + 1}: {p.message}" for p in problems_of(text)]


def test_expression_length_is_limited() -> None:
    text = "count(calls) > 0 and " * 100 + "true"
    assert len(text) > limits.MAX_EXPR_CHARS
    assert messages(text) == [f"X305 2001: the expression has {len(text):,} characters; at "
                              "most 2,000 are allowed"]


def test_nesting_is_limited() -> None:
    deep = "not " * 70 + "true"
    assert messages(deep) == ["X305 281: the expression is nested more than 64 levels deep"]
    fields = "at" + ".x" * 70 + " == 1"
    assert messages(fields)[0].startswith("X305 ")
    calls = "len(" * 70 + "answer" + ")" * 70 + " > 1"
    assert messages(calls)[0].startswith("X305 ")
    assert messages("(" * 100 + "true" + ")" * 100) == []  # redundant brackets are fine
    assert messages("(" * 500 + "true" + ")" * 500) == [
        "X305 133: the expression is nested more than 64 levels deep"]


def test_long_chains_are_not_deep() -> None:
    """`a and b and c ...` stays flat: long lists of conditions are fine."""
    text = " and ".join(["called('search_slots')"] * 60)
    assert messages(text) == []
    assert compile_expression(text).evaluate(env_for(attempt())) is True


def test_literal_texts_are_limited() -> None:
    text = "'" + "x" * 1001 + "' in answer"
    assert messages(text) == ["X305 1: this text has 1,001 characters; at most 1,000 are "
                              "allowed in an expression"]


def test_texts_built_while_running_are_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("dsl.expr.compile.MAX_TEXT_CHARS", 100)
    program = compile_expression("answer + answer != ''")
    status, reason = verdict(program, env_for(attempt()))
    assert (status, reason) == ("error", "could not evaluate answer + answer != '': answer + "
                                         "answer: the text would have more than 100 characters")


def test_items_visited_are_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "MAX_ITEMS_VISITED", 3)
    program = compile_expression("count(calls[count(calls[true]) > 0]) == 2")
    status, reason = verdict(program, env_for(attempt(answer="budget")))
    assert status == "error"
    assert reason.endswith("the expression visited more than 3 list items; simplify the "
                           "conditions inside [ ]")


def test_time_in_conditions_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "MAX_EVAL_SECONDS", -1.0)  # already past the deadline
    program = compile_expression("all(calls, count(calls, true) > 0)")
    status, reason = verdict(program, env_for(attempt(answer="deadline")))
    assert status == "error"
    assert reason.endswith("the expression took longer than -1 s; simplify the conditions "
                           "inside [ ]")


def test_pathological_regex_ends_as_error_quickly() -> None:
    program = compile_expression("answer matches '(a|aa)+$'")
    env = env_for(attempt(answer="a" * 5_000 + "b"))
    status, reason = verdict(program, env)  # the message says the search was cut off
    assert status == "error"
    assert reason == ("could not evaluate answer matches '(a|aa)+$': the pattern '(a|aa)+$' "
                      "took longer than 0.25 s on a text of 5,001 characters; simplify it "
                      "(nested repeats like (a+)+ can take forever)")


def test_deeply_nested_json_is_not_json() -> None:
    env = env_for(attempt(answer="[" * 100_000))
    assert compile_expression("json(answer)", condition=False).evaluate(env) is None


def test_json_text_size_is_limited(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runtime, "MAX_JSON_CHARS", 10)
    env = env_for(attempt(answer='{"a": "0123456789"}'))
    with pytest.raises(EvalError, match="the text has 19 characters; at most 10 are read as"):
        compile_expression("json(answer)", condition=False).evaluate(env)
