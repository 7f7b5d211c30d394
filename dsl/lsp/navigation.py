"""Navigation: go to a name's definition (a tool in the scenario or in ``scenarist.yaml``,
a named check, a target, a world table or column, the file a ``cases_file:`` or a
table's ``file:`` names), find a tool's references across the suite, and the outline of
a file (its turns, checks, tools; a suite's targets, tools, checks and tables).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from ..errors import Span
from ..source.load import load_bytes
from ..source.schemawords import CHECK_MODIFIERS
from .files import Files, uri_of
from .knowledge import Known
from .place import EXPR_KEYS, Encoding, place_at, to_units, token_end, word_at

_FILE_KEYS = frozenset({"cases_file", "file"})


# ---------------------------------------------------------------- definition


def definition(files: Files, k: Known, line: int, col: int,
               encoding: Encoding = "utf-16") -> list[lsp.Location]:
    """Where the name under the cursor is defined (empty when it is no name Scenarist
    defines in a file: a built-in check, a key)."""
    found = word_at(k.text, line, col, re.compile(r"[^\s:,\[\]{}#'\"]"))
    if found is None:
        return []
    word, _, end = found
    place = place_at(k.text, line, end)
    if place.kind == "value" and place.key in _FILE_KEYS:
        target = (k.path.parent / word).resolve()
        if target.is_file():
            return [lsp.Location(uri_of(target), lsp.Range(lsp.Position(0, 0),
                                                           lsp.Position(0, 0)))]
        return []
    name = word_at(k.text, line, col)
    if name is None:
        return []
    spans = _definitions(k, name[0])
    return [loc for s in spans if (loc := location(files, s, encoding)) is not None]


def _definitions(k: Known, word: str) -> list[Span]:
    suite = k.suite
    if word in k.inline_tools:
        at = _inline_tool_name(k, word)
        return [at] if at is not None else []
    if suite is not None and suite.doc is not None:
        for section in ("tools", "checks", "targets"):
            if word in (getattr(suite, section) or {}):
                return [suite.doc.key_span((section, word))]
    if word in k.tables:
        return [k.tables[word].span]
    for table in k.tables.values():
        if word in table.columns:
            return [table.columns[word]]
    return []


def _inline_tool_name(k: Known, name: str) -> Span | None:
    given = k.data.get("given")
    tools = given.get("tools") if isinstance(given, dict) else None
    if k.doc is None or not isinstance(tools, list):
        return None
    for i, item in enumerate(tools):
        if isinstance(item, dict) and item.get("name") == name:
            return k.doc.span(("given", "tools", i, "name"))
    return None


def location(files: Files, span: Span, encoding: Encoding = "utf-16") -> lsp.Location | None:
    """A lint-style place (file as lint names it, 1-based line and column) as a location."""
    if span.file.startswith("<"):
        return None
    path = Path(span.file).absolute().resolve()
    text = files.text(path) or ""
    lines = text.split("\n")
    line = min(max(span.line - 1, 0), max(len(lines) - 1, 0))
    source = lines[line] if lines else ""
    col = min(max(span.col - 1, 0), len(source))
    return lsp.Location(uri_of(path), lsp.Range(
        lsp.Position(line, to_units(source, col, encoding)),
        lsp.Position(line, to_units(source, token_end(source, col), encoding))))


# ---------------------------------------------------------------- references


def references(files: Files, k: Known, line: int, col: int, declaration: bool,
               encoding: Encoding = "utf-16") -> list[lsp.Location]:
    """Every place in the suite (its scenarios, open or saved, and ``scenarist.yaml``) that
    names the tool under the cursor; its definitions too when ``declaration``."""
    found = word_at(k.text, line, col)
    if found is None or found[0] not in k.tools or k.info.suite_file is None:
        return []
    name = found[0]
    out: list[lsp.Location] = []
    suite_file = k.info.suite_file
    for path in [suite_file, *files.suite_members(suite_file)]:
        text = files.text(path)
        if text is None or name not in text:
            continue
        doc = load_bytes(text.encode("utf-8"), str(path))
        if doc.root is None:
            continue
        lines = text.split("\n")
        uri = uri_of(path)
        for ln, start, end, is_definition in _mentions(doc.root, name, path == suite_file):
            if is_definition and not declaration:
                continue
            source = lines[ln] if ln < len(lines) else ""
            out.append(lsp.Location(uri, lsp.Range(
                lsp.Position(ln, to_units(source, start, encoding)),
                lsp.Position(ln, to_units(source, end, encoding)))))
    return out


def _mentions(root: Any, name: str, suite_file: bool
              ) -> Iterator[tuple[int, int, int, bool]]:
    """(line, start, end, is a definition) of each place a YAML tree names the tool."""
    quoted = re.compile(r"""(['"])""" + re.escape(name) + r"\1")

    def scalar(node: Any, path: tuple[Any, ...], is_key: bool) -> Iterator[tuple[int, int,
                                                                                 int, bool]]:
        value = node.value
        if not isinstance(value, str):
            return
        mark = node.start_mark
        shift = 1 if node.style in ("'", '"') else 0
        if value == name:
            definition = ((suite_file and is_key and path == ("tools",))
                          or (not suite_file and not is_key and len(path) == 4
                              and path[:2] == ("given", "tools") and path[3] == "name"))
            yield mark.line, mark.column + shift, mark.column + shift + len(name), definition
        elif (path and path[-1] in EXPR_KEYS) or (suite_file and path[:1] == ("checks",)):
            if node.end_mark.line != mark.line:
                return
            for m in quoted.finditer(value):
                at = mark.column + shift + m.start() + 1
                yield mark.line, at, at + len(name), False

    def walk(node: Any, path: tuple[Any, ...]) -> Iterator[tuple[int, int, int, bool]]:
        match node.id:
            case "mapping":
                for key, value in node.value:
                    if key.id == "scalar":
                        yield from scalar(key, path, True)
                        yield from walk(value, (*path, key.value))
            case "sequence":
                for i, item in enumerate(node.value):
                    yield from walk(item, (*path, i))
            case "scalar":
                yield from scalar(node, path, False)

    yield from walk(root, ())


# ---------------------------------------------------------------- outline


def symbols(k: Known, encoding: Encoding = "utf-16") -> list[lsp.DocumentSymbol]:
    """The file's outline: a scenario's keys, its tools, turns and checks; a suite's
    targets, tools, named checks and world tables."""
    doc = k.doc
    if doc is None or doc.root is None or doc.root.id != "mapping":
        return []
    outline = _Outline(k.lines, encoding)
    return [outline.entry(key, value, (key.value,), k.is_suite)
            for key, value in doc.root.value if key.id == "scalar"]


_KINDS = lsp.SymbolKind


class _Outline:
    def __init__(self, lines: list[str], encoding: Encoding) -> None:
        self.lines = lines
        self.encoding = encoding

    def _pos(self, mark: Any) -> lsp.Position:
        line = min(mark.line, max(len(self.lines) - 1, 0))
        source = self.lines[line] if self.lines else ""
        return lsp.Position(line, to_units(source, min(mark.column, len(source)),
                                           self.encoding))

    def _range(self, start: Any, end: Any) -> lsp.Range:
        a, b = self._pos(start), self._pos(end)
        return lsp.Range(a, b if (b.line, b.character) >= (a.line, a.character) else a)

    def symbol(self, name: str, kind: lsp.SymbolKind, node: Any, key: Any = None,
               detail: str | None = None,
               children: list[lsp.DocumentSymbol] | None = None) -> lsp.DocumentSymbol:
        head = key if key is not None else node
        whole = self._range(head.start_mark, node.end_mark)
        chosen = self._range(head.start_mark, head.end_mark)
        return lsp.DocumentSymbol(name=name or "(empty)", kind=kind, range=whole,
                                  selection_range=chosen, detail=detail,
                                  children=children or None)

    def entry(self, key: Any, value: Any, path: tuple[Any, ...],
              suite: bool) -> lsp.DocumentSymbol:
        name = str(key.value)
        children: list[lsp.DocumentSymbol] = []
        detail = _short(value) if value.id == "scalar" else None
        match (suite, path, value.id):
            case (False, ("given",), "mapping"):
                children = [self.entry(k, v, ("given", k.value), suite)
                            for k, v in value.value if k.id == "scalar"]
            case (False, ("given", "tools"), "sequence"):
                children = [self._tool_item(item) for item in value.value]
            case (False, ("given", "world") | ("world",), "mapping") | \
                 (True, ("world",), "mapping"):
                children = [self.symbol(str(k.value), _KINDS.Struct, v, k)
                            for k, v in value.value if k.id == "scalar"]
            case (False, ("when",), "sequence"):
                children = [self._turn(i, item) for i, item in enumerate(value.value)]
            case (False, ("then",), "sequence"):
                children = [self._check(item) for item in value.value]
            case (True, ("tools",), "mapping"):
                children = [self.symbol(str(k.value), _KINDS.Function, v, k,
                                        _description(v))
                            for k, v in value.value if k.id == "scalar"]
            case (True, ("targets",), "mapping"):
                children = [self.symbol(str(k.value), _KINDS.Constant, v, k, _field(v, "kind"))
                            for k, v in value.value if k.id == "scalar"]
            case (True, ("checks",), "mapping"):
                children = [self.symbol(str(k.value), _KINDS.Event, v, k, _short(v))
                            for k, v in value.value if k.id == "scalar"]
            case _:
                pass
        kind = _KINDS.Array if value.id == "sequence" else (
            _KINDS.Object if value.id == "mapping" else _KINDS.Property)
        return self.symbol(name, kind, value, key, detail, children)

    def _tool_item(self, item: Any) -> lsp.DocumentSymbol:
        if item.id == "scalar":
            return self.symbol(str(item.value), _KINDS.Function, item, None, "from the library")
        return self.symbol(_field(item, "name") or "tool", _KINDS.Function, item, None,
                           _description(item))

    def _turn(self, i: int, item: Any) -> lsp.DocumentSymbol:
        children: list[lsp.DocumentSymbol] = []
        if item.id == "scalar":
            detail = _short(item)
        else:
            detail = None
            for k, v in item.value if item.id == "mapping" else ():
                if k.id != "scalar":
                    continue
                if k.value == "then" and v.id == "sequence":
                    children += [self._check(c) for c in v.value]
                elif detail is None and v.id == "scalar":
                    detail = f"{k.value}: {_short(v)}"
        return self.symbol(f"turn {i + 1}", _KINDS.Object, item, None, detail, children)

    def _check(self, item: Any) -> lsp.DocumentSymbol:
        if item.id == "scalar":
            return self.symbol(str(item.value), _KINDS.Event, item)
        if item.id != "mapping":
            return self.symbol("check", _KINDS.Event, item)
        named = _field(item, "name")
        for k, v in item.value:
            if k.id == "scalar" and k.value not in CHECK_MODIFIERS:
                label = f"{k.value}: {_short(v)}" if v.id == "scalar" else str(k.value)
                return self.symbol(named or label, _KINDS.Event, item, None,
                                   label if named else None)
        return self.symbol(named or "check", _KINDS.Event, item)


def _short(node: Any, limit: int = 60) -> str:
    if node.id != "scalar":
        return "…"
    text = " ".join(str(node.value).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _field(node: Any, name: str) -> str | None:
    if node.id != "mapping":
        return None
    for k, v in node.value:
        if k.id == "scalar" and k.value == name and v.id == "scalar":
            return str(v.value)
    return None


def _description(node: Any) -> str | None:
    text = _field(node, "description")
    return _short_text(text) if text else None


def _short_text(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
