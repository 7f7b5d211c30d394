"""Quick fixes: a lint diagnostic that says "did you mean 'contains'?" offers to write
``contains`` in place of the word it found (:func:`dsl.errors.suggestion` reads what
:func:`dsl.errors.did_you_mean` wrote); a missing required key (S104) offers to add it,
with the schema's example, where the mapping that lacks it ends.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from typing import Any

from lsprotocol import types as lsp
from ruamel.yaml import YAML

from ..compiler import vocabulary
from ..compiler.vocabulary import ITEM
from ..errors import suggestion
from .knowledge import Known
from .place import Encoding, from_units, to_units

_MISSING = re.compile(r"is missing '(?P<key>[^'\n]+)'")


def quick_fixes(k: Known, uri: str, diagnostics: Iterable[lsp.Diagnostic],
                encoding: Encoding = "utf-16") -> list[lsp.CodeAction]:
    """The fixes for ``diagnostics`` (lint's, as published on the file at ``uri``)."""
    out: list[lsp.CodeAction] = []
    for d in diagnostics:
        if not isinstance(d.code, str):
            continue
        fix = _did_you_mean(k, uri, d, encoding)
        if fix is None and d.code == "S104":
            fix = _missing_key(k, uri, d, encoding)
        if fix is not None:
            out.append(fix)
    return out


def _did_you_mean(k: Known, uri: str, d: lsp.Diagnostic,
                  encoding: Encoding) -> lsp.CodeAction | None:
    found = suggestion(d.message)
    if found is None:
        return None
    wrong, right = found
    line = d.range.start.line
    if line >= len(k.lines):
        return None
    text = k.lines[line]
    start = from_units(text, d.range.start.character, encoding)
    at = _word(text, wrong, start)
    if at is None:
        return None
    edit = lsp.TextEdit(lsp.Range(lsp.Position(line, to_units(text, at, encoding)),
                                  lsp.Position(line, to_units(text, at + len(wrong), encoding))),
                        right)
    return lsp.CodeAction(f"Change '{wrong}' to '{right}'", kind=lsp.CodeActionKind.QuickFix,
                          diagnostics=[d], is_preferred=True,
                          edit=lsp.WorkspaceEdit(changes={uri: [edit]}))


def _word(text: str, word: str, start: int) -> int | None:
    """Where ``word`` stands alone on the line: the first time at or after ``start``,
    else the first time anywhere."""
    pattern = re.compile(r"(?<![\w-])" + re.escape(word) + r"(?![\w-])")
    found = pattern.search(text, start) or pattern.search(text)
    return found.start() if found else None


def _missing_key(k: Known, uri: str, d: lsp.Diagnostic,
                 encoding: Encoding) -> lsp.CodeAction | None:
    m = _MISSING.search(d.message)
    if m is None or k.doc is None or k.doc.root is None:
        return None
    key = m.group("key")
    line = d.range.start.line
    col = from_units(k.lines[line] if line < len(k.lines) else "", d.range.start.character,
                     encoding)
    found = _mapping_at(k.doc.root, line, col)
    if found is None:
        return None
    node, path = found
    words = vocabulary.keys_at(vocabulary.schema_of(k.is_suite),
                               tuple(ITEM if isinstance(p, int) else p for p in path))
    example = words.get(key)
    edit = _insertion(k.lines, node, key, example, encoding)
    if edit is None:
        return None
    return lsp.CodeAction(f"Add '{key}'", kind=lsp.CodeActionKind.QuickFix, diagnostics=[d],
                          edit=lsp.WorkspaceEdit(changes={uri: [edit]}))


def _mapping_at(root: Any, line: int, col: int) -> tuple[Any, tuple[Any, ...]] | None:
    """The mapping a diagnostic at ``line``:``col`` (0-based) is about: the mapping whose
    key starts there, or the mapping itself starting there; with its path."""
    def walk(node: Any, path: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...]] | None:
        if node.id == "mapping":
            if (node.start_mark.line, node.start_mark.column) == (line, col) or (
                    not path and (line, col) == (0, 0)):
                return node, path
            for key, value in node.value:
                if value.id == "mapping" and (key.start_mark.line,
                                              key.start_mark.column) == (line, col):
                    return value, (*path, key.value)
                hit = walk(value, (*path, key.value))
                if hit is not None:
                    return hit
        elif node.id == "sequence":
            for i, item in enumerate(node.value):
                hit = walk(item, (*path, i))
                if hit is not None:
                    return hit
        return None

    return walk(root, ())


def _insertion(lines: list[str], node: Any, key: str, words: vocabulary.KeyWords | None,
               encoding: Encoding) -> lsp.TextEdit | None:
    if node.flow_style:  # {a: 1} → {a: 1, key: example}
        end = node.end_mark
        if end.line >= len(lines):
            return None
        text = lines[end.line]
        close = text.rfind("}", 0, end.column)
        if close < 0:
            return None
        at = lsp.Position(end.line, to_units(text, close, encoding))
        written = words.written() if words is not None else f"{key}: "
        return lsp.TextEdit(lsp.Range(at, at), (", " if node.value else "") + written)
    indent = node.value[0][0].start_mark.column if node.value else node.start_mark.column
    last = node.start_mark.line
    stop = node.end_mark.line if node.end_mark.column else node.end_mark.line - 1
    for n in range(node.start_mark.line, min(stop, len(lines) - 1) + 1):
        stripped = lines[n].strip()
        if stripped and not stripped.startswith("#"):
            last = n
    block = _block(key, words, indent)
    text = lines[last]
    at = lsp.Position(last, to_units(text, len(text), encoding))
    return lsp.TextEdit(lsp.Range(at, at), "\n" + block)


def _block(key: str, words: vocabulary.KeyWords | None, indent: int) -> str:
    """``key: example`` as block YAML at ``indent`` (a mapping or list over lines)."""
    pad = " " * indent
    if words is None or not words.has_example:
        return f"{pad}{key}: "
    value = words.example
    if not isinstance(value, dict | list) or not value:
        return pad + words.written()
    yaml = YAML(typ="safe", pure=True)
    yaml.default_flow_style = False
    yaml.indent(mapping=2, sequence=4, offset=2)
    out = io.StringIO()
    yaml.dump({key: value}, out)
    return "\n".join(pad + line for line in out.getvalue().rstrip("\n").split("\n"))
