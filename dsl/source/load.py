"""Load: a YAML file becomes a :class:`Document` — plain Python data plus the 1-based
``line:col`` of every key and value, recorded once, here.

ruamel.yaml composes the file into a node graph (its libyaml-backed parser when
``ruamel.yaml.clib`` is installed, its pure-Python one otherwise); we convert the nodes to
plain ``dict``/``list``/``str``/``int``/``float``/``bool``/``None`` ourselves, which lets us
report duplicate keys with both places, refuse alias bombs before they expand, follow
merge keys (``<<: *common``: the merged keys keep the place where the anchor wrote them), and keep
timestamps as the text the author wrote (``given.at`` is parsed by the compiler, which
insists on a UTC offset). Scalars are resolved with the YAML 1.2 core schema: ``yes`` and
``no`` stay text.

Nothing here raises on bad input: a file that cannot be loaded becomes a ``Document`` with
``data = None`` and its diagnostics, so one bad file never stops a batch.
"""

from __future__ import annotations

import errno
import itertools
import json
import math
import os
import re
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path as FsPath
from typing import Any

from ..errors import Diagnostic, Span

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

_STD = "tag:yaml.org,2002:"

try:  # the libyaml-backed parser, when ruamel.yaml.clib is installed
    from _ruamel_yaml import CParser as _CParser
    from ruamel.yaml.nodes import ScalarNode as _ScalarNode
    from ruamel.yaml.nodes import SequenceNode as _SequenceNode
    from ruamel.yaml.tag import Tag as _Tag

    HAVE_C_PARSER = True
except ImportError:  # pragma: no cover - exercised only without the C extension
    HAVE_C_PARSER = False


def _shared_tag(name: str) -> Any:
    """One Tag object for every untagged node of a kind. ruamel makes a new Tag per node
    and decodes its text on every ``node.tag`` (a character loop); sharing one, with its
    text decoded once, makes the builder twice as fast and lets it test ``is``."""
    tag = _Tag(suffix=_STD + name)
    str(tag)  # decode once
    return tag


if HAVE_C_PARSER:
    _TAG_STR, _TAG_SEQ, _TAG_MAP = (_shared_tag(n) for n in ("str", "seq", "map"))

    class _Composer(_CParser):  # type: ignore[misc]
        """libyaml's parser and composer with the YAML *base* schema: every untagged
        scalar is text (``tag:yaml.org,2002:str``) — we resolve plain scalars ourselves
        with the YAML 1.2 core schema — and every collection a plain seq or map. The same
        tags ruamel's CBaseLoader gives, without its resolver and constructor objects."""

        def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
            if kind is _ScalarNode:
                return _TAG_STR
            return _TAG_SEQ if kind is _SequenceNode else _TAG_MAP

        def descend_resolver(self, parent: Any, index: Any) -> None:
            pass

        def ascend_resolver(self) -> None:
            pass
else:  # pragma: no cover
    _TAG_STR = _TAG_SEQ = _TAG_MAP = object()


