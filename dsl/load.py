"""Load: a YAML file becomes a :class:`Document` — plain Python data plus the 1-based
``line:col`` of every key and value, recorded once, here.

ruamel.yaml composes the file into a node graph (its libyaml-backed parser when
``ruamel.yaml.clib`` is installed, its pure-Python one otherwise); we convert the nodes to
plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` ourselves, which lets us
report duplicate keys with both places, refuse alias bombs before they expand, and keep
timestamps as the text the author wrote (``given.at`` is parsed by the compiler, which
insists on a UTC offset). Scalars are resolved with the YAML 1.2 core schema: ``yes`` and
``no`` stay text.

Nothing here raises on bad input: a file that cannot be loaded becomes a ``Document`` with
``data = None`` and its diagnostics, so one bad file never stops a batch.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from .errors import Diagnostic, Span

# Limits on what a scenario file may be. A scenario is a page of YAML; these only stop
# accidents (a log pasted into a file) and hostile input from eating memory or time.
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_STRING_CHARS = 1024 * 1024
MAX_VALUES = 100_000  # values after aliases are expanded (a billion-laughs bomb has 10^9)
MAX_DEPTH = 100  # nesting of mappings and lists
# libyaml composes recursively in C: nesting in the tens of thousands overflows its stack.
# Files with fewer structural characters than this cannot nest that deep; others are
# scanned for their depth (event by event, without recursion) before they are composed.
_DEPTH_SCAN_THRESHOLD = 4_000

Key = str | int
DataPath = tuple[Key, ...]

try:  # the libyaml-backed parser, when ruamel.yaml.clib is installed
    from ruamel.yaml.cyaml import CBaseLoader as _CLoader

    HAVE_C_PARSER = True
except ImportError:  # pragma: no cover - exercised only without the C extension
    HAVE_C_PARSER = False


@dataclass(frozen=True, slots=True)
class Document:
    """A loaded file: plain data and where every piece of it came from."""

    path: str
    text: str
    data: Any
    spans: Mapping[DataPath, Span] = field(default_factory=dict)
    key_spans: Mapping[DataPath, Span] = field(default_factory=dict)
    styles: Mapping[DataPath, str] = field(default_factory=dict)
    diagnostics: tuple[Diagnostic, ...] = ()

    @property
    def ok(self) -> bool:
        return self.data is not None and not self.diagnostics

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def span(self, path: DataPath) -> Span:
        """The place of the value at ``path``, or of its nearest parent that has one."""
        p = path
        while p not in self.spans and p:
            p = p[:-1]
        return self.spans.get(p, Span(self.path, 1, 1))

    def key_span(self, path: DataPath) -> Span:
        """The place of the key that holds the value at ``path`` (falls back to the value)."""
        return self.key_spans.get(path) or self.span(path)

    def span_in_string(self, path: DataPath, offset: int) -> Span:
        """The place of character ``offset`` of the string at ``path``.

        Exact for plain, quoted (without escapes before ``offset``) and literal block
        scalars on their own lines; for folded and escaped strings the start of the
        string is the best honest answer.
        """
        start = self.span(path)
        style = self.styles.get(path, "")
        value = _get(self.data, path)
        if not isinstance(value, str):
            return start
        before = value[:offset]
        if style in ("", "'", '"'):
            if "\n" in before:
                return start
            raw_line = self.lines[start.line - 1] if start.line <= len(self.lines) else ""
            quote = 1 if style else 0
            raw = raw_line[start.col - 1 + quote : start.col - 1 + quote + len(before)]
            if raw == before:  # no escapes or doubled quotes before the offset
                return Span(start.file, start.line, start.col + quote + len(before))
            return start
        if style == "|":
            line_no = start.line + 1 + before.count("\n")
            col_in_line = len(before) - (before.rfind("\n") + 1)
            if line_no <= len(self.lines):
                raw_line = self.lines[line_no - 1]
                indent = len(raw_line) - len(raw_line.lstrip(" "))
                return Span(start.file, line_no, indent + col_in_line + 1)
        return start


def _get(data: Any, path: DataPath) -> Any:
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def read_file(path: FsPath, display: str | None = None) -> Document:
    """Read and load one file; every problem becomes a diagnostic on the Document."""
    name = display if display is not None else str(path)
    origin = Span(name, 1, 1)
    try:
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            return _failed(
                name,
                Diagnostic(
                    origin,
                    "Y104",
                    f"the file is {size:,} bytes; Scenarist reads files of at most "
                    f"{MAX_FILE_BYTES:,} bytes ({MAX_FILE_BYTES // 2**20} MiB)",
                    "a scenario is a page of YAML; move large fixed data out of the "
                    "scenario or shorten it",
                ),
            )
        raw = path.read_bytes()
    except OSError as exc:
        return _failed(name, Diagnostic(origin, "Y112", f"cannot read the file: {exc.strerror}"))
    return load_bytes(raw, name)


def load_bytes(raw: bytes, name: str) -> Document:
    """Decode and load YAML bytes (the path is only used in messages)."""
    if len(raw) > MAX_FILE_BYTES:
        return _failed(
            name,
            Diagnostic(
                Span(name, 1, 1),
                "Y104",
                f"the file is {len(raw):,} bytes; Scenarist reads files of at most "
                f"{MAX_FILE_BYTES:,} bytes ({MAX_FILE_BYTES // 2**20} MiB)",
            ),
        )
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, col = _line_col_bytes(raw, nul)
        return _failed(
            name,
            Diagnostic(
                Span(name, line, col),
                "Y106",
                "the file contains binary data (a NUL byte); scenario files are UTF-8 text",
                "check that this is the file you meant, not an image or an archive",
            ),
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col_bytes(raw, exc.start)
        return _failed(
            name,
            Diagnostic(
                Span(name, line, col),
                "Y105",
                f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be decoded)",
                "save the file as UTF-8 in your editor",
            ),
        )
    return load_text(text, name)


def load_text(text: str, name: str) -> Document:
    """Load YAML text into a Document."""
    if not text.strip() or all(
        not ln.strip() or ln.lstrip().startswith("#") for ln in text.splitlines()
    ):
        what = "the file is empty" if not text.strip() else "the file has only comments"
        return _failed(
            name,
            Diagnostic(Span(name, 1, 1), "Y107", what,
                       "a scenario needs at least given.at, when and then"),
            text,
        )
    if _structure_count(text) > _DEPTH_SCAN_THRESHOLD:
        deep = _too_deep(text, name)
        if deep is not None:
            return _failed(name, deep, text)
    try:
        node = _compose(text)
    except Exception as exc:  # ruamel's scanner/parser/reader errors
        # libyaml speaks YAML 1.1, stricter than 1.2 in places that authors meet (a time
        # like 10:00:00 inside {flow: mappings}): the pure-Python parser has the last word.
        try:
            node = _compose_pure(text) if HAVE_C_PARSER else None
        except RecursionError:
            return _failed(name, Diagnostic(Span(name, 1, 1), "Y110",
                                            f"the data is nested more than {MAX_DEPTH} levels "
                                            "deep"), text)
        except Exception as pure_exc:
            return _failed(name, _yaml_error(pure_exc, text, name), text)
        if node is None:
            return _failed(name, _yaml_error(exc, text, name), text)
    builder = _Builder(name)
    data = builder.convert(node, ())
    if builder.diagnostics:
        return Document(
            name, text, None, builder.spans, builder.key_spans, builder.styles,
            tuple(builder.diagnostics),
        )
    return Document(name, text, data, builder.spans, builder.key_spans, builder.styles)


def _failed(name: str, diagnostic: Diagnostic, text: str = "") -> Document:
    return Document(name, text, None, diagnostics=(diagnostic,))


def _line_col_bytes(raw: bytes, index: int) -> tuple[int, int]:
    line = raw.count(b"\n", 0, index) + 1
    start = raw.rfind(b"\n", 0, index) + 1
    col = len(raw[start:index].decode("utf-8", errors="replace")) + 1
    return line, col


def _line_col(text: str, index: int) -> tuple[int, int]:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _structure_count(text: str) -> int:
    return text.count("[") + text.count("{") + text.count("-") + text.count(":") + text.count("?")


def _compose(text: str) -> Any:
    if HAVE_C_PARSER:
        loader = _CLoader(text)
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()
    return _compose_pure(text)  # pragma: no cover


def _compose_pure(text: str) -> Any:
    from ruamel.yaml import YAML

    return YAML(typ="base", pure=True).compose(text)


def _too_deep(text: str, name: str) -> Diagnostic | None:
    """Walk the parser's events (no recursion) and stop at the first too-deep place."""
    from ruamel.yaml import YAML
    from ruamel.yaml.events import (
        CollectionEndEvent,
        MappingStartEvent,
        SequenceStartEvent,
    )

    depth = 0
    try:
        for event in YAML(typ="safe").parse(text):
            if isinstance(event, MappingStartEvent | SequenceStartEvent):
                depth += 1
                if depth > MAX_DEPTH:
                    mark = event.start_mark
                    return Diagnostic(
                        Span(name, mark.line + 1, mark.column + 1),
                        "Y110",
                        f"the data is nested more than {MAX_DEPTH} levels deep",
                        "a scenario needs only a few levels; check for a runaway "
                        "'[' or '{'",
                    )
            elif isinstance(event, CollectionEndEvent):
                depth -= 1
    except Exception:
        return None  # the composer will report the syntax error with its place
    return None


