"""Where the cursor is in a YAML text that may be half-written: the keys that lead to it
(read from the indentation of the lines above, and from the flow collections ``{…}`` and
``[…]`` on its own line), whether it is at a key, a list's item or a value, and the word
being typed. Enough for completion and hover; lint is the judge of what is right.

Also the conversions between lint's places (1-based line and column, counted in
characters) and the editor's (0-based, counted in UTF-16 code units by default).
Nothing here imports the LSP toolkit.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..compiler.vocabulary import ITEM

Step = str | int  # a key, or ITEM: an item of a list
Kind = Literal["key", "item", "value"]

# `  - key: ...`: the indentation, the dash of a list's item, the key
_KEY = re.compile(r"""^(\s*)(-\s+)?("[^"]*"|'[^']*'|[^\s#'"{}\[\],:-][^:#{}\[\],]*?|-[^\s:]+)"""
                  r"""\s*:(?:\s|$)""")
_DASH = re.compile(r"^(\s*)-(?:\s|$)")
NAME = re.compile(r"[\w-]*$")  # the name being typed: tools, checks, keys (`C-2` is a row)
NAME_CHARS = re.compile(r"[\w-]")
EXPR_KEYS = frozenset({"expect", "expr"})  # keys whose value is an expression


@dataclass(frozen=True, slots=True)
class Place:
    """What the cursor is on. ``path``: the keys (and :data:`ITEM`) of the mapping or list
    that holds it; ``kind``: ``key`` (a key of that mapping), ``item`` (the start of an
    item of that list: a value, or the first key of a mapping) or ``value`` (the value of
    ``key`` in that mapping); ``word``: what is typed of the name, from column
    ``start`` (0-based, in characters); ``before``: the line up to the cursor;
    ``in_string``: inside a quoted text."""

    path: tuple[Step, ...]
    kind: Kind
    key: str | None
    word: str
    start: int
    before: str
    in_string: bool = False

    @property
    def value_path(self) -> tuple[Step, ...]:
        """The path of the value the cursor is on (``kind`` ``value`` or ``item``)."""
        match self.kind:
            case "value":
                return (*self.path, self.key or "")
            case "item":
                return (*self.path, ITEM)
            case _:
                return self.path


def _indent(text: str) -> int:
    return len(text) - len(text.lstrip(" "))


def _unquote(key: str) -> str:
    key = key.strip()
    if len(key) >= 2 and key[0] == key[-1] and key[0] in "'\"":
        return key[1:-1]
    return key


def enclosing(lines: list[str], n: int, limit: int, item: bool = False) -> list[Step]:
    """The keys (and items) of the mappings and lists that hold line ``n`` (0-based), whose
    content starts at column ``limit``; ``item``: line ``n`` is a list's item (``- …``),
    which may sit at its key's own indentation."""
    out: list[Step] = []
    for i in range(n - 1, -1, -1):
        if limit == 0 and not item:
            break
        text = lines[i]
        stripped = text.strip()
        if not stripped or stripped.startswith("#"):
            continue
        p = _indent(text)
        m = _KEY.match(text)
        if p > limit or (p == limit and not (item and m and not m.group(2)
                                             and not _after_colon(text, m))):
            continue
        if m:
            dash = m.group(2) or ""
            if len(m.group(1)) + len(dash) < limit or (p == limit and item):
                out.insert(0, _unquote(m.group(3)))
            if dash:
                out.insert(0, ITEM)
        elif _DASH.match(text):
            out.insert(0, ITEM)
        limit, item = p, bool(_DASH.match(text))
        if limit == 0 and not item:
            break
    return out


def _after_colon(text: str, m: re.Match[str]) -> str:
    rest = text[m.end():].strip()
    return "" if rest.startswith("#") else rest


def place_at(text: str, line: int, col: int) -> Place:
    """The :class:`Place` at ``line`` and ``col`` (0-based; ``col`` in characters)."""
    lines = text.split("\n")
    current = lines[line] if line < len(lines) else ""
    before = current[:col]
    word = NAME.search(before)
    typed = word.group(0) if word else ""
    start = col - len(typed)
    dash = re.match(r"^(\s*)-\s+(\{\s*)?", before)
    key = _KEY.match(before)
    if dash and not key and "{" not in before[dash.end():] and "[" not in before[dash.end():]:
        parents = enclosing(lines, line, len(dash.group(1)), item=True)
        if dash.group(2):  # - {key
            return Place((*parents, ITEM), "key", None, typed, start, before)
        return Place(tuple(parents), "item", None, typed, start, before,
                     _open_quote(before[dash.end():]))
    if key:
        dash_text = key.group(2) or ""
        parents = enclosing(lines, line, len(key.group(1)), item=bool(dash_text))
        if dash_text:
            parents.append(ITEM)
        name = _unquote(key.group(3))
        rest = before[key.end():]
        inner = _flow(rest)
        if inner is not None:
            steps, kind, flow_key, in_string = inner
            path = (*parents, name, *steps)
            if kind == "key":
                return Place(path, "key", None, typed, start, before)
            if kind == "item":
                return Place(path, "item", None, typed, start, before, in_string)
            return Place(path, "value", flow_key, typed, start, before, in_string)
        return Place(tuple(parents), "value", name, typed, start, before,
                     _open_quote(rest))
    indent = _indent(current)
    parents = enclosing(lines, line, min(indent, col))
    return Place(tuple(parents), "key", None, typed, start, before)


