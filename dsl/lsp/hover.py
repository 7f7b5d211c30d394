"""Hover: the name under the cursor in plain words — a check, a tool (its description
and arguments' schema), a target, a world table or column, a diagnostic code, an
expression's function or name, a named check, a key of the schema — from the same
registries the docs are generated from (:mod:`dsl.compiler.vocabulary`).
"""

from __future__ import annotations

import re

from lsprotocol import types as lsp

from ..compiler import vocabulary
from ..compiler.suite import Suite
from ..errors import CODES
from .knowledge import Known
from .place import Encoding, Place, place_at, to_units, word_at
from .slots import Slot, slot_of

_CODE = re.compile(r"^[YSEXW]\d{3}$")
_EXPR_CHARS = re.compile(r"\w")


def hover(k: Known, line: int, col: int, encoding: Encoding = "utf-16") -> lsp.Hover | None:
    """What the word at ``line`` and ``col`` (0-based; ``col`` in characters) is."""
    found = word_at(k.text, line, col)
    if found is None:
        return None
    word, start, end = found
    place = place_at(k.text, line, end)
    slot = slot_of(place, k.is_suite, k.lines, line)
    if slot.kind == "expr":  # expression words are made of letters, digits and _
        inner = word_at(k.text, line, col, _EXPR_CHARS)
        if inner is None:
            return None
        word, start, end = inner
    text = explain(k, word, place, slot)
    if text is None:
        return None
    source = k.lines[line]
    return lsp.Hover(lsp.MarkupContent(lsp.MarkupKind.Markdown, text),
                     lsp.Range(lsp.Position(line, to_units(source, start, encoding)),
                               lsp.Position(line, to_units(source, end, encoding))))


def explain(k: Known, word: str, place: Place, slot: Slot) -> str | None:
    """The words for ``word`` found at ``place``: first what the place says it is, then
    what the word is anywhere (a check, a tool, a target, a code)."""
    checks = vocabulary.checks()
    match slot.kind:
        case "check" | "check_key" if word in checks:
            return checks[word].explanation()
        case "check_key" if word in vocabulary.modifiers():
            return f"**{word}** — {vocabulary.modifiers()[word]}"
        case "param":
            words = checks.get(slot.check or "")
            if words is not None and word in words.params:
                return f"**{word}** (of {words.name}) — {words.params[word]}"
        case "tool" | "library_tool" if word in k.tools:
            return _tool(k, word)
        case "target" if k.suite is not None and word in k.suite.targets:
            return vocabulary.target_words(k.suite.targets[word])
        case "table" if word in k.tables:
            return vocabulary.table_words(k.tables[word], k.table_where(word))
        case "row" if slot.table is not None and slot.table in k.tables:
            return vocabulary.table_words(k.tables[slot.table], k.table_where(slot.table))
        case "column":
            for table in ([k.tables[slot.table]] if slot.table is not None
                          and slot.table in k.tables else k.tables.values()):
                if word in table.columns:
                    return vocabulary.column_words(table, word)
        case "expr":
            return _expression(k, word)
        case "key":
            key = vocabulary.keys_at(vocabulary.schema_of(k.is_suite),
                                     slot.schema_path).get(word)
            if key is not None and key.doc:
                return f"**{word}** — {key.doc}"
        case _:
            pass
    return _anywhere(k, word)


def _anywhere(k: Known, word: str) -> str | None:
    if _CODE.match(word) and word in CODES:
        return vocabulary.code_words(word)
    if word in k.tools:
        return _tool(k, word)
    if k.suite is not None and word in k.suite.checks:
        return _named(k.suite, word)
    if k.suite is not None and word in k.suite.targets:
        return vocabulary.target_words(k.suite.targets[word])
    if word in k.tables:
        return vocabulary.table_words(k.tables[word], k.table_where(word))
    if word in vocabulary.checks():
        return vocabulary.checks()[word].explanation()
    return None


def _tool(k: Known, name: str) -> str:
    where = "this scenario" if name in k.inline_tools else (
        k.suite.file if k.suite is not None else "the suite")
    return vocabulary.tool_words(k.tools[name], where)


def _named(suite: Suite, name: str) -> str:
    return (f"**named check {name}** ({suite.file})\n\n"
            f"```\n{suite.checks[name].source}\n```")


def _expression(k: Known, word: str) -> str | None:
    if word in vocabulary.functions():
        return vocabulary.functions()[word].explanation()
    if word in vocabulary.names():
        return vocabulary.names()[word].explanation()
    if k.suite is not None and word in k.suite.checks:
        return _named(k.suite, word)
    if word in k.tools:
        return _tool(k, word)
    return None
