"""World tables as the form's grids: a table's columns and rows, and the grid's edits —
add a table, a row, a column; change a cell; remove a row or a column; import a CSV file.

A table lives in one of two places, and is edited where it lives:

* **inline**, in a YAML file's ``world:`` (the suite's) or ``given.world:`` (a scenario's):
  a list of rows, each a mapping, written one row a line (``- {id: C-1, status: active}``)
  — :func:`inline_model` and :func:`edit_inline` work on the ruamel tree;
* **in a file** the YAML names (``cards: {file: cards.csv}``), a CSV file with a header row
  or a JSONL file of one JSON object a line — :func:`file_model` and :func:`edit_file` work
  on the file's text, and write back only the rows that changed (the others stay as they
  were, byte for byte, quotes and all).

Every cell is shown and typed as text. A value typed into a YAML or JSONL cell is kept as
the kind of value the cell held (a number stays a number when what is typed is one); a CSV
file holds text only, as Scenarist reads it. A new row gets the first unused number as its
``id`` (a row is known by its id); the person changes it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, PlainScalarString

from .yamltext import FormError, filled, flow_map, keep_style, plain_is_text, rename

ID = "id"
NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_\-]*$")  # a table's name, as the schemas say
MAX_CELLS = 200_000  # what one grid shows and edits

# Every edit of a grid, with the fields it takes (besides ``op`` and ``table``).
TABLE_OPS: dict[str, tuple[str, ...]] = {
    "add_table": (),
    "rename_table": ("name",),
    "remove_table": (),
    "add_column": ("column",),
    "remove_column": ("column",),
    "add_row": (),
    "remove_row": ("row",),
    "set_cell": ("row", "column", "value"),
    "import_csv": ("text",),
}


def cell_text(value: Any) -> str:
    """A cell as the grid shows it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    if isinstance(value, (Mapping, list)):
        return json.dumps(_plain(value), ensure_ascii=False)
    return str(value)


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value if value is None or isinstance(value, (bool, int, float)) else str(value)