@dataclass(frozen=True, slots=True)
class Document:
    """A loaded file: plain data, and the composed YAML tree it came from.

    Positions are read from the tree when asked for (``span``, ``key_span``,
    ``span_in_string``): a file without problems never pays for them.
    """

    path: str
    text: str
    data: Any
    root: Any = None  # the composed node tree (None when the file could not be parsed)
    diagnostics: tuple[Diagnostic, ...] = ()
    # The data of a file whose only problems are duplicate keys (the first of each kept):
    # ``data`` is None, as for every file with problems, and lint goes on with this to
    # report the file's other mistakes in the same pass. Nothing runs from it.
    salvaged: Any = None
    # mapping node id -> {key: (key node, value node)}, built on the first lookup in it
    _keys: dict[int, dict[str, tuple[Any, Any]]] = field(
        default_factory=dict, repr=False, compare=False)
    # (value 0 | key 1, path) -> its place, found once (a file's cases ask for the same)
    _places: dict[tuple[int, DataPath], Span] = field(
        default_factory=dict, repr=False, compare=False)

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()

    def _walk(self, path: DataPath) -> tuple[Any, Any, bool]:
        """The deepest node on ``path``, the key node that holds it (for a mapping value),
        and whether the whole path was found."""
        node = self.root
        key_node = None
        for k in path:
            if node is None:
                return None, None, False
            kind = node.id
            if kind == "mapping" and isinstance(k, str):
                hit = self._index(node).get(k)
                if hit is None:
                    return node, None, False
                key_node, node = hit
            elif kind == "sequence" and isinstance(k, int) and 0 <= k < len(node.value):
                node, key_node = node.value[k], None
            else:
                return node, None, False
        return node, key_node, True

    def _index(self, node: Any) -> dict[str, tuple[Any, Any]]:
        """A mapping node's keys → (key node, value node): its own keys (the first of
        duplicates, as loaded), then those its merge keys (``<<: *name``) bring, each from
        the first mapping that has it — the keys the loaded data holds, where they are
        written (a merged key is at the anchor's mapping)."""
        index = self._keys.get(id(node))
        if index is not None:
            return index
        index = self._keys[id(node)] = {}
        merged: list[Any] = []
        for kn, vn in node.value:
            if kn.id != "scalar":
                continue
            if is_merge_key(kn):
                merged.extend(merge_sources(vn))
                continue
            index.setdefault(_key_text(kn), (kn, vn))
        for source in merged:
            for key, hit in self._index(source).items():
                index.setdefault(key, hit)
        return index

    def _at(self, node: Any) -> Span:
        if node is None:
            return Span(self.path, 1, 1)
        mark = node.start_mark
        return Span(self.path, mark.line + 1, mark.column + 1)

    def span(self, path: DataPath) -> Span:
        """The place of the value at ``path``, or of its nearest parent that has one."""
        found = self._places.get((0, path))
        if found is None:
            found = self._places[(0, path)] = self._at(self._walk(path)[0])
        return found

    def node(self, path: DataPath) -> Any:
        """The composed YAML node of the value at ``path`` (None when there is none)."""
        node, _, found = self._walk(path)
        return node if found else None

    def extent(self, path: DataPath) -> tuple[int, int]:
        """The first and last line of the value at ``path``."""
        node = self._walk(path)[0]
        if node is None:
            return (1, 1)
        end = node.end_mark
        last = end.line + (1 if end.column else 0)
        return (node.start_mark.line + 1, max(node.start_mark.line + 1, last))

    def item_spans(self, path: DataPath) -> list[Span]:
        """The place of every item of the list at ``path`` (one walk for all of them; []
        when there is no list there)."""
        node, _, found = self._walk(path)
        if not found or node is None or node.id != "sequence":
            return []
        at = self._at
        return [at(item) for item in node.value]

    def key_span(self, path: DataPath) -> Span:
        """The place of the key that holds the value at ``path`` (falls back to the value)."""
        found = self._places.get((1, path))
        if found is None:
            node, key_node, _ = self._walk(path)
            found = self._places[(1, path)] = self._at(key_node if key_node is not None
                                                       else node)
        return found

    def style(self, path: DataPath) -> str:
        """How the scalar at ``path`` is written: ``""`` (plain), ``'``, ``"``, ``|``, ``>``."""
        node, _, found = self._walk(path)
        if not found or node is None or node.id != "scalar":
            return ""
        return str(node.style or "")

    def span_in_string(self, path: DataPath, offset: int) -> Span:
        """The place of character ``offset`` of the string at ``path``.

        Exact for plain, quoted (without escapes before ``offset``) and literal block
        scalars on their own lines; for folded and escaped strings the start of the
        string is the best honest answer.
        """
        start = self.span(path)
        style = self.style(path)
        value = value_at(self.data, path)
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


def value_at(data: Any, path: DataPath) -> Any:
    """The value at ``path`` in plain data; None when there is none."""
    for key in path:
        try:
            data = data[key]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def display_path(path: FsPath) -> str:
    """Paths in messages: relative to the current folder when below it."""
    try:
        return str(path.resolve().relative_to(FsPath.cwd().resolve()))
    except ValueError:
        return str(path)


def read_file(path: FsPath, display: str | None = None) -> Document:
    """Read and load one file; every problem becomes a diagnostic on the Document. Only
    regular files are read (a FIFO, a device or a socket is reported, never waited on),
    and at most MAX_FILE_BYTES of them."""
    name = display if display is not None else str(path)
    raw = read_bytes(path, name)
    if isinstance(raw, Diagnostic):
        return _failed(name, raw)
    return load_bytes(raw, name)


