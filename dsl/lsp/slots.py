"""What belongs at a place of a scenario or of ``scenarist.yaml``: a check, a tool, a
target, a world table, a column, an expression, or a key or value the schema describes.
Completion offers the names of that kind; hover explains the name found there.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from ..compiler.vocabulary import ITEM, TOOL_CHECKS
from .place import EXPR_KEYS, Place, Step

SlotKind = Literal["check", "check_key", "param", "tool", "library_tool", "target", "table",
                   "row", "column", "expr", "key", "value", "none"]
# checks whose parameter's mapping form names tools under these keys
_TOOL_KEYS = frozenset({"name", "tools"})
_TABLE_KEYS = frozenset({"where", "set", "row"})  # a table tool's mappings of columns
_CALL_IN_EXPR = re.compile(r"""\b(?:called|call)\(\s*['"][\w-]*$""")


@dataclass(frozen=True, slots=True)
class Slot:
    """The kind of name at a place. ``check``: the check whose parameter it is;
    ``table``: the world table whose rows or columns it names (when known);
    ``schema_path``: the place in the file's schema."""

    kind: SlotKind
    check: str | None = None
    table: str | None = None
    schema_path: tuple[Step, ...] = ()


def slot_of(place: Place, suite_file: bool, lines: list[str], line: int) -> Slot:
    """The :class:`Slot` of ``place`` (on 0-based ``line`` of ``lines``) in a scenario, or
    in ``scenarist.yaml`` when ``suite_file``."""
    path, kind, key = place.path, place.kind, place.key
    full = place.value_path
    # expressions: expect: "…", {expr: "…"}, and the suite's named checks
    if kind == "value" and (key in EXPR_KEYS or (suite_file and path == ("checks",))):
        if _CALL_IN_EXPR.search(place.before):
            return Slot("tool")
        return Slot("expr")
    then = _then_index(path)
    if then is not None:
        rest = path[then + 1:]
        if kind == "item" and not rest:
            return Slot("check")
        if rest == (ITEM,) and kind == "key":
            return Slot("check_key")
        if len(rest) >= 2 and rest[0] == ITEM and isinstance(rest[1], str):
            check = rest[1]
            inner = rest[2:]
            if check == "world":
                return _world_check(inner, kind)
            if check in TOOL_CHECKS:
                if kind == "value" and not inner and key == check:
                    return Slot("tool")
                if kind == "item" and (not inner or inner in (("tools",),)):
                    return Slot("tool")
                if kind == "value" and key in _TOOL_KEYS and len(inner) <= 1:
                    return Slot("tool")
            if kind == "key" and not inner:
                return Slot("param", check=check)
        if rest == (ITEM,) and kind == "value" and key is not None:
            if key == "world":
                return Slot("table")
            if key in TOOL_CHECKS:
                return Slot("tool")
    # the scenario's tools: library tools by name; a table tool's table and columns
    if not suite_file and kind == "item" and path == ("given", "tools"):
        return Slot("library_tool")
    tool = _tool_path(path, suite_file)
    if tool is not None:
        inner = path[tool:]
        if kind == "value" and key == "table" and not inner:
            return Slot("table")
        if inner and inner[0] in _TABLE_KEYS and kind == "key" and len(inner) == 1:
            return Slot("column", table=_sibling(lines, line, "table"))
        if inner == ("fields",) and kind == "item":
            return Slot("column", table=_sibling(lines, line, "table"))
    if kind == "value" and key in ("confirm", "cancel") and len(path) == 2 \
            and path[0] == "when":
        return Slot("tool")
    # targets
    if (kind == "value" and key == "target") or (not suite_file and (
            (kind == "value" and key == "targets" and not path)
            or (kind == "item" and path == ("targets",)))):
        return Slot("target")
    # world tables written in the file: their columns
    world = ("world",) if suite_file else ("given", "world")
    if kind == "key" and len(path) == len(world) + 2 and path[:len(world)] == world \
            and path[-1] == ITEM and isinstance(path[len(world)], str):
        return Slot("column", table=str(path[len(world)]))
    match kind:
        case "key":
            return Slot("key", schema_path=path)
        case "item":  # the first key of a mapping in the list (a turn, a tool)
            return Slot("key", schema_path=(*path, ITEM))
        case _:
            return Slot("value", schema_path=full)


def _then_index(path: tuple[Step, ...]) -> int | None:
    """Where the innermost ``then`` list is on the path (a scenario's, or a turn's)."""
    for i in range(len(path) - 1, -1, -1):
        if path[i] == "then" and (i == 0 or path[i - 1] == ITEM):
            return i
    return None


def _world_check(inner: tuple[Step, ...], kind: str) -> Slot:
    """``- world: {TABLE: {ID: {COLUMN: value}}}``."""
    if kind == "key":
        match len(inner):
            case 0:
                return Slot("table")
            case 1:
                return Slot("row", table=str(inner[0]))
            case 2:
                return Slot("column", table=str(inner[0]))
    return Slot("none")


def _tool_path(path: tuple[Step, ...], suite_file: bool) -> int | None:
    """Where a tool's own mapping ends on ``path`` (a scenario's inline tool
    ``given.tools[i]``, or the suite's ``tools.NAME``), or None."""
    if suite_file and len(path) >= 2 and path[0] == "tools":
        return 2
    if not suite_file and len(path) >= 3 and path[:3] == ("given", "tools", ITEM):
        return 3
    return None


_TABLE = re.compile(r"^\s*(?:-\s+)?table:\s*['\"]?([\w-]+)")


def _sibling(lines: list[str], line: int, key: str) -> str | None:
    """The table a tool acts on, read from its ``table:`` line near ``line``: the tool's
    mapping is the block around it, above the line's own indentation."""
    here = lines[line] if line < len(lines) else ""
    own = len(here) - len(here.lstrip())
    # the line of the mapping that holds the cursor (where:, set:, row: or fields:)
    start = line
    for i in range(line, -1, -1):
        text = lines[i]
        if text.strip() and (len(text) - len(text.lstrip()) < own or i == line) \
                and re.match(r"^\s*(?:-\s+)?(where|set|row|fields)\s*:", text):
            start = i
            break
    holder = lines[start]
    indent = len(holder) - len(holder.lstrip(" -")) if holder.lstrip().startswith("-") \
        else len(holder) - len(holder.lstrip())
    for direction in (-1, 1):
        i = start
        while 0 <= i < len(lines):
            text = lines[i]
            if text.strip() and not text.strip().startswith("#"):
                lead = len(text) - len(text.lstrip())
                dashed = text.lstrip().startswith("- ")
                key_col = lead + 2 if dashed else lead
                if key_col < indent or (dashed and key_col == indent and i != start
                                        and direction == 1):
                    break
                if key_col == indent:
                    m = _TABLE.match(text)
                    if m:
                        return m.group(1)
                if dashed and key_col == indent:
                    break
            i += direction
    return None
