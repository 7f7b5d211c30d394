"""A YAML file's text edited as a tree and written back changing only what was edited.

The form (:mod:`.form`, :mod:`.suiteform`) makes its edits on ruamel.yaml's round-trip tree,
which keeps comments, key order and quoting. ruamel does not write every text back exactly
as it was read (a file that mixes indentations, a ``|`` block at the end of a file without
a line end, a comment in an odd place), so the text is never simply dumped: :meth:`YamlText.text`
dumps the tree before and after the edits and puts only the lines the edits changed into
the original text (:func:`patch_lines`). Lines the edits did not touch stay as they were,
byte for byte — their indentation, their block styles, their comments. CRLF line ends
are kept.

Plain scalars are read with the YAML 1.2 core schema without timestamps, as Scenarist's
loader reads them (a moment stays text, never a timestamp).
"""

from __future__ import annotations

import difflib
import io
import itertools
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import YAMLError
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import (
    DoubleQuotedScalarString,
    FoldedScalarString,
    LiteralScalarString,
    PlainScalarString,
    SingleQuotedScalarString,
)

from ..source.load import load_bytes, resolve_plain

# mapping indent, sequence indent, sequence dash offset: the styles tried, commonest first
STYLES = tuple(itertools.product((2, 4), ((4, 2), (2, 0), (4, 0), (3, 1), (6, 4))))
_TIMESTAMP = "tag:yaml.org,2002:timestamp"
QUOTED = (DoubleQuotedScalarString, SingleQuotedScalarString, LiteralScalarString,
          FoldedScalarString)


class FormError(Exception):
    """The text cannot be shown or changed as a form (a sentence for the person)."""


def checked_op(edit: Mapping[str, Any], ops: Mapping[str, Sequence[str]]) -> str:
    """The edit's ``op``, one of ``ops`` (op -> the fields it needs) with all its fields;
    FormError says what is missing otherwise."""
    op = edit.get("op")
    if not isinstance(op, str) or op not in ops:
        raise FormError(f"unknown form edit {op!r}")
    missing = [f for f in ops[op] if f not in edit]
    if missing:
        raise FormError(f"the form edit '{op}' needs {', '.join(missing)}")
    return op


class _CoreResolver(VersionedResolver):
    """ruamel's resolver without timestamps: plain ``2026-09-29T10:00:00-03:00`` is text,
    as in Scenarist's loader, and is written back plain."""

    @property
    def versioned_resolver(self) -> Any:
        found = super().versioned_resolver
        return {k: [r for r in v if r[0] != _TIMESTAMP] for k, v in found.items()}


def _yaml(style: tuple[int, tuple[int, int]] = STYLES[0]) -> YAML:
    y = YAML(typ="rt")
    y.Resolver = _CoreResolver
    y.preserve_quotes = True
    y.width = 4096  # never fold a long line the person wrote on one
    y.allow_unicode = True
    mapping, (sequence, offset) = style
    y.indent(mapping=mapping, sequence=sequence, offset=offset)
    return y


def load_fragment(text: str) -> Any:
    """A small piece of YAML (a flow mapping the person typed) as round-trip data."""
    return _yaml().load(text)


class YamlText:
    """A YAML text loaded for editing: :attr:`data` (the round-trip tree) and
    :meth:`text` (the text with the tree's changes, and nothing else)."""

    def __init__(self, text: str, what: str = "a scenario") -> None:
        self.crlf = "\r\n" in text
        self.original = text.replace("\r\n", "\n") if self.crlf else text
        try:
            data = _yaml().load(self.original)
        except YAMLError as exc:
            raise FormError(syntax_words(self.original, exc)) from None
        if data is None and not self.original.strip("\n \t"):
            data = CommentedMap()  # an empty file: a form with nothing filled in
        if not isinstance(data, CommentedMap):
            keys = ("description, given, when and then" if what == "a scenario"
                    else "targets, defaults, world and tools")
            raise FormError(f"The form shows {what}: keys such as {keys}. Write them in the "
                            "YAML tab first.")
        self.data = data
        self.json = _json_style(self.original)
        self.style = _style_of(data, self.original) if self.json is None else STYLES[0]
        self._before = self._dump()

    def _dump(self) -> str:
        out = io.StringIO()
        _yaml(self.style).dump(self.data, out)
        return out.getvalue() if len(self.data) else ""

    def text(self) -> str:
        """The original text with the lines the tree's edits changed, and only those."""
        if self.json is not None:  # JSON (YAML's subset): written back as JSON, as it was
            indent, ascii_only = self.json
            new = json.dumps(plain(self.data), indent=indent, ensure_ascii=ascii_only)
            new += "\n" if self.original.endswith("\n") else ""
            if json.loads(new) == json.loads(self.original):
                return self.original.replace("\n", "\r\n") if self.crlf else self.original
            return new.replace("\n", "\r\n") if self.crlf else new
        after = self._dump()
        new = patch_lines(self.original, self._before, after)
        return new.replace("\n", "\r\n") if self.crlf else new