def _columns(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    out: dict[str, None] = {}
    for r in rows:
        for k in r:
            out.setdefault(str(k), None)
    return list(out)


def _model(name: str, rows: Sequence[Mapping[str, Any]], **more: Any) -> dict[str, Any]:
    columns = _columns(rows)
    if len(columns) * len(rows) > MAX_CELLS:
        return {"name": name, "columns": columns, "rows": [], "ids": [], "editable": False,
                "note": f"This table has {len(rows):,} rows: too many to show here; edit "
                        "it in a spreadsheet.", **more}
    return {"name": name, "columns": columns,
            "rows": [[cell_text(r.get(c)) if c in r else "" for c in columns] for r in rows],
            "ids": [cell_text(r[ID]) if ID in r else "" for r in rows],
            "editable": True, "note": "", **more}


def table_names(tables: Any) -> list[str]:
    return [str(k) for k in tables] if isinstance(tables, Mapping) else []


# ---------------------------------------------------------------- inline tables


def inline_model(name: str, value: Any) -> dict[str, Any]:
    """The grid of one table of a ``world:`` mapping: inline rows, or the file it names
    (``file``: the path as written; the page opens it as its own file)."""
    if isinstance(value, Mapping) and "file" in value:
        return {"name": name, "file": str(value.get("file")), "columns": [], "rows": [],
                "ids": [], "editable": False, "note": ""}
    if not isinstance(value, list) or not all(isinstance(r, Mapping) for r in value):
        return {"name": name, "file": None, "columns": [], "rows": [], "ids": [],
                "editable": False, "note": "This table is written in a way the grid cannot "
                "show; change it in the YAML tab."}
    return _model(name, value, file=None)


def _new_id(rows: Sequence[Mapping[str, Any]]) -> str:
    taken = {cell_text(r.get(ID)) for r in rows}
    n = len(rows) + 1
    while str(n) in taken:
        n += 1
    return str(n)


def edit_inline(world: CommentedMap, edit: Mapping[str, Any]) -> None:
    """Make one grid edit on a ``world:`` mapping (its tables written inline)."""
    op = str(edit.get("op", "")).removeprefix("table_")
    name = _str(edit.get("table"), "table")
    if op == "add_table":
        _check_name(name, "table")
        if name in world:
            raise FormError(f"there is a table '{name}' already; choose another name")
        rows = CommentedSeq()
        rows.append(flow_map([(ID, "1")]))
        world[name] = rows
        return
    if name not in world:
        raise FormError(f"there is no table '{name}' here")
    if op == "rename_table":
        new = _str(edit.get("name"), "name")
        _check_name(new, "table")
        if new != name and new in world:
            raise FormError(f"there is a table '{new}' already; choose another name")
        rename(world, name, new, world[name])
        return
    if op == "remove_table":
        del world[name]
        return
    rows = world[name]
    if not isinstance(rows, CommentedSeq) or not all(isinstance(r, CommentedMap) for r in rows):
        raise FormError(f"the table '{name}' is not a list of rows here; change it in the "
                        "YAML tab")
    columns = _columns(rows)
    match op:
        case "add_column":
            column = _str(edit.get("column"), "column")
            _check_name(column, "column")
            if column in columns:
                raise FormError(f"the table '{name}' has a column '{column}' already")
            if not rows:
                rows.append(flow_map([(ID, "1")]))
            for r in rows:
                r[column] = keep_style(None, "")
        case "remove_column":
            column = _str(edit.get("column"), "column")
            if column not in columns:
                raise FormError(f"the table '{name}' has no column '{column}'")
            for r in rows:
                if column in r:
                    del r[column]
        case "add_row":
            cells = [(c, _new_id(rows) if c == ID else keep_style(None, "")) for c in columns]
            rows.append(flow_map(cells or [(ID, _new_id(rows))]))
        case "remove_row":
            del rows[_row(rows, edit.get("row"))]
        case "set_cell":
            r = rows[_row(rows, edit.get("row"))]
            column = _str(edit.get("column"), "column")
            if column not in columns:
                raise FormError(f"the table '{name}' has no column '{column}'")
            r[column] = typed(r.get(column), _str(edit.get("value"), "value"), yaml=True)
        case "import_csv":
            header, records = read_csv(_str(edit.get("text"), "text"))
            rows.clear()
            for rec in records:
                rows.append(flow_map([(h, text_value(None, v))
                                      for h, v in zip(header, rec, strict=False)]))
        case _:
            raise FormError(f"unknown table edit {op!r}")


def typed(old: Any, text: str, yaml: bool) -> Any:
    """What a cell typed as ``text`` holds: a number when the cell held a number (or
    nothing) and the text is one, true/false likewise, else text (in YAML: plain when it
    reads back as the same text, else in quotes — the old quotes when it had some)."""
    if text and text == text.strip():
        try:
            value = json.loads(text)
        except ValueError:
            value = None
        empty = old is None or old == ""
        if isinstance(value, bool) and (empty or isinstance(old, bool)):
            return value
        if isinstance(value, (int, float)) and not isinstance(value, bool) and (
                empty or (isinstance(old, (int, float)) and not isinstance(old, bool))):
            return value
    if not yaml:
        return text
    return text_value(old if isinstance(old, str) else None, text)


def text_value(old: str | None, text: str) -> Any:
    """Text as YAML writes it: in ``old``'s quotes, else plain when it reads back as the
    same text, else in double quotes."""
    if old is None or not plain_is_text(str(old)):  # its quotes were needed: choose afresh
        return PlainScalarString(text) if plain_is_text(text) else DoubleQuotedScalarString(text)
    return filled(old, text)


def _row(rows: Sequence[Any], index: Any) -> int:
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(rows):
        raise FormError(f"there is no row {index!r} here (there are {len(rows)})")
    return index


def _str(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise FormError(f"the form sent {value!r} where it should send the {what} as text")
    return value


def _check_name(name: str, what: str) -> None:
    if what == "table" and not NAME.match(name):
        raise FormError(f"'{name}' cannot name a table: start with a letter or _, then "
                        "letters, digits, _ and - (e.g. cards, refill_requests)")
    if what == "column" and (not name.strip() or name != name.strip()):
        raise FormError("a column needs a name, without spaces around it")


def read_csv(text: str) -> tuple[list[str], list[list[str]]]:
    """A CSV file's header and rows (the delimiter found by csv.Sniffer among , ; and
    tab; a spreadsheet's byte order mark dropped)."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        raise FormError("the CSV file is empty: it needs a header row with the column names")
    rows = [r for r in csv.reader(io.StringIO(text), _dialect(text)) if r]
    header = [h.strip() for h in rows[0]]
    if any(not h for h in header) or len(set(header)) != len(header):
        raise FormError("the CSV file's first row must name each column once "
                        f"(it is: {', '.join(header)})")
    return header, [r + [""] * (len(header) - len(r)) for r in rows[1:]]


# ---------------------------------------------------------------- tables in files


class _Records:
    """A CSV or JSONL text as records, each with the text it was read from (None for a
    record the grid changed or added: written anew)."""

    def __init__(self, text: str, kind: str) -> None:
        self.kind = kind
        self.eol = "\r\n" if "\r\n" in text else "\n"
        self.bom = text.startswith("\ufeff")
        body = text.removeprefix("\ufeff")
        self.header: list[str] = []
        self.head_text: str | None = None
        self.rows: list[dict[str, Any]] = []
        self.texts: list[str | None] = []
        self.trailing = ""
        if kind == "csv":
            self._read_csv(body)
        else:
            self._read_jsonl(body)

    def _read_csv(self, body: str) -> None:
        self.dialect = _dialect(body)
        lines = body.splitlines(keepends=True)
        reader = csv.reader(io.StringIO(body, newline=""), self.dialect)
        at = 0
        for record in reader:
            upto = reader.line_num
            raw = "".join(lines[at:upto])
            at = upto
            if not record:
                continue
            if self.head_text is None:
                self.header = [h.strip() for h in record]
                self.head_text = raw
                continue
            self.rows.append({h: (record[i] if i < len(record) else "")
                              for i, h in enumerate(self.header)})
            self.texts.append(raw)
        self.trailing = "".join(lines[at:])

    def _read_jsonl(self, body: str) -> None:
        for line in body.splitlines(keepends=True):
            if not line.strip():
                self.texts.append(line) if self.rows else None
                continue
            try:
                value = json.loads(line)
            except ValueError:
                raise FormError("this file has a line that is not JSON; fix it in a text "
                                "editor first (lint says which)") from None
            if not isinstance(value, dict):
                raise FormError("each line of a .jsonl table is one row, a JSON object")
            self.rows.append(value)
            self.texts.append(line)
        self.texts = [t for t in self.texts if t is not None]
        self.header = _columns(self.rows)

    def text(self) -> str:
        out: list[str] = []
        if self.kind == "csv":
            out.append(self.head_text if self.head_text is not None
                       else self._csv_line(self.header))
            for row, raw in zip(self.rows, self.texts, strict=True):
                out.append(raw if raw is not None else
                           self._csv_line([str(row.get(h, "")) for h in self.header]))
            if out and not out[-1].endswith(("\n", "\r")):
                out[-1] += self.eol
            out.append(self.trailing)
        else:
            for row, raw in zip(self.rows, self.texts, strict=True):
                line = raw if raw is not None else json.dumps(row, ensure_ascii=False) + self.eol
                if not line.endswith("\n"):
                    line += self.eol
                out.append(line)
        return ("\ufeff" if self.bom else "") + "".join(out)

    def _csv_line(self, values: Sequence[str]) -> str:
        buf = io.StringIO()
        csv.writer(buf, self.dialect, lineterminator=self.eol).writerow(values)
        return buf.getvalue()

    def touch_all(self) -> None:
        self.texts = [None] * len(self.rows)


class _Spreadsheet(csv.excel):
    """A spreadsheet's CSV: quotes doubled inside quoted cells; the delimiter found."""


def _dialect(text: str) -> type[csv.Dialect]:
    """csv.excel with the delimiter of the header row (``,``, ``;`` or tab), as
    csv.Sniffer finds it."""
    try:
        found = csv.Sniffer().sniff(text.split("\n", 1)[0], delimiters=",;\t").delimiter
    except csv.Error:
        found = ","
    return type("_Found", (_Spreadsheet,), {"delimiter": found})


def file_model(name: str, path: str, text: str) -> dict[str, Any]:
    """The grid of a CSV or JSONL file."""
    recs = _Records(text, _kind_of(path))
    model = _model(name, recs.rows, file=path)
    if recs.kind == "csv":
        model["columns"] = recs.header
        model["rows"] = [[str(r.get(h, "")) for h in recs.header] for r in recs.rows] \
            if model["editable"] else []
    return model


def _kind_of(path: str) -> str:
    return "csv" if path.lower().endswith(".csv") else "jsonl"


def edit_file(path: str, text: str, edits: Sequence[Mapping[str, Any]]) -> str:
    """A CSV or JSONL file's text with grid edits made; rows not edited stay as written."""
    recs = _Records(text, _kind_of(path))
    for edit in edits:
        _edit_records(recs, edit)
    return recs.text()


def _edit_records(recs: _Records, edit: Mapping[str, Any]) -> None:
    op = str(edit.get("op", "")).removeprefix("table_")
    match op:
        case "add_column":
            column = _str(edit.get("column"), "column")
            _check_name(column, "column")
            if column in recs.header:
                raise FormError(f"this table has a column '{column}' already")
            recs.header.append(column)
            recs.head_text = None
            for r in recs.rows:
                r[column] = ""
            recs.touch_all()
        case "remove_column":
            column = _str(edit.get("column"), "column")
            if column not in recs.header:
                raise FormError(f"this table has no column '{column}'")
            recs.header.remove(column)
            recs.head_text = None
            for r in recs.rows:
                r.pop(column, None)
            recs.touch_all()
        case "add_row":
            row = {h: (_new_id(recs.rows) if h == ID else "") for h in recs.header} \
                or {ID: _new_id(recs.rows)}
            if ID not in recs.header:
                recs.header.insert(0, ID)
                recs.head_text = None
                recs.touch_all()
            recs.rows.append(row)
            recs.texts.append(None)
        case "remove_row":
            i = _row(recs.rows, edit.get("row"))
            del recs.rows[i]
            del recs.texts[i]
        case "set_cell":
            i = _row(recs.rows, edit.get("row"))
            column = _str(edit.get("column"), "column")
            if column not in recs.header:
                raise FormError(f"this table has no column '{column}'")
            old = recs.rows[i].get(column)
            recs.rows[i][column] = typed(old, _str(edit.get("value"), "value"), yaml=False) \
                if recs.kind == "jsonl" else _str(edit.get("value"), "value")
            recs.texts[i] = None
        case "import_csv":
            header, records = read_csv(_str(edit.get("text"), "text"))
            recs.header = header
            recs.head_text = None
            recs.rows = [dict(zip(header, r, strict=False)) for r in records]
            recs.texts = [None] * len(recs.rows)
            recs.trailing = ""
        case _:
            raise FormError(f"the table in a file takes no edit {op!r} here")
