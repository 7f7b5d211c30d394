"""The checks' snippets (dsl/lsp/completion.py), the quick fixes' reading of lint's words
(dsl.errors.suggestion) and the vocabulary they share with the studio: unit tests."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from dsl.checks import REGISTRY
from dsl.compiler import vocabulary
from dsl.compiler.lint import lint_text
from dsl.errors import did_you_mean, suggestion
from dsl.lsp.completion import check_snippet
from tests.conftest import write

_PLACEHOLDER = re.compile(r"\$\{\d+:((?:[^}\\]|\\.)*)\}|\$\d+")


def expanded(snippet: str) -> str:
    """The snippet as the editor writes it when each placeholder keeps its text."""
    text = _PLACEHOLDER.sub(lambda m: m.group(1) or "", snippet)
    return re.sub(r"\\(.)", r"\1", text)


@pytest.mark.parametrize("name", list(REGISTRY))
def test_every_check_s_snippet_is_a_check_the_schema_accepts(tmp_path: Path,
                                                             name: str) -> None:
    words = vocabulary.checks()[name]
    snippet = check_snippet(words)
    if words.takes == "flag":
        assert snippet is None
        item = name
    else:
        assert snippet is not None
        item = expanded(snippet)
    write(tmp_path / "scenarist.yaml", "targets:\n  r: {kind: replay, cassette: c.jsonl}\n")
    path = tmp_path / "s.yaml"
    text = (f"given: {{at: 2026-09-29T10:00:00-03:00}}\nwhen: hi\nthen:\n  - {item}\n")
    found = lint_text(path, text).of_file(path)
    assert [d for d in found if d.code.startswith(("S", "Y"))] == [], (item, found)


@given(st.from_regex(r"[a-z_]{3,12}", fullmatch=True),
       st.lists(st.from_regex(r"[a-z_]{3,12}", fullmatch=True), min_size=1, max_size=5))
def test_suggestion_reads_what_did_you_mean_wrote(word: str, candidates: list[str]) -> None:
    message = f"unknown check '{word}'{did_you_mean(word, candidates)}"
    meant = did_you_mean(word, candidates)
    if meant:
        assert suggestion(message) == (word, meant.split("'")[1])
    else:
        assert suggestion(message) is None


def test_suggestion_takes_the_word_just_before_did_you_mean() -> None:
    assert suggestion("the table 'cards' has no column 'stauts'; did you mean 'status'?") == (
        "stauts", "status")
    assert suggestion("there is no check named 'shrt' in scenarist.yaml; did you mean "
                      "'short'?") == ("shrt", "short")
    assert suggestion("unknown check 'x'") is None


def test_the_vocabulary_reads_the_schemas() -> None:
    scenario = vocabulary.schema_of(False)
    assert {"given", "when", "then", "runs"} <= set(vocabulary.keys_at(scenario, ()))
    assert {"at", "tools", "world"} <= set(vocabulary.keys_at(scenario, ("given",)))
    assert {"say", "confirm", "then"} <= set(vocabulary.keys_at(scenario,
                                                                ("when", vocabulary.ITEM)))
    tool = vocabulary.keys_at(scenario, ("given", "tools", vocabulary.ITEM))
    assert {"name", "description", "input_schema", "action"} <= set(tool)
    assert tool["action"].values == ("read", "create", "update", "delete")
    suite = vocabulary.schema_of(True)
    assert {"targets", "tools", "defaults", "world", "checks"} <= set(
        vocabulary.keys_at(suite, ()))
    assert "min_pass_rate" in vocabulary.keys_at(suite, ("defaults",))
    assert vocabulary.keys_at(scenario, ("nothing", "here")) == {}


def test_codes_and_functions_in_words() -> None:
    words = vocabulary.code_words("E201")
    assert words is not None
    assert words.startswith("**E201 unknown-tool** — A check or scenario names a tool")
    assert words.endswith("docs/lint.md#e201-unknown-tool")
    assert vocabulary.code_words("Z999") is None
    count = vocabulary.functions()["count"]
    assert count.explanation().startswith(f"`{count.signature}`\n\n{count.doc}")
    assert "calls" in vocabulary.names()