def read_bytes(path: FsPath, name: str, limit: int = MAX_FILE_BYTES,
               too_large_hint: str = "a scenario is a page of YAML; move large fixed data "
                                     "out of the scenario or shorten it") -> bytes | Diagnostic:
    """The bytes of a regular file of at most ``limit`` bytes, or the diagnostic (at
    ``name``:1:1) that says why it cannot be read. A FIFO, a device or a socket is reported,
    never waited on."""
    origin = Span(name, 1, 1)
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer forever
        fd = os.open(path, _OPEN_FLAGS)
    except OSError as exc:
        return Diagnostic(origin, "Y112", f"cannot read the file: {_os_reason(exc)}")
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            return Diagnostic(
                origin, "Y112", f"the path is {file_kind(st.st_mode)}, not a regular file",
                "give the path of a scenario file (a symlink to a device or a FIFO is not "
                "one)")
        if st.st_size > limit:
            return _too_large(origin, st.st_size, limit, too_large_hint)
        with open(fd, "rb", closefd=False) as f:
            raw = f.read(limit + 1)  # a file that grows stops here
    except OSError as exc:
        return Diagnostic(origin, "Y112", f"cannot read the file: {_os_reason(exc)}")
    finally:
        os.close(fd)
    if len(raw) > limit:
        return _too_large(origin, len(raw), limit, too_large_hint)
    return raw


def _too_large(origin: Span, size: int, limit: int, hint: str) -> Diagnostic:
    unit = f"{limit // 2**20} MiB" if limit % 2**20 == 0 else f"{limit:,} bytes"
    return Diagnostic(origin, "Y104", f"the file is {size:,} bytes; Scenarist reads files of "
                                      f"at most {limit:,} bytes ({unit})", hint)


def read_text(path: FsPath, name: str) -> str | Diagnostic:
    """A UTF-8 text file (a byte order mark is allowed), or the diagnostic that says why it
    is not one: unreadable, too large, binary (a NUL byte), not UTF-8 — at its place."""
    raw = read_bytes(path, name, too_large_hint="split the data into several files")
    if isinstance(raw, Diagnostic):
        return raw
    return decode_text(raw, name)


def decode_text(raw: bytes, name: str) -> str | Diagnostic:
    """``raw`` as UTF-8 text (a byte order mark is dropped), or the Y105/Y106 diagnostic
    at the first byte that is not text."""
    nul = raw.find(b"\x00")
    if nul >= 0:
        line, col = _line_col_bytes(raw, nul)
        return Diagnostic(Span(name, line, col), "Y106",
                          "the file contains binary data (a NUL byte), not UTF-8 text",
                          "check that this is the file you meant, not an image or an archive")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line, col = _line_col_bytes(raw, exc.start)
        return Diagnostic(Span(name, line, col), "Y105",
                          f"the file is not UTF-8 text (byte 0x{raw[exc.start]:02x} cannot be "
                          "decoded)", "save the file as UTF-8 (in a spreadsheet: CSV UTF-8)")


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _os_reason(exc: OSError) -> str:
    if exc.errno == errno.ELOOP:
        return "it is a symbolic link that leads back to itself (a symlink loop)"
    return exc.strerror or str(exc)


def file_kind(mode: int) -> str:
    """What a path that is not a regular file is, in words, from its ``st_mode``: "a
    folder", "a FIFO (named pipe)", "a device", "a socket". Every reader that refuses one
    (scenario files here, cassettes in dsl/targets/cassette.py) says it in these words."""
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a file"


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
    if node is None:  # a stream without a document
        return _failed(name, Diagnostic(Span(name, 1, 1), "Y107",
                                        "the file holds no YAML document",
                                        "a scenario needs at least given.at, when and then"),
                       text)
    builder = _Builder(name)
    try:
        data = builder.convert(node, 0)
    except _TooMany as exc:
        return Document(name, text, None, node, (builder.too_many(exc),))
    if builder.diagnostics:
        # Duplicate keys alone leave well-defined data (the first of each key): the
        # compile stage may go on with it to find the file's other mistakes.
        salvaged = data if all(d.code == "Y102" for d in builder.diagnostics) else None
        return Document(name, text, None, node, tuple(builder.diagnostics), salvaged=salvaged)
    if ("\\u" in text or "\\U" in text) and (bad := _surrogate_escape(text, data, name)):
        return Document(name, text, None, node, (bad,))
    if data is None:  # '---' with nothing after it, or '~' or 'null' alone
        mark = node.start_mark
        at = Span(name, mark.line + 1, mark.column + 1)
        hint = "a scenario is a mapping with given, when and then"
        if not node.value:
            return Document(name, text, None, node, (Diagnostic(
                Span(name, 1, 1), "Y107", "the file holds an empty YAML document", hint),))
        return Document(name, text, None, node, (Diagnostic(
            at, "Y108", f"the file holds only null ({node.value!r}), not a mapping", hint),))
    return Document(name, text, data, node)