def syntax_words(text: str, exc: YAMLError) -> str:
    """A YAML syntax error as the form says it: the words and place Problems shows for it
    (Scenarist's loader's own diagnostic: ``4:7 Y101 the file ends inside a quoted
    string``), so both tabs say the same."""
    found = [d for d in load_bytes(text.encode("utf-8", "surrogatepass"), "-").diagnostics
             if d.severity == "error"]
    if found:
        d = found[0]
        said = f"{d.span.line}:{d.span.col} {d.code} {d.message}"
        if d.hint:
            said += f" (hint: {d.hint})"
    else:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        where = f"{mark.line + 1}:{mark.column + 1} " if mark is not None else ""
        said = where + (str(getattr(exc, "problem", "") or "").strip() or _first_line(exc))
    return f"The form needs YAML it can read; fix this in the YAML tab first: {said}"


def _json_style(text: str) -> tuple[int | None, bool] | None:
    """How a file written as JSON is indented (and whether it escapes non-ASCII text);
    None for a file that is not JSON."""
    if not text.lstrip().startswith("{"):
        return None
    try:
        json.loads(text)
    except ValueError:
        return None
    lines = text.splitlines()
    indent = len(lines[1]) - len(lines[1].lstrip(" ")) if len(lines) > 1 else None
    return (indent or None) if len(lines) > 1 else None, text.isascii()


def _first_line(exc: Exception) -> str:
    return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__


def _style_of(data: CommentedMap, text: str) -> tuple[int, tuple[int, int]]:
    """The indentation that writes ``data`` back as ``text`` (else the closest one)."""
    best: tuple[int, tuple[int, tuple[int, int]]] | None = None
    lines = text.splitlines()
    for style in STYLES:
        out = io.StringIO()
        _yaml(style).dump(data, out)
        written = out.getvalue()
        if written == text:
            return style
        differ = sum(a != b for a, b in zip(written.splitlines(), lines, strict=False))
        differ += abs(len(written.splitlines()) - len(lines))
        if best is None or differ < best[0]:
            best = (differ, style)
    return best[1] if best is not None else STYLES[0]


def patch_lines(original: str, before: str, after: str) -> str:
    """``original`` with the changes that turn ``before`` into ``after`` (two dumps of one
    tree, before and after the edits) — and no other. Where ``before`` already differs
    from ``original`` (what the round trip does not keep), the original's lines stay,
    except in a stretch the edits themselves touch, which is written as the edits left it.

    Comments go with the line below them, as people write them (ruamel keeps a comment on
    a line of its own with the item *above*): an item removed takes the comment lines just
    above it along and leaves those below it to what follows; an item added goes above the
    comment lines that lead into the item after it."""
    if before == after:
        return original
    base = before.splitlines(keepends=True)
    unended = bool(original) and not original.endswith("\n")  # its last line has no end
    mine = (original + "\n" if unended else original).splitlines(keepends=True)
    edited = after.splitlines(keepends=True)
    # each line boundary of `base` that has its twin in `original`
    to_orig: dict[int, int] = {0: 0, len(base): len(mine)}
    for a, b, size in difflib.SequenceMatcher(None, base, mine, autojunk=False
                                              ).get_matching_blocks():
        for k in range(size + 1):
            to_orig.setdefault(a + k, b + k)
    hunks: list[list[int]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, base, edited, autojunk=False
                                                       ).get_opcodes():
        if tag == "equal":
            continue
        if tag == "delete" and any(not _comment_or_blank(x) for x in base[i1:i2]):
            while i2 > i1 and _comment_or_blank(base[i2 - 1]):
                i2 -= 1  # the comments below the item lead into what follows: kept
            indent = _indent(base[i1])
            while i1 > 0 and _comment(base[i1 - 1]) and _indent(base[i1 - 1]) == indent:
                i1 -= 1  # the comments just above the item were its own
        elif tag == "insert" and j2 > j1:
            i1 = i2 = _insertion_point(base, i1, _indent(edited[j1]))
        while i1 not in to_orig:  # widen to where base and original agree
            i1, j1 = i1 - 1, j1 - 1
        while i2 not in to_orig:
            i2, j2 = i2 + 1, j2 + 1
        if hunks and i1 <= hunks[-1][1]:  # touches the one before: one hunk
            hunks[-1][1], hunks[-1][3] = max(hunks[-1][1], i2), max(hunks[-1][3], j2)
        else:
            hunks.append([i1, i2, j1, j2])
    out: list[str] = []
    at = 0
    for i1, i2, j1, j2 in hunks:
        start, end = to_orig[i1], to_orig[i2]
        out.extend(mine[at:start])
        out.extend(edited[j1:j2])
        at = max(at, end)
    out.extend(mine[at:])
    text = "".join(out)
    if unended and at < len(mine):  # the last line untouched: still without its end
        text = text[:-1]
    return text


