"""Where the cursor is in a half-written YAML text (dsl/lsp/place.py) and what belongs
there (dsl/lsp/slots.py): unit tests of the two pure modules."""

from __future__ import annotations

import pytest

from dsl.compiler.vocabulary import ITEM
from dsl.lsp.place import from_units, place_at, to_units, token_end, word_at
from dsl.lsp.slots import slot_of


def at(text: str, suite: bool = False) -> tuple[object, ...]:
    """The place and the slot at the ``|`` in ``text``."""
    i = text.index("|")
    clean = text.replace("|", "", 1)
    line = clean[:i].count("\n")
    col = i - (clean[:i].rfind("\n") + 1)
    place = place_at(clean, line, col)
    slot = slot_of(place, suite, clean.split("\n"), line)
    return place.path, place.kind, place.key, place.word, slot.kind, slot.check, slot.table


@pytest.mark.parametrize(("text", "expected"), [
    ("then:\n  - |", (("then",), "item", None, "", "check", None, None)),
    ("then:\n  - con|", (("then",), "item", None, "con", "check", None, None)),
    ("then:\n- |", (("then",), "item", None, "", "check", None, None)),
    ("then: [|", (("then",), "item", None, "", "check", None, None)),
    ("then:\n  - calls: |", (("then", ITEM), "value", "calls", "", "tool", None, None)),
    ("then:\n  - calls: list_b|",
     (("then", ITEM), "value", "calls", "list_b", "tool", None, None)),
    ("then:\n  - calls: {name: li|",
     (("then", ITEM, "calls"), "value", "name", "li", "tool", None, None)),
    ("then:\n  - calls: {na|",
     (("then", ITEM, "calls"), "key", None, "na", "param", "calls", None)),
    ("then:\n  - calls:\n      name: |",
     (("then", ITEM, "calls"), "value", "name", "", "tool", None, None)),
    ("then:\n  - calls:\n      |",
     (("then", ITEM, "calls"), "key", None, "", "param", "calls", None)),
    ("then:\n  - not_calls: [a, |",
     (("then", ITEM, "not_calls"), "item", None, "", "tool", None, None)),
    ("then:\n  - contains: x\n    |",
     (("then", ITEM), "key", None, "", "check_key", None, None)),
    ("when:\n  - say: hi\n    then:\n      - |",
     (("when", ITEM, "then"), "item", None, "", "check", None, None)),
    ("when:\n  - confirm: |", (("when", ITEM), "value", "confirm", "", "tool", None, None)),
    ("given:\n  at: x\n  tools:\n    - |",
     (("given", "tools"), "item", None, "", "library_tool", None, None)),
    ("given:\n  tools: [a, |",
     (("given", "tools"), "item", None, "", "library_tool", None, None)),
    ("given:\n  |", (("given",), "key", None, "", "key", None, None)),
    ("when:\n  - |", (("when",), "item", None, "", "key", None, None)),
    ("|", ((), "key", None, "", "key", None, None)),
    ("ru|", ((), "key", None, "ru", "key", None, None)),
    ("targets: [|", (("targets",), "item", None, "", "target", None, None)),
    ("when: {user: {goal: x, target: |",
     (("when", "user"), "value", "target", "", "target", None, None)),
    ("then:\n  - world: {|", (("then", ITEM, "world"), "key", None, "", "table", None, None)),
    ("then:\n  - world: {cards: {|",
     (("then", ITEM, "world", "cards"), "key", None, "", "row", None, "cards")),
    ("then:\n  - world: {cards: {C-2: {st|",
     (("then", ITEM, "world", "cards", "C-2"), "key", None, "st", "column", None, "cards")),
    ("then:\n  - expect: \"count(ca|",
     (("then", ITEM), "value", "expect", "ca", "expr", None, None)),
    ("then:\n  - expect: \"called('bo|",
     (("then", ITEM), "value", "expect", "bo", "tool", None, None)),
    ("given:\n  tools:\n    - name: x\n      table: |",
     (("given", "tools", ITEM), "value", "table", "", "table", None, None)),
    ("given:\n  tools:\n    - name: x\n      table: cards\n      where: {|",
     (("given", "tools", ITEM, "where"), "key", None, "", "column", None, "cards")),
    ("given:\n  tools:\n    - name: x\n      where:\n        |\n      table: cards",
     (("given", "tools", ITEM, "where"), "key", None, "", "column", None, "cards")),
    ("given:\n  world:\n    cards:\n      - {|",
     (("given", "world", "cards", ITEM), "key", None, "", "column", None, "cards")),
])
def test_the_place_and_what_belongs_there(text: str, expected: tuple[object, ...]) -> None:
    assert at(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("defaults:\n  target: |", (("defaults",), "value", "target", "", "target", None, None)),
    ("tools:\n  book:\n    table: |",
     (("tools", "book"), "value", "table", "", "table", None, None)),
    ("tools:\n  book:\n    table: cards\n    set: {|",
     (("tools", "book", "set"), "key", None, "", "column", None, "cards")),
    ("checks:\n  short: \"len(|",
     (("checks",), "value", "short", "", "expr", None, None)),
    ("world:\n  cards:\n    - {id: 1, |",
     (("world", "cards", ITEM), "key", None, "", "column", None, "cards")),
])
def test_the_place_in_the_suite_file(text: str, expected: tuple[object, ...]) -> None:
    assert at(text, suite=True) == expected


def test_words_and_tokens() -> None:
    assert word_at("  - calls: list_business_hours", 0, 15) == ("list_business_hours", 11, 30)
    assert word_at("  - calls: x", 0, 3) is None
    assert token_end('  - contains: "18:00" # hora', 14) == 21  # a quoted text
    assert token_end("  - calls: list_b", 11) == 17  # a word
    assert token_end("a: [b", 4) == 5
    assert token_end("x", 5) == 5  # past the end: nothing
    assert token_end("runs: ", 6) == 6


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_columns_in_each_encoding(encoding: str) -> None:
    line = 'then: [{contains: "🎉ñ"}, contians]'
    col = line.index("contians")
    units = to_units(line, col, encoding)  # type: ignore[arg-type]
    extra = {"utf-8": 3 + 1, "utf-16": 1, "utf-32": 0}[encoding]  # 🎉 and ñ
    assert units == col + extra
    assert from_units(line, units, encoding) == col  # type: ignore[arg-type]
