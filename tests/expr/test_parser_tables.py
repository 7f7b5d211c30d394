"""The expression parser's saved tables (grammar/expr.lark.json, dsl/expr/parse.py): made
from the grammar as it is, and a parser loaded from them reads every expression of the
cases exactly as one built from the grammar does — the same trees, the same errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from lark import Lark
from lark.exceptions import UnexpectedInput
from ruamel.yaml import YAML

from dsl.expr import parse as parse_module
from dsl.expr.parse import (
    build_parser,
    from_json,
    syntax_problem,
    tables_json,
    tables_key,
    to_json,
)

REPO = Path(__file__).resolve().parents[2]
GRAMMAR = (REPO / "grammar" / "expr.lark").read_text("utf-8")
SAVED = json.loads((REPO / "grammar" / "expr.lark.json").read_text("utf-8"))


def test_the_saved_tables_are_made_from_this_grammar_by_this_lark() -> None:
    # the tables are a function of the grammar and Lark (up to the order of Lark's sets,
    # which follows the process's string hashing: the key is what is compared)
    assert SAVED["key"] == tables_key(GRAMMAR), (
        "grammar/expr.lark.json is stale: run python -m dsl._buildtools.exprparser")
    assert set(SAVED) == set(tables_json(GRAMMAR)) == {"key", "parser"}


def outcome(p: Lark, text: str) -> Any:
    """The tree, or the error: its kind, where, what was found and what was expected
    (as sets: Lark lists them in its sets' order), and the problem Scenarist words."""
    try:
        return ("tree", p.parse(text))
    except UnexpectedInput as exc:
        expected = getattr(exc, "expected", None) or getattr(exc, "allowed", None) or ()
        return ("error", type(exc).__name__, exc.line, exc.column,
                str(getattr(exc, "token", getattr(exc, "char", ""))), frozenset(expected),
                syntax_problem(exc, text))


def test_a_loaded_parser_reads_every_case_as_a_built_one() -> None:
    cases = YAML(typ="safe").load((REPO / "tests" / "expr" / "cases.yaml").read_text("utf-8"))
    texts = [c["expr"] for c in cases] + ["a = 1", "(a", "a &&& b", "x ||", "'open", ""]
    built, loaded = build_parser(GRAMMAR), Lark.load(from_json(SAVED["parser"]))
    assert len(texts) > 300
    for text in texts:
        assert outcome(loaded, text) == outcome(built, text), text


def test_stale_or_unreadable_tables_are_not_used(monkeypatch: pytest.MonkeyPatch) -> None:
    real = parse_module.read_text
    for stale in ('{"key": "lark 0.0 · sha256 0", "parser": {}}', "not json", '{"key": 1}'):
        monkeypatch.setattr(parse_module, "read_text",
                            lambda folder, name, s=stale: s if name.endswith(".json")
                            else real(folder, name))
        monkeypatch.setattr(Lark, "load", classmethod(lambda cls, f: pytest.fail("loaded")))
        parse_module.parser.cache_clear()
        try:
            assert outcome(parse_module.parser(), "1 + 2") == outcome(build_parser(GRAMMAR),
                                                                     "1 + 2")
        finally:
            parse_module.parser.cache_clear()
        monkeypatch.undo()


def test_to_json_keeps_keys_that_are_not_text_and_tuples() -> None:
    data = {"a": (1, "x"), 3: [None, {"__pairs__": 1}], "t": True}
    assert from_json(json.loads(json.dumps(to_json(data)))) == data
    with pytest.raises(TypeError, match="cannot save a set in the parser tables"):
        to_json({1, 2})
