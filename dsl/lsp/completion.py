"""Completion: the names that fit where the cursor is (:mod:`dsl.lsp.slots`) — checks
under ``then:`` with their one-line explanation and a snippet of their parameter, the
suite's tools, targets, world tables, columns and row ids, the keys the schema allows,
and the functions, names and named checks of an ``expect:`` expression.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from typing import Any

from lsprotocol import types as lsp

from ..compiler import vocabulary
from ..compiler.vocabulary import ITEM, CheckWords, flow_yaml
from ..source.load import load_text
from .knowledge import Known
from .place import Encoding, Place, place_at, to_units
from .slots import Slot, slot_of

Kind = lsp.CompletionItemKind
_EXPR_WORD = re.compile(r"\w*$")


def complete(k: Known, line: int, col: int, snippets: bool = True,
             encoding: Encoding = "utf-16") -> list[lsp.CompletionItem]:
    """The completions at ``line`` and ``col`` (0-based; ``col`` in characters)."""
    place = place_at(k.text, line, col)
    slot = slot_of(place, k.is_suite, k.lines, line)
    start = place.start
    if slot.kind == "expr":
        start = col - len(_EXPR_WORD.search(place.before).group(0))  # type: ignore[union-attr]
    items = list(_items(k, place, slot, snippets))
    text = k.lines[line] if line < len(k.lines) else ""
    edit_range = lsp.Range(lsp.Position(line, to_units(text, start, encoding)),
                           lsp.Position(line, to_units(text, col, encoding)))
    for n, item in enumerate(items):
        new_text = item.insert_text or item.label
        item.text_edit = lsp.TextEdit(edit_range, new_text)
        item.insert_text = None
        if item.sort_text is None:
            item.sort_text = f"{n:04d}"
    return items


def _items(k: Known, place: Place, slot: Slot, snippets: bool
           ) -> Iterable[lsp.CompletionItem]:
    match slot.kind:
        case "check":
            yield from (_check(c, snippets) for c in vocabulary.checks().values())
        case "check_key":
            yield from (_check(c, snippets) for c in vocabulary.checks().values())
            yield from (_key(name, doc, "beside any check") for name, doc
                        in vocabulary.modifiers().items())
        case "param":
            words = vocabulary.checks().get(slot.check or "")
            if words is not None:
                yield from (_key(name, doc, f"of {words.name}")
                            for name, doc in words.params.items())
        case "tool":
            yield from _tools(k, library_only=False)
        case "library_tool":
            yield from _tools(k, library_only=True)
        case "target":
            if k.suite is not None:
                yield from (lsp.CompletionItem(
                    name, kind=Kind.Constant, detail=f"target ({t.kind})",
                    documentation=_md(vocabulary.target_words(t)))
                    for name, t in k.suite.targets.items())
        case "table":
            yield from (lsp.CompletionItem(
                name, kind=Kind.Struct, detail=f"world table ({k.table_where(name)})",
                documentation=_md(vocabulary.table_words(t, k.table_where(name))))
                for name, t in k.tables.items())
        case "row":
            table = k.tables.get(slot.table or "")
            if table is not None:
                yield from (lsp.CompletionItem(str(r["id"]), kind=Kind.EnumMember,
                                               detail=f"row of {table.name}",
                                               insert_text=f"{flow_yaml(r['id'])}: ")
                            for r in table.rows if "id" in r)
        case "column":
            yield from _columns(k, slot.table)
        case "expr":
            yield from _expression(k, place)
        case "key":
            yield from _schema_keys(k, slot.schema_path)
        case "value":
            yield from _schema_values(k, slot.schema_path)
        case _:
            return


def _md(text: str) -> lsp.MarkupContent:
    return lsp.MarkupContent(lsp.MarkupKind.Markdown, text)


def _check(c: CheckWords, snippets: bool) -> lsp.CompletionItem:
    snippet = check_snippet(c) if snippets else None
    return lsp.CompletionItem(
        c.name,
        kind=Kind.Function,
        detail=c.doc,
        documentation=_md(c.explanation()),
        insert_text=snippet if snippet is not None else
        (c.name if c.takes == "flag" else f"{c.name}: "),
        insert_text_format=lsp.InsertTextFormat.Snippet if snippet is not None else None,
    )


def check_snippet(c: CheckWords) -> str | None:
    """A check with its parameter as placeholders, from its first example:
    ``judge: {rubric: ${1:…}, pass_score: ${2:0.8}}``; None for a check that takes none."""
    if c.takes == "flag" or not c.examples:
        return None
    example = load_text(c.examples[0], "<example>").data
    if not isinstance(example, dict) or c.name not in example:
        return f"{_escape(c.name)}: $1"
    value = example[c.name]
    if isinstance(value, dict) and value:
        parts = [f"{_escape(str(key))}: ${{{n}:{_escape(flow_yaml(v))}}}"
                 for n, (key, v) in enumerate(value.items(), 1)]
        return f"{_escape(c.name)}: {{{', '.join(parts)}}}"
    if isinstance(value, list):
        inner = ", ".join(flow_yaml(v) for v in value)
        return f"{_escape(c.name)}: [${{1:{_escape(inner)}}}]"
    return f"{_escape(c.name)}: ${{1:{_escape(flow_yaml(value))}}}"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("$", "\\$").replace("}", "\\}")


def _key(name: str, doc: str, detail: str) -> lsp.CompletionItem:
    return lsp.CompletionItem(name, kind=Kind.Property, detail=detail,
                              documentation=_md(doc) if doc else None,
                              insert_text=f"{name}: ")


def _tools(k: Known, library_only: bool) -> Iterable[lsp.CompletionItem]:
    where = k.suite.file if k.suite is not None else "the suite"
    if not library_only:
        for name, tool in k.inline_tools.items():
            yield lsp.CompletionItem(name, kind=Kind.Variable, detail="tool (this scenario)",
                                     documentation=_md(vocabulary.tool_words(
                                         tool, "this scenario")))
    library = dict(k.suite.tools) if k.suite is not None else {}
    listed = [n for n in k.listed_tools if n in library] if not library_only else []
    for name in [*listed, *(n for n in library if n not in listed)]:
        if not library_only and name in k.inline_tools:
            continue
        yield lsp.CompletionItem(name, kind=Kind.Variable, detail=f"tool ({where})",
                                 documentation=_md(vocabulary.tool_words(library[name], where)))


def _columns(k: Known, table_name: str | None) -> Iterable[lsp.CompletionItem]:
    tables = ([k.tables[table_name]] if table_name is not None and table_name in k.tables
              else list(k.tables.values()))
    seen: set[str] = set()
    for table in tables:
        for column in table.columns:
            if column in seen:
                continue
            seen.add(column)
            yield lsp.CompletionItem(column, kind=Kind.Field, detail=f"column of {table.name}",
                                     documentation=_md(vocabulary.column_words(table, column)),
                                     insert_text=f"{column}: " if table_name else column)


def _expression(k: Known, place: Place) -> Iterable[lsp.CompletionItem]:
    before = place.before
    if before.rstrip().endswith(".") or re.search(r"\.\w*$", before):
        return  # a field: the type checker knows them, the editor need not guess
    if k.suite is not None and not place.in_string:  # expect: NAME — a named check
        for name, named in k.suite.checks.items():
            yield lsp.CompletionItem(name, kind=Kind.Event, detail="named check",
                                     documentation=_md(f"```\n{named.source}\n```"))
    for f in vocabulary.functions().values():
        yield lsp.CompletionItem(f.name, kind=Kind.Function, detail=f.signature,
                                 documentation=_md(f.explanation()))
    for n in vocabulary.names().values():
        yield lsp.CompletionItem(n.name, kind=Kind.Variable, detail="the attempt's data",
                                 documentation=_md(n.explanation()))


def _schema_keys(k: Known, path: tuple[Any, ...]) -> Iterable[lsp.CompletionItem]:
    for name, words in vocabulary.keys_at(vocabulary.schema_of(k.is_suite), path).items():
        yield lsp.CompletionItem(name, kind=Kind.Property, detail=_first_sentence(words.doc),
                                 documentation=_md(words.doc) if words.doc else None,
                                 insert_text=f"{name}: ")


def _schema_values(k: Known, path: tuple[Any, ...]) -> Iterable[lsp.CompletionItem]:
    schema = vocabulary.schema_of(k.is_suite)
    words = vocabulary.value_words(schema, path) if path and path[-1] != ITEM else None
    for value in words.values if words is not None else ():
        shown = value if isinstance(value, str) else json.dumps(value)
        yield lsp.CompletionItem(shown, kind=Kind.EnumMember, detail=words.name if words else "")


def _first_sentence(text: str) -> str:
    head = text.split(". ")[0]
    return head if len(head) < 100 else head[:97] + "…"