_TAB_MESSAGE = "a tab character is used for indentation; YAML allows only spaces"
_TAB_HINT = "replace the tab with spaces (most editors can 'convert indentation to spaces')"
_FRIENDLY_YAML = [
    ("found a tab character", "Y103", _TAB_MESSAGE, _TAB_HINT),
    (
        "mapping values are not allowed",
        "Y101",
        "unexpected ':' — a value cannot start a new 'key: value' on the same line",
        "put the inner mapping on its own indented line, or quote the text if the ':' "
        "is part of it",
    ),
    (
        "found unexpected end of stream",
        "Y101",
        "the file ends inside a quoted string",
        "close the quote that was opened here",
    ),
    (
        "found undefined alias",
        "Y101",
        "an alias (*name) refers to an anchor (&name) that is not defined before it",
        "define the anchor first, or remove the '*'",
    ),
    (
        "but found another document",
        "Y110",
        "the file holds more than one YAML document ('---'); a file holds one scenario",
        "split the documents into separate files",
    ),
]


def _yaml_error(exc: Exception, text: str, name: str) -> Diagnostic:
    problem = str(getattr(exc, "problem", "") or "")
    mark = getattr(exc, "problem_mark", None)
    context = str(getattr(exc, "context", "") or "")
    context_mark = getattr(exc, "context_mark", None)
    if mark is not None:
        span = Span(name, mark.line + 1, mark.column + 1)
    else:  # ReaderError: a position, not a mark
        position = getattr(exc, "position", None)
        if isinstance(position, int):
            line, col = _line_col(text, position)
            span = Span(name, line, col)
        else:
            span = Span(name, 1, 1)
        char = getattr(exc, "character", None)
        if char is not None:
            point = char if isinstance(char, int) else ord(str(char)[:1] or "\0")
            return Diagnostic(
                span,
                "Y106",
                f"the file contains a control character (U+{point:04X}) that YAML does not "
                "allow",
                "remove the invisible character (often pasted from another program)",
            )
    lines = text.splitlines()
    if 1 <= span.line <= len(lines) and "\t" in lines[span.line - 1][: span.col]:
        tab_line = lines[span.line - 1]
        tab = Span(name, span.line, tab_line.index("\t") + 1)
        return Diagnostic(tab, "Y103", _TAB_MESSAGE, _TAB_HINT)
    for needle, code, message, hint in _FRIENDLY_YAML:
        if needle in problem or needle in context:
            if code == "Y103":
                span = _first_tab(text, name) or span
            if needle == "found unexpected end of stream" and context_mark is not None:
                span = Span(name, context_mark.line + 1, context_mark.column + 1)
            return Diagnostic(span, code, message, hint)
    where = ""
    if context and context_mark is not None:
        where = f" ({context} at line {context_mark.line + 1}, column {context_mark.column + 1})"
    message = f"invalid YAML: {problem or exc}{where}"
    return Diagnostic(span, "Y101", message, _hint_for(problem))