def _insertion_point(base: Sequence[str], at: int, indent: int) -> int:
    """Where lines indented by ``indent`` go that ruamel put at ``at``: before the comment
    lines that lead into the line that follows them (indented as it is), and, at the end
    of a nested block, before the blank lines that close it."""
    succ = next((_indent(x) for x in base[at:] if not _comment_or_blank(x)), 0)
    if indent > succ:  # the end of a block: keep to it, above the blank lines after it
        while at > 0 and (not base[at - 1].strip() or (
                _comment(base[at - 1]) and _indent(base[at - 1]) <= succ)):
            at -= 1
    elif indent == succ:  # before a sibling: above the comments that lead into it
        while at > 0 and _comment(base[at - 1]) and _indent(base[at - 1]) == indent:
            at -= 1
    return at


def _comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _comment_or_blank(line: str) -> bool:
    return not line.strip() or _comment(line)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


# ---------------------------------------------------------------- writing values


def keep_style(old: Any, new: str) -> Any:
    """``new`` written the way ``old`` was: in the same quotes, or plain when it was plain
    and stays text when read back (else in double quotes)."""
    for kind in QUOTED:
        if isinstance(old, kind):
            if kind in (LiteralScalarString, FoldedScalarString):
                # a block keeps its own chomping: `|` stays `|` when the text ends so
                return kind(new if new.endswith("\n") or not str(old).endswith("\n")
                            else new + "\n")
            return kind(new)
    if old is None or not isinstance(old, str) or not plain_is_text(new):
        return DoubleQuotedScalarString(new)
    return new


def filled(old: Any, new: str) -> Any:
    """As :func:`keep_style`, except that a new text, or one that was empty (a field the
    form added, waiting to be filled), is written plain when it can be."""
    if old is None or (isinstance(old, str) and not old and not isinstance(
            old, (LiteralScalarString, FoldedScalarString))):
        # (ruamel would keep the old quotes for a plain str set in their place)
        return PlainScalarString(new) if plain_is_text(new) else DoubleQuotedScalarString(new)
    return keep_style(old, new)


def plain_in_flow(text: str) -> bool:
    """Whether ``text`` may be written without quotes inside ``{...}`` or ``[...]``."""
    return plain_is_text(text) and not any(c in text for c in ",[]{}")


def flow_value(text: str) -> Any:
    """Text inside a one-line mapping or list: plain when it can be, else in double quotes."""
    return PlainScalarString(text) if plain_in_flow(text) else DoubleQuotedScalarString(text)


def plain_is_text(text: str) -> bool:
    """Whether ``text`` may be written without quotes and read back as the same text."""
    if not text or text != text.strip() or "\n" in text:
        return False
    if resolve_plain(text) != text:
        return False
    if text[0] in "!&*{}[]|>'\"%@`#,?-:" and text not in ("-",):
        return False
    return not (": " in text or " #" in text or text.endswith(":"))


def scalar(text: str) -> Any:
    """A value the person typed in a field, as YAML keeps it: a number stays a number
    (``7``, ``0.5``), ``true``/``false`` stay text unless the column or key takes them (the
    caller decides), anything else is text, quoted only when it must be."""
    value = resolve_plain(text) if text == text.strip() else text
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    return text if plain_is_text(text) else DoubleQuotedScalarString(text)


def insert(mapping: CommentedMap, key: str, value: Any, after: Sequence[str]) -> None:
    """Add ``key`` right after the first of ``after`` that is there, else first."""
    keys = list(mapping)
    pos = next((keys.index(k) + 1 for k in after if k in mapping), 0)
    mapping.insert(pos, key, value)


def rename(mapping: CommentedMap, old: str, new: str, value: Any) -> None:
    """Key ``old`` becomes ``new`` (with ``value``) at its place, with its comment."""
    pos = list(mapping).index(old)
    comment = mapping.ca.items.pop(old, None)
    del mapping[old]
    mapping.insert(pos, new, value)
    if comment is not None:
        mapping.ca.items[new] = comment


def flow_map(pairs: Sequence[tuple[Any, Any]]) -> CommentedMap:
    item = CommentedMap(pairs)
    item.fa.set_flow_style()
    return item


def flow_seq(items: Sequence[Any]) -> CommentedSeq:
    seq = CommentedSeq(items)
    seq.fa.set_flow_style()
    return seq


def plain(value: Any) -> Any:
    """Round-trip data as plain Python values (for JSON)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    if isinstance(value, bool) or value is None or isinstance(value, (int, float)):
        return value
    return str(value)


def flow_text(value: Any) -> str:
    """A value as one line of YAML, to show beside what the form cannot edit."""
    y = YAML(typ="safe", pure=True)
    y.default_flow_style = True
    y.width = 4096
    y.allow_unicode = True
    out = io.StringIO()
    try:
        y.dump(plain(value), out)
    except YAMLError:
        return str(value)
    return out.getvalue().strip().removesuffix("...").strip()