_SURROGATE_ESCAPE = re.compile(r"\\(?:u[dD][89a-fA-F][0-9a-fA-F]{2}"
                               r"|U0000[dD][89a-fA-F][0-9a-fA-F]{2})")


def _surrogate_escape(text: str, data: Any, name: str) -> Diagnostic | None:
    """A ``"\\ud800"`` escape: YAML makes it a lone surrogate, which no UTF-8 file,
    request or result can hold (YAML does not pair ``\\ud83d\\ude00`` either)."""
    try:
        json.dumps(data, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    m = _SURROGATE_ESCAPE.search(text)
    line, col = _line_col(text, m.start()) if m else (1, 1)
    escape = f"the escape {m.group(0)}" if m else "an escape"
    return Diagnostic(Span(name, line, col), "Y105",
                      f"{escape} is a surrogate, which is not a character",
                      "write the character itself, or \\U0001F600 for one beyond U+FFFF")


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
        parser = _Composer(text)
        try:
            return parser.get_single_node()
        finally:
            parser.dispose()
    return _compose_pure(text)  # pragma: no cover


def _compose_pure(text: str) -> Any:
    # why: ruamel's full YAML class, only off the fast path
    from ruamel.yaml import YAML

    return YAML(typ="base", pure=True).compose(text)


def _too_deep(text: str, name: str) -> Diagnostic | None:
    """Walk the parser's events (no recursion) and stop at the first too-deep place."""
    # why: ruamel's full YAML class, only off the fast path
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
    split = _colon_split(problem, text, span) or _word_then_modifier(problem, text, span)
    if split is not None:
        return split
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


def _colon_split(problem: str, text: str, span: Span) -> Diagnostic | None:
    """An unquoted ':' inside ``{…}`` that splits a value (``{name: Note: call us}``): the
    text it cut, and the fix — quote it."""
    if "expected ',' or '}', but got ':'" not in problem:
        return None
    lines = text.splitlines()
    if not 1 <= span.line <= len(lines):
        return None
    line = lines[span.line - 1]
    at = span.col - 1  # the ':' that cut the value
    head = line[:at]
    start = max(head.rfind(": "), -1)
    if start < 0:
        return None
    key_from = max(head.rfind(",", 0, start), head.rfind("{", 0, start)) + 1
    key = head[key_from:start].strip()
    ends = [i for i in (line.find(",", at), line.find("}", at)) if i >= 0]
    value = line[start + 2:min(ends) if ends else len(line)].strip()
    if not key or not value:
        return None
    quoted = json.dumps(value, ensure_ascii=False)
    return Diagnostic(
        span, "Y101",
        f"the ':' in {quoted} starts a new 'key: value' inside {{…}}, which cuts the value of "
        f"'{key}' in two",
        f"quote the text: {key}: {quoted}")


_MODIFIER_LINE = re.compile(r"\s*(always|name):")
_WORD_ITEM = re.compile(r"\s*- ([a-z_]+)\s*$")


def _word_then_modifier(problem: str, text: str, span: Span) -> Diagnostic | None:
    """``- does_not_modify`` with ``always: true`` on the next line: YAML reads the word and
    the next line as one text, then meets the ':' — the check needs its value, ``true``."""
    if "mapping values are not allowed" not in problem:
        return None
    lines = text.splitlines()
    if not 2 <= span.line <= len(lines):
        return None
    modifier = _MODIFIER_LINE.match(lines[span.line - 1])
    word = _WORD_ITEM.match(lines[span.line - 2])
    if modifier is None or word is None:
        return None
    check, mod = word.group(1), modifier.group(1)
    return Diagnostic(
        Span(span.file, span.line - 1, lines[span.line - 2].index(check) + 1), "Y101",
        f"the check '{check}' has no value, so '{mod}' below it cannot go beside it: YAML "
        f"reads '{check}' and the next line as one text",
        f"write `{check}: true` beside `{'always: true' if mod == 'always' else 'name: …'}`, "
        f"e.g. - {{{check}: true, {mod}: {'true' if mod == 'always' else 'its name'}}}")


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

_PLAIN_RESOLVED = {_STD + t for t in ("str", "int", "float", "bool", "null")}
_KNOWN_TAGS = {_STD + t for t in ("str", "int", "float", "bool", "null", "timestamp", "map",
                                  "seq", "binary", "omap", "set", "merge")}


# A plain scalar that starts with none of these is text: no null, bool or number does.
_NOT_TEXT_START = frozenset("~nNtTfF0123456789+-.")
_NUMBER_START = frozenset("0123456789+-.")


def too_many_digits(text: str) -> bool:
    """Whether a decimal integer has more digits than Python reads (sys.int_max_str_digits:
    a limit against slow conversions; 0 is none)."""
    limit = sys.get_int_max_str_digits()
    return 0 < limit < len(text.lstrip("+-"))


def resolve_plain(value: str) -> Any:
    """A plain (unquoted) scalar, read with the YAML 1.2 core schema."""
    if value and value[0] not in _NOT_TEXT_START:
        return value
    if value in _NULL:
        return None
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    if value[0] not in _NUMBER_START:
        return value
    if _INT.match(value):
        return value if too_many_digits(value) else int(value)
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


def _key_text(node: Any) -> str:
    """A mapping key as the builder stores it (a scalar key node)."""
    value: str = node.value
    if node.ctag is _TAG_STR:
        if node.style or (value and value[0] not in _NOT_TEXT_START):
            return value
        return str(resolve_plain(value))
    if node.style:
        return value
    return str(resolve_plain(value)) if node.tag in _PLAIN_RESOLVED else value


class _Builder:
    """Turns composed nodes into plain data, refusing what Scenarist does not read
    (unknown tags, duplicate keys, alias bombs, deep nesting, huge strings); merge keys
    (``<<: *common``) bring the keys of the mapping they name.
    Positions are not recorded here: the Document reads them from the nodes on demand."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.diagnostics: list[Diagnostic] = []
        self.count = 0
        self._bombed = False

    def _span(self, node: Any) -> Span:
        mark = node.start_mark
        return Span(self.name, mark.line + 1, mark.column + 1)

    def convert(self, node: Any, depth: int) -> Any:
        self.count += 1
        if self.count > MAX_VALUES:
            raise _TooMany(node)  # unwinds, collecting the path to this node
        if depth > MAX_DEPTH:
            if not self._bombed:
                self._bombed = True
                self.diagnostics.append(
                    Diagnostic(self._span(node), "Y110",
                               f"the data is nested more than {MAX_DEPTH} levels deep")
                )
            return None
        ctag = node.ctag
        if ctag is _TAG_STR:  # untagged scalar (the shared tag of the C composer)
            return self._scalar(node, True)
        if ctag is _TAG_MAP:
            return self._mapping(node, depth)
        if ctag is _TAG_SEQ:
            return self._sequence(node, depth)
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
            return self._scalar(node, tag in _PLAIN_RESOLVED)
        if kind == "sequence":
            return self._sequence(node, depth)
        return self._mapping(node, depth)

    def _sequence(self, node: Any, depth: int) -> list[Any]:
        try:
            return [self._plain(item) if item.ctag is _TAG_STR and depth < MAX_DEPTH
                    else self.convert(item, depth + 1) for item in node.value]
        except _TooMany as exc:
            exc.path.append(node)
            raise

    def _plain(self, node: Any) -> Any:
        """``convert`` for an untagged scalar within the depth limit (most of a file)."""
        self.count += 1
        if self.count > MAX_VALUES:
            raise _TooMany(node)
        value: str = node.value
        if node.style or (value and value[0] not in _NOT_TEXT_START):
            if len(value) > MAX_STRING_CHARS:
                return self._scalar(node, True)
            return value
        return self._scalar(node, True)

    def too_many(self, exc: _TooMany) -> Diagnostic:
        """Y109 at the list or mapping whose alias makes the values explode: the first,
        from the top, that holds a node written before it (only an alias can do that)."""
        nodes = exc.path[::-1]
        for parent, child in itertools.pairwise(nodes):
            if child.start_mark.index < parent.start_mark.index:
                return Diagnostic(
                    self._span(parent),
                    "Y109",
                    f"the aliases (*name) here expand to more than {MAX_VALUES:,} values; "
                    "this looks like a 'billion laughs' attack",
                    "write the data out, or use the suite's tool library instead of "
                    "anchors and aliases",
                )
        where = nodes[-2] if len(nodes) > 1 else nodes[-1]
        return Diagnostic(self._span(where), "Y109",
                          f"the file holds more than {MAX_VALUES:,} values; a scenario needs "
                          "far fewer", "move large data out of the scenario")

    def _scalar(self, node: Any, resolvable: bool) -> Any:
        value: str = node.value
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
        if node.style:  # quoted or block scalars are always text
            return value
        if resolvable and _INT.match(value) and too_many_digits(value):
            self.diagnostics.append(
                Diagnostic(
                    self._span(node),
                    "Y111",
                    f"this number has {len(value.lstrip('+-')):,} digits; Scenarist reads "
                    f"numbers of at most {sys.get_int_max_str_digits():,} digits",
                    'write it as text, in quotes: "1234…"',
                )
            )
            return None
        if resolvable:
            return resolve_plain(value)
        return value  # timestamps and the rest stay as written

    def _mapping(self, node: Any, depth: int) -> dict[str, Any]:
        out: dict[str, Any] = {}
        merges: list[tuple[Any, Any]] = []
        for key_node, value_node in node.value:
            if key_node.id != "scalar":
                self.diagnostics.append(
                    Diagnostic(self._span(key_node), "Y110",
                               "a key must be plain text, not a list or mapping")
                )
                continue
            raw = key_node.value
            if (key_node.ctag is _TAG_STR and not key_node.style and raw
                    and raw[0] not in _NOT_TEXT_START and raw != "<<"
                    and len(raw) <= MAX_STRING_CHARS):
                key = raw  # the usual key: plain text
            elif is_merge_key(key_node):
                merges.append((key_node, value_node))
                continue
            else:
                resolvable = key_node.ctag is _TAG_STR or key_node.tag in _PLAIN_RESOLVED
                key = str(self._scalar(key_node, resolvable))
            if key in out:
                first = next((self._span(k) for k, _ in node.value
                              if k.id == "scalar" and _key_text(k) == key),
                             self._span(key_node))
                self.diagnostics.append(
                    Diagnostic(
                        self._span(key_node),
                        "Y102",
                        f"the key '{key}' appears twice in this mapping (first at line "
                        f"{first.line}, column {first.col})",
                        "remove one of them; YAML would silently keep only the last",
                    )
                )
                continue
            try:
                out[key] = (self._plain(value_node)
                            if value_node.ctag is _TAG_STR and depth < MAX_DEPTH
                            else self.convert(value_node, depth + 1))
            except _TooMany as exc:
                exc.path.append(node)
                raise
        if merges:
            try:
                self._merge(out, merges, depth)
            except _TooMany as exc:
                exc.path.append(node)
                raise
        return out

    def _merge(self, out: dict[str, Any], merges: list[tuple[Any, Any]], depth: int) -> None:
        """``<<: *name`` (or ``<<: [*a, *b]``): the keys of the merged mappings that this
        mapping does not write itself, the first mapping's first (YAML's merge key)."""
        for key_node, value_node in merges:
            sources = merge_sources(value_node)
            if not sources or any(s.id != "mapping" for s in sources):
                self.diagnostics.append(Diagnostic(
                    self._span(key_node), "Y110",
                    "a merge key ('<<') takes a mapping — an alias such as *common — or a "
                    "list of them",
                    "define the shared keys once with an anchor (common: &common {...}) and "
                    "merge them with <<: *common"))
                continue
            for source in sources:
                merged = self.convert(source, depth + 1)
                if isinstance(merged, dict):
                    for k, v in merged.items():
                        out.setdefault(k, v)


def is_merge_key(node: Any) -> bool:
    """``<<`` written plain (or tagged ``!!merge``): YAML's merge key."""
    if node.ctag is _TAG_STR:
        return bool(node.value == "<<" and not node.style)
    return bool((node.value == "<<" and not node.style) or node.tag == _STD + "merge")


def merge_sources(node: Any) -> list[Any]:
    """The nodes a merge key's value names: one mapping, or each item of a list."""
    if node.id == "sequence":
        return list(node.value)
    return [node]


class _TooMany(Exception):
    """More than MAX_VALUES values: raised at the node that crossed the limit."""

    def __init__(self, node: Any) -> None:
        super().__init__()
        self.path = [node]  # innermost first


def source_lines(path: FsPath) -> list[str]:
    """A file's lines for showing beside a diagnostic: [] unless it is a regular file of
    at most MAX_FILE_BYTES (a FIFO is never waited on, a device never read)."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except OSError:
        return []
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > MAX_FILE_BYTES:
            return []
        with open(fd, "rb", closefd=False) as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except OSError:
        return []
    finally:
        os.close(fd)
    if len(raw) > MAX_FILE_BYTES or b"\x00" in raw:
        return []
    return raw.decode("utf-8-sig", errors="replace").splitlines()