def _hint_for(problem: str) -> str:
    if "expected ',' or ']'" in problem:
        return "close the list with ']' or separate its items with ','"
    if "expected ',' or '}'" in problem:
        return "close the mapping with '}' or separate its entries with ','"
    if "did not find expected key" in problem or "expected <block end>" in problem:
        return "check the indentation: items of one mapping must start in the same column"
    if "'-' indicator" in problem:
        return "check the indentation: every '- ' item of a list must start in the same column"
    if "unknown escape" in problem:
        return "in \"double quotes\" a backslash starts an escape; use 'single quotes' or '\\\\'"
    return "check the quotes and the indentation near this place"


def _first_tab(text: str, name: str) -> Span | None:
    for i, line in enumerate(text.splitlines(), 1):
        stripped = line.lstrip(" ")
        if stripped.startswith("\t"):
            return Span(name, i, len(line) - len(stripped) + 1)
    return None


# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1023-core-schema)
_NULL = {"", "~", "null", "Null", "NULL"}
_TRUE = {"true", "True", "TRUE"}
_FALSE = {"false", "False", "FALSE"}
_INT = re.compile(r"[-+]?[0-9]+\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?\Z")
_INF = re.compile(r"[-+]?\.(inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(nan|NaN|NAN)\Z")

_STD = "tag:yaml.org,2002:"
_PLAIN_RESOLVED = {_STD + t for t in ("str", "int", "float", "bool", "null")}
_KNOWN_TAGS = {_STD + t for t in ("str", "int", "float", "bool", "null", "timestamp", "map",
                                  "seq", "binary", "omap", "set", "merge")}