def _open_quote(text: str) -> bool:
    """Is the end of ``text`` inside a quoted text?"""
    quote = None
    for ch in text:
        if quote is None and ch in "'\"":
            quote = ch
        elif ch == quote:
            quote = None
    return quote is not None


def _flow(rest: str) -> tuple[list[Step], Kind, str | None, bool] | None:
    """Inside a flow collection written after a key on the cursor's line: the steps into
    it, whether the cursor is at a key, an item or a value (and of which key), and
    whether inside a quoted text. None when ``rest`` opens no collection."""
    body = rest.lstrip()
    if not body.startswith(("{", "[")):
        return None
    stack: list[list[object]] = []  # [kind "map"|"seq", key or None, at a key?]
    token_start = 0
    i = 0
    in_string = False
    while i < len(body):
        ch = body[i]
        if ch in "'\"":
            end = body.find(ch, i + 1)
            if end < 0:
                in_string = True
                break
            i = end + 1
            continue
        if ch == "{":
            stack.append(["map", None, True])
            token_start = i + 1
        elif ch == "[":
            stack.append(["seq", None, False])
            token_start = i + 1
        elif ch in "}]":
            if stack:
                stack.pop()
            token_start = i + 1
        elif ch == ",":
            if stack and stack[-1][0] == "map":
                stack[-1][1], stack[-1][2] = None, True
            token_start = i + 1
        elif (ch == ":" and stack and stack[-1][0] == "map" and stack[-1][2]
              and (i + 1 == len(body) or body[i + 1] in " \t,}]")):
            stack[-1][1] = _unquote(body[token_start:i])
            stack[-1][2] = False
            token_start = i + 1
        i += 1
    if not stack:
        return None
    steps: list[Step] = [ITEM if kind == "seq" else str(key) for kind, key, _ in stack[:-1]]
    top_kind, top_key, top_at_key = stack[-1]
    if top_kind == "seq":
        return steps, "item", None, in_string
    if top_at_key:
        return steps, "key", None, in_string
    return steps, "value", str(top_key), in_string


def word_at(text: str, line: int, col: int,
            chars: re.Pattern[str] = NAME_CHARS) -> tuple[str, int, int] | None:
    """The word under the cursor (0-based line, column in characters): the word, its first
    and its last-plus-one column; None on no word."""
    lines = text.split("\n")
    if line >= len(lines):
        return None
    current = lines[line]
    start = col
    while start > 0 and chars.match(current[start - 1]):
        start -= 1
    end = col
    while end < len(current) and chars.match(current[end]):
        end += 1
    word = current[start:end]
    if not any(ch.isalnum() or ch == "_" for ch in word):  # a dash alone is no name
        return None
    return word, start, end


# ---------------------------------------------------------------- columns

Encoding = Literal["utf-16", "utf-8", "utf-32"]


def to_units(line_text: str, col: int, encoding: Encoding = "utf-16") -> int:
    """A column in characters (0-based) as the editor counts it."""
    match encoding:
        case "utf-32":
            return col
        case "utf-8":
            return len(line_text[:col].encode("utf-8"))
        case _:
            head = line_text[:col]
            return len(head) + sum(1 for ch in head if ord(ch) > 0xFFFF)


def from_units(line_text: str, units: int, encoding: Encoding = "utf-16") -> int:
    """An editor's column (0-based) in characters."""
    if encoding == "utf-32":
        return units
    count = 0
    for i, ch in enumerate(line_text):
        if count >= units:
            return i
        count += (len(ch.encode("utf-8")) if encoding == "utf-8"
                  else 2 if ord(ch) > 0xFFFF else 1)
    return len(line_text)


_TOKEN = re.compile(r"""\s*(?:"(?:[^"\\]|\\.)*"|'(?:[^']|'')*'"""  # a quoted text
                    r"""|[^\s:,\[\]{}#]+(?:[ \t]+[^\s:,\[\]{}#]+)*)""")  # or plain words
_WORD = re.compile(r"[\w-]+")


def token_end(line_text: str, col: int) -> int:
    """Where the name or YAML token that starts at ``col`` (0-based, characters) ends: a
    word (a check, a tool, a function in an expression), a quoted text, or a plain run of
    words on the line (up to ``:``, ``,``, a bracket or a comment); at least one character
    past ``col`` when the line goes on."""
    m = _WORD.match(line_text, col) or _TOKEN.match(line_text, col)
    end = m.end() if m and m.end() > col else col
    if end == col:
        stripped = len(line_text.rstrip())
        end = min(col + 1, max(stripped, col))
    return end