def resolve_plain(value: str) -> Any:
    """A plain (unquoted) scalar, read with the YAML 1.2 core schema."""
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if _INT.match(value):
        return int(value)
    if _OCT.match(value):
        return int(value[2:], 8)
    if _HEX.match(value):
        return int(value[2:], 16)
    if _FLOAT.match(value):
        return float(value)
    if _INF.match(value):
        return -math.inf if value.startswith("-") else math.inf
    if _NAN.match(value):
        return math.nan
    return value


class _Builder:
    """Turns composed nodes into plain data, recording positions as it goes."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.spans: dict[DataPath, Span] = {}
        self.key_spans: dict[DataPath, Span] = {}
        self.styles: dict[DataPath, str] = {}
        self.diagnostics: list[Diagnostic] = []
        self.count = 0
        self._bombed = False

    def _span(self, node: Any) -> Span:
        mark = node.start_mark
        return Span(self.name, mark.line + 1, mark.column + 1)

    def convert(self, node: Any, path: DataPath) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            if not self._bombed:
                self._bombed = True
                self.diagnostics.append(
                    Diagnostic(
                        self._span(node),
                        "Y109",
                        f"the file expands to more than {MAX_VALUES:,} values through "
                        "aliases (*name); this looks like a 'billion laughs' attack",
                        "write the data out, or use the suite's tool library instead of "
                        "anchors and aliases",
                    )
                )
            return None
        if len(path) > MAX_DEPTH:
            if not self._bombed:
                self._bombed = True
                self.diagnostics.append(
                    Diagnostic(self._span(node), "Y110",
                               f"the data is nested more than {MAX_DEPTH} levels deep")
                )
            return None
        self.spans[path] = self._span(node)
        tag = node.tag
        if tag and tag not in _KNOWN_TAGS:
            short = "!!" + tag[len(_STD):] if tag.startswith(_STD) else tag
            self.diagnostics.append(
                Diagnostic(
                    self._span(node),
                    "Y110",
                    f"the YAML tag '{short}' is not allowed; Scenarist reads plain data only",
                    "remove the tag",
                )
            )
            return None
        kind = node.id
        if kind == "scalar":
            return self._scalar(node, path)
        if kind == "sequence":
            return [self.convert(item, (*path, i)) for i, item in enumerate(node.value)]
        return self._mapping(node, path)

    def _scalar(self, node: Any, path: DataPath) -> Any:
        value: str = node.value
        style = node.style or ""
        if len(value) > MAX_STRING_CHARS:
            self.diagnostics.append(
                Diagnostic(
                    self._span(node),
                    "Y111",
                    f"this string has {len(value):,} characters; Scenarist accepts at most "
                    f"{MAX_STRING_CHARS:,} in one value",
                    "shorten the text; a tool's fixed return value rarely needs more",
                )
            )
            return None
        if style:  # quoted or block scalars are always text
            self.styles[path] = style
            return value
        if node.tag in _PLAIN_RESOLVED:
            return resolve_plain(value)
        return value  # timestamps and the rest stay as written

    def _mapping(self, node: Any, path: DataPath) -> dict[str, Any]:
        out: dict[str, Any] = {}
        seen: dict[str, Span] = {}
        for key_node, value_node in node.value:
            key_span = self._span(key_node)
            if key_node.id != "scalar":
                self.diagnostics.append(
                    Diagnostic(key_span, "Y110", "a key must be plain text, not a list or mapping")
                )
                continue
            if key_node.tag == _STD + "merge" or (key_node.value == "<<" and not key_node.style):
                self.diagnostics.append(
                    Diagnostic(
                        key_span,
                        "Y110",
                        "merge keys ('<<') are not supported",
                        "write the keys out, or define the tool once in the suite's tool "
                        "library and refer to it by name",
                    )
                )
                continue
            key = str(self._scalar(key_node, (*path, "\x00key")))
            self.styles.pop((*path, "\x00key"), None)
            if key in seen:
                first = seen[key]
                self.diagnostics.append(
                    Diagnostic(
                        key_span,
                        "Y102",
                        f"the key '{key}' appears twice in this mapping (first at line "
                        f"{first.line}, column {first.col})",
                        "remove one of them; YAML would silently keep only the last",
                    )
                )
                continue
            seen[key] = key_span
            self.key_spans[(*path, key)] = key_span
            out[key] = self.convert(value_node, (*path, key))
        return out


def iter_yaml_files(root: FsPath) -> Iterator[FsPath]:
    """``*.yaml`` and ``*.yml`` files under ``root`` in a stable order, skipping hidden
    folders and ``runs/``."""
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).parts
        if any(part.startswith(".") for part in rel[:-1]) or "runs" in rel[:-1]:
            continue
        if p.suffix in (".yaml", ".yml") and p.is_file() and not p.name.startswith("."):
            yield p
