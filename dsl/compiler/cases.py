"""Cases: a scenario written once and run once per row of data.

A scenario file may have ``cases:`` — a list of mappings — or ``cases_file:`` — a ``.csv``
file with a header row, or a ``.jsonl`` file of one JSON object a line, written relative
to the scenario's folder and inside the suite's. Each case becomes a scenario of its own,
with the id ``ID[CASE]`` (CASE: the case's ``id`` value, else its 1-based number). This
stage sits between load and compile, and is called by :func:`dsl.compiler.compile.compile_file`::

    Document ──read_table──▶ Table: the cases, each with its place (the inline mapping,
                             the JSONL line, the CSV row and each of its cells)
             ──plan──▶ Expansion: every template string of the scenario, the names it reads
             ──instance──▶ one Instance per case: the scenario's data with each template
                           rendered over the case's values, as a CaseDocument — the
                           template's positions, the case's for what the case overrides

Every string of ``given``, ``when`` (turns included), ``then`` (check parameters
included) and ``description`` may read a case's values as ``{{ name }}``: it is rendered
here, in the sandbox of :mod:`dsl.compiler.sandbox`, strictly (a name the case lacks is an error,
E227, reported at the case and at the template). The strings a fake tool answers with
(``returns``, ``error`` and those of ``answers``) are templates over each call already:
they are left for the call, which reads the case's values beside ``args``, ``now`` and
``at``. A case may override ``runs``, ``min_pass`` and ``tags``.

Problems in the data are reported where the author fixes them: a file that is missing or
outside the suite (E228), a JSONL line that is not an object or a CSV row with the wrong
number of fields (E229, at its line and column), two cases with one id (E230), a column no
template uses (W407, at the header).
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import msgspec

from ..errors import Collector, Diagnostic, Span, quoted_list
from ..model import CaseInfo
from ..source.load import DataPath, Document, decode_text, display_path, read_bytes
from ..source.validate import shown_value
from .templates import CaseTemplate, check_template, is_template, line_offset

MAX_CASES = 10_000  # cases of one scenario file
MAX_CASES_FILE_BYTES = 16 * 2**20
CASE_KEYS = ("cases", "cases_file")  # the scenario's keys that hold its cases
OVERRIDES = ("runs", "min_pass", "tags")  # what a case may set for itself
SPECIAL = ("id", *OVERRIDES)
# names a tool's answer reads from the call itself; in those templates they win
CALL_NAMES = frozenset({"args", "now", "at"})
MAX_RUNS = 10_000  # as the scenario schema's runs

Source = Literal["inline", "csv", "jsonl"]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_TAG_SPLIT = re.compile(r"[\s,]+")


# ---- the table of cases -------------------------------------------------------------------


class Case(msgspec.Struct, frozen=True):
    """One case: its 1-based number, its values, what it overrides (``runs``,
    ``min_pass``, ``tags``, already read), and where it is written."""

    number: int
    values: dict[str, Any]
    span: Span
    overrides: Mapping[str, Any] = msgspec.field(default_factory=dict)
    cells: tuple[Span, ...] = ()  # a CSV row: each value's place, in the header's order
    last_line: int = 0  # a CSV row: its last line (a quoted value may hold line breaks)

    @property
    def id(self) -> str:
        given = self.values.get("id")
        return str(self.number) if given is None or given == "" else str(given).strip()

    @property
    def named(self) -> str:
        """How a message names it: ``the case 'es'`` or ``case 3``."""
        given = self.values.get("id")
        return f"case {self.number}" if given is None or given == "" else \
            f"the case '{self.id}'"

    def info(self) -> CaseInfo:
        return CaseInfo(self.id, self.number, self.values, self.span)


class Table(msgspec.Struct, frozen=True):
    """A scenario's cases and where they come from. ``columns``: each name the cases use,
    at the place it is first written (the header's cell; the first case that has it)."""

    source: Source
    file: str  # as messages name it: the scenario file for inline cases
    cases: tuple[Case, ...]
    columns: Mapping[str, Span]
    text: str = ""  # a cases file's text (for the lines beside a diagnostic)
    header: tuple[str, ...] = ()  # a CSV file's header
    doc: Document | None = None  # inline: the scenario (the places of the values)
    starts: tuple[int, ...] = ()  # where each line of ``text`` starts (line 1 first)

    def line(self, n: int) -> str:
        """Line ``n`` (1-based) of a cases file."""
        starts = self.starts or _starts(self.text)
        if not 1 <= n <= len(starts):
            return ""
        end = starts[n] - 1 if n < len(starts) else len(self.text)
        return self.text[starts[n - 1]:end].rstrip("\r")

    def cell(self, case: Case, key: str) -> Span:
        """Where ``key``'s value of ``case`` is written (the case itself when it has none)."""
        if self.source == "csv":
            if key not in self.header:
                return case.span
            cells = case.cells or self._cells(case)
            return cells[self.header.index(key)] if cells else case.span
        if self.source == "inline" and self.doc is not None:
            path: DataPath = ("cases", case.number - 1, key)
            return self.doc.span(path) if key in case.values else case.span
        line = self.line(case.span.line)
        at = line.find(json.dumps(key, ensure_ascii=False))
        return Span(self.file, case.span.line, at + 1) if at >= 0 else case.span

    def _cells(self, case: Case) -> tuple[Span, ...]:
        """A CSV row's fields' places, found when one is asked for."""
        last = max(case.last_line, case.span.line)
        text = "\n".join(self.line(n) for n in range(case.span.line, last + 1))
        rows = csv_rows(text, self.file, Collector(), _delimiter(self.line(1)),
                        case.span.line)
        if not rows or len(rows[0][1]) != len(self.header):
            return ()
        return tuple(Span(self.file, ln, c) for _, ln, c in rows[0][1])


def _starts(text: str) -> tuple[int, ...]:
    return (0, *(m.end() for m in re.finditer("\n", text)))


def case_source(data: Mapping[str, Any]) -> str | None:
    """The key that gives a scenario its cases, or None when it has none."""
    return next((k for k in CASE_KEYS if k in data), None)


def read_table(doc: Document, root: Path, diags: Collector) -> Table | None:
    """The cases of a validated scenario ``doc`` that has ``cases`` or ``cases_file``
    (``root``: the suite's folder, which a cases file must not leave). None when they
    cannot be read; every problem is in ``diags``."""
    data: dict[str, Any] = doc.data
    if "cases" in data and "cases_file" in data:
        diags.error(doc.key_span(("cases_file",)), "S107",
                    "use either cases or cases_file, not both",
                    "cases lists the cases in the scenario; cases_file names a .csv or .jsonl "
                    "file that holds them")
        return None
    table = (_inline(doc, data["cases"]) if "cases" in data
             else _from_file(doc, str(data["cases_file"]), root, diags))
    if table is None:
        return None
    if len(table.cases) > MAX_CASES:
        where = ("cases_file",) if "cases_file" in data else ("cases",)
        diags.error(doc.span(where), "E228",
                    f"{table.file} holds {len(table.cases):,} cases; one scenario file may "
                    f"have at most {MAX_CASES:,}", "split the cases into several scenario files")
        return None
    if not table.cases:
        diags.error(doc.span(("cases_file",)), "E228",
                    f"the cases file '{data['cases_file']}' holds no case"
                    + (" (only its header row)" if table.source == "csv" else ""),
                    "add one row (one line) per case")
        return None
    return _checked(table, diags)


def _inline(doc: Document, items: list[dict[str, Any]]) -> Table:
    cases = []
    columns: dict[str, Span] = {}
    for i, values in enumerate(items):
        for key in values:
            if key not in columns:
                columns[key] = doc.key_span(("cases", i, key))
        cases.append(Case(i + 1, dict(values), doc.span(("cases", i))))
    return Table("inline", doc.path, tuple(cases), columns, doc=doc)


def _from_file(doc: Document, name: str, root: Path, diags: Collector) -> Table | None:
    at = doc.span(("cases_file",))
    suffix = Path(name).suffix.lower()
    if Path(name).is_absolute():
        diags.error(at, "E228", f"the cases file '{name}' is an absolute path",
                    "write it relative to this scenario's folder, e.g. cases/hours.csv")
        return None
    if suffix not in (".csv", ".jsonl"):
        diags.error(at, "E228", f"the cases file '{name}' is neither .csv nor .jsonl",
                    "save the spreadsheet as CSV (CSV UTF-8), or write one JSON object a line "
                    "in a .jsonl file")
        return None
    path = (Path(doc.path).parent / name).resolve()
    suite = root.resolve()
    if path != suite and suite not in path.parents:
        diags.error(at, "E228", f"the cases file '{name}' is outside the suite's folder",
                    "keep the cases file in the suite's folder, beside the scenario or below "
                    "it")
        return None
    if not path.exists():
        diags.error(at, "E228", f"the cases file '{name}' does not exist (looked for "
                                f"{display_path(path)})",
                    "cases_file is relative to this scenario's folder; check the name")
        return None
    return read_table_file(path, MAX_CASES_FILE_BYTES, "split the cases into several files",
                           diags)


def read_table_file(path: Path, limit: int, split_hint: str, diags: Collector
                    ) -> Table | None:
    """A CSV or JSONL file (by its suffix) of at most ``limit`` bytes, read and decoded
    with the rules every data file follows (cases files, world tables); None when it
    cannot be, with the diagnostics in ``diags``."""
    shown = display_path(path)
    raw = read_bytes(path, shown, limit, split_hint)
    text = decode_text(raw, shown) if isinstance(raw, bytes) else raw
    if isinstance(text, Diagnostic):
        diags.extend([text])
        return None
    if path.suffix.lower() == ".csv":
        return _csv(text, shown, diags)
    return _jsonl(text, shown, diags)


def _jsonl(text: str, name: str, diags: Collector) -> Table | None:
    cases: list[Case] = []
    columns: dict[str, Span] = {}
    ok = True
    row = 0
    for n, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        stripped = line.lstrip()
        if not stripped:
            continue
        row += 1
        col = len(line) - len(stripped) + 1
        try:
            values = json.loads(line)
        except json.JSONDecodeError as exc:
            diags.error(Span(name, n, exc.colno), "E229",
                        f"line {n} is not JSON: {exc.msg}",
                        'each line of a .jsonl file is one case, a JSON object: {"question": '
                        '"...", "expected": "..."}')
            ok = False
            continue
        except RecursionError:
            diags.error(Span(name, n, col), "E229", f"line {n} is nested too deeply")
            ok = False
            continue
        except ValueError:  # Python reads no integer of more than sys.int_max_str_digits
            digits = max(re.findall(r"[0-9]+", line), key=len)
            diags.error(Span(name, n, line.find(digits) + 1), "E229",
                        f"line {n} holds a number of {len(digits):,} digits; Scenarist reads "
                        f"numbers of at most {sys.get_int_max_str_digits():,} digits",
                        'write it as text, in quotes: "1234…"')
            ok = False
            continue
        if "\\u" in line and (escape := _lone_surrogate(line, values)):
            at, text = escape
            diags.error(Span(name, n, at + 1), "E229",
                        f"line {n} holds {text}, half of a surrogate pair, which is not a "
                        "character",
                        "write the character itself, or both halves of its pair "
                        "(\\ud83d\\ude00 for 😀)")
            ok = False
            continue
        if not isinstance(values, dict):
            diags.error(Span(name, n, col), "E229",
                        f"line {n} is {_json_kind(values)}, not a JSON object",
                        'each line of a .jsonl file is one case, a JSON object: {"question": '
                        '"...", "expected": "..."}')
            ok = False
            continue
        span = Span(name, n, col)
        for key in values:
            if key not in columns:
                at = line.find(json.dumps(key, ensure_ascii=False))
                columns[key] = Span(name, n, at + 1) if at >= 0 else span
        cases.append(Case(row, values, span))
    if not ok and not cases:
        return None  # every line was reported
    return Table("jsonl", name, tuple(cases), columns, text, starts=_starts(text))


# A JSON escape of a surrogate, with the low half that may follow a high one.
_SURROGATE = re.compile(r"\\u([dD][89a-fA-F][0-9a-fA-F]{2})(\\u[dD][c-fC-F][0-9a-fA-F]{2})?")


def _lone_surrogate(line: str, values: Any) -> tuple[int, str] | None:
    """Where a JSON line's values hold half a surrogate pair (``"\\ud800"``), which no
    UTF-8 file, request or result can hold, and its escape; None when they hold none."""
    try:
        json.dumps(values, ensure_ascii=False).encode("utf-8")
        return None
    except UnicodeEncodeError:
        pass
    for m in _SURROGATE.finditer(line):
        if not (m.group(2) and m.group(1)[1].lower() in "89ab"):  # not a high + low pair
            return m.start(), f"the escape {m.group(0)[:6]}"
    return 0, "an escape"  # one the pattern cannot see (after an escaped backslash)


def _json_kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a text"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true/false"
    return "a number"


# ---- CSV, with the place of every field ---------------------------------------------------

Field = tuple[str, int, int]  # value, line, column


def _delimiter(text: str) -> str:
    """The header's separator: a comma, or what spreadsheets in many languages write — a
    semicolon — or a tab, whichever the first line holds most of (outside quotes)."""
    first = text.split("\n", 1)[0]
    outside = "".join(first.split('"')[::2])
    counts = {d: outside.count(d) for d in (",", ";", "\t")}
    best = max(counts, key=lambda d: counts[d])
    return best if counts[best] else ","


def csv_rows(text: str, name: str, diags: Collector, delim: str | None = None,
             first_line: int = 1) -> list[tuple[int, list[Field]]] | None:
    """Every row of a CSV text (RFC 4180: fields in double quotes may hold the separator,
    line breaks and doubled quotes) with each field's line and column; empty lines and rows
    of empty fields are left out, and every value loses the spaces around it. This is
    where a field's place is found (the csv module reads the rows, faster, when nothing
    needs a place)."""
    delim = delim or _delimiter(text)
    stop = re.compile(f"[{re.escape(delim)}\r\n]")
    rows: list[tuple[int, list[Field]]] = []
    i, n, line, col = 0, len(text), first_line, 1
    while i < n:
        row_line = line
        fields: list[Field] = []
        while True:
            f_line, f_col = line, col
            if i < n and text[i] == '"':
                start = i
                parts: list[str] = []
                i += 1
                while True:
                    q = text.find('"', i)
                    if q < 0:
                        diags.error(Span(name, f_line, f_col), "E229",
                                    "the quote that opens this field is never closed",
                                    'close it with a second ", and write a quote inside a '
                                    'quoted value twice: ""')
                        return None
                    parts.append(text[i:q])
                    if q + 1 < n and text[q + 1] == '"':
                        parts.append('"')
                        i = q + 2
                        continue
                    i = q + 1
                    break
                m = stop.search(text, i)
                end = m.start() if m else n
                parts.append(text[i:end])  # after the closing quote: kept, as spreadsheets do
                i = end
                seg = text[start:i]
                breaks = seg.count("\n")
                if breaks:
                    line += breaks
                    col = len(seg) - seg.rfind("\n")
                else:
                    col += len(seg)
                value = "".join(parts).replace("\r\n", "\n")
                lead = len(value) - len(value.lstrip())
                value = value.strip()
                f_col += lead
            else:
                m = stop.search(text, i)
                end = m.start() if m else n
                raw = text[i:end]
                lead = len(raw) - len(raw.lstrip())
                value = raw.strip()
                f_col += lead
                col += end - i
                i = end
            fields.append((value, f_line, f_col))
            if i < n and text[i] == delim:
                i += 1
                col += 1
                continue
            if i < n and text[i] == "\r":
                i += 1
            if i < n and text[i] == "\n":
                i += 1
            line += 1
            col = 1
            break
        if any(v for v, _, _ in fields):
            rows.append((row_line, fields))
    return rows


def _csv(text: str, name: str, diags: Collector) -> Table | None:
    """A CSV cases file: read by the csv module; when something is wrong with it, read
    again field by field, to say where."""
    delim = _delimiter(text)
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delim, strict=True)
    header: list[str] | None = None
    cases: list[Case] = []
    try:
        start = 1
        for row in reader:
            end = reader.line_num
            values = [v.strip() for v in row]
            if any(values):
                if header is None:
                    header = values
                    if not all(header) or len(set(header)) != len(header):
                        break
                elif len(values) != len(header):
                    break
                else:
                    cases.append(Case(len(cases) + 1, dict(zip(header, values, strict=True)),
                                      Span(name, start, 1), last_line=end))  # no row is left out
            start = end + 1
        else:
            if header is not None:
                columns = {h: Span(name, 1, 1) for h in header}
                table = Table("csv", name, tuple(cases), columns, text, tuple(header),
                              starts=_starts(text))
                return msgspec.structs.replace(table, columns=_header_places(table, delim))
    except csv.Error:
        pass
    return _csv_located(text, name, diags, delim)


def _header_places(table: Table, delim: str) -> dict[str, Span]:
    rows = csv_rows(table.line(1), table.file, Collector(), delim) or []
    places = {v: Span(table.file, ln, c) for v, ln, c in rows[0][1]} if rows else {}
    return {h: places.get(h, Span(table.file, 1, 1)) for h in table.header}


def _csv_located(text: str, name: str, diags: Collector, delim: str) -> Table | None:
    rows = csv_rows(text, name, diags, delim)
    if rows is None:
        return None
    if not rows:
        diags.error(Span(name, 1, 1), "E229", "the file is empty; a CSV cases file starts "
                                              "with a header row",
                    "write the names of the columns on the first line: question,expected")
        return None
    (_, head), body = rows[0], rows[1:]
    header = tuple(v for v, _, _ in head)
    columns: dict[str, Span] = {}
    ok = True
    for k, (v, line, col) in enumerate(head, 1):
        if not v:
            diags.error(Span(name, line, col), "E229", f"column {k} of the header has no name",
                        "name every column on the first line, or delete the empty column")
            ok = False
        elif v in columns:
            first = columns[v]
            diags.error(Span(name, line, col), "E229",
                        f"the header names '{v}' twice (first at column {first.col})",
                        "give each column its own name")
            ok = False
        else:
            columns[v] = Span(name, line, col)
    if not ok:
        return None  # without a header, no row can be read
    cases: list[Case] = []
    for row, (row_line, fields) in enumerate(body, 1):
        if len(fields) != len(header):
            where = fields[len(header)] if len(fields) > len(header) else fields[-1]
            at = Span(name, where[1], where[2] if len(fields) > len(header)
                      else where[2] + len(where[0]))
            diags.error(at, "E229",
                        f"the row on line {row_line} has {len(fields)} field"
                        f"{'s' if len(fields) != 1 else ''}, but the header has "
                        f"{len(header)} ({quoted_list(header, 'and')})",
                        'a value that holds a comma goes in double quotes: "Hola, ¿cómo '
                        'estás?"')
            continue  # reported; the other rows are still cases
        values = {h: v for h, (v, _, _) in zip(header, fields, strict=True)}
        cases.append(Case(row, values, Span(name, row_line, 1),
                          cells=tuple(Span(name, ln, c) for _, ln, c in fields),
                          last_line=fields[-1][1]))
    if not cases:
        return None
    return Table("csv", name, tuple(cases), columns, text, header, starts=_starts(text))


# ---- what each case is --------------------------------------------------------------------


def _checked(table: Table, diags: Collector) -> Table | None:
    """The table with each case's overrides read and its id checked and unique. A case
    with a problem is reported and left out (the others are still checked); None when no
    case is left."""
    seen: dict[str, Case] = {}
    cases = []
    for case in table.cases:
        overrides: dict[str, Any] = {}
        ok = True
        for key in OVERRIDES:
            value = case.values.get(key)
            if value is None or value == "":
                continue
            read = _override(key, value)
            if isinstance(read, str):
                diags.error(table.cell(case, key), "E229",
                            f"{key} of {case.named} {read}; got {shown_value(value)}")
                ok = False
            else:
                overrides[key] = read
        given = case.values.get("id")
        if given is not None and given != "":
            problem = _bad_id(given, case)
            if problem:
                diags.error(table.cell(case, "id"), "E229", problem,
                            "an id is a short name: letters, digits, '_', '-' and '.'")
                continue
        first = seen.get(case.id)
        if first is not None:
            diags.error(table.cell(case, "id") if given not in (None, "") else case.span,
                        "E230",
                        f"the case id '{case.id}' is already used by the case at "
                        f"{first.span.file}:{first.span.line}",
                        "give each case its own id, or leave id out: cases are then numbered "
                        "1, 2, 3, …")
            continue
        seen[case.id] = case
        if ok:
            cases.append(Case(case.number, case.values, case.span, overrides, case.cells,
                              case.last_line))
    if not cases:
        return None
    return Table(table.source, table.file, tuple(cases), table.columns, table.text,
                 table.header, table.doc, table.starts)


def _override(key: str, value: Any) -> Any:
    """A case's runs, min_pass or tags, read — or what is wrong with it, in words."""
    if key == "tags":
        if isinstance(value, str):
            tags = [t for t in _TAG_SPLIT.split(value) if t]
        elif isinstance(value, list) and all(isinstance(t, str) and t for t in value):
            tags = list(value)
        else:
            return "must be text (tags separated by spaces or commas) or a list of texts"
        return list(dict.fromkeys(tags))
    low = 1 if key == "runs" else 0
    number = value
    if isinstance(value, str) and value.strip().isdecimal() and len(value.strip()) <= 12:
        number = int(value.strip())
    if isinstance(number, bool) or not isinstance(number, int) or number < low \
            or number > MAX_RUNS:
        return f"must be a whole number from {low} to {MAX_RUNS:,}"
    return number


def _bad_id(value: Any, case: Case) -> str:
    """What is wrong with a case's id, in words (empty when nothing is)."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        return f"the id of case {case.number} must be text or a whole number; got " \
               f"{shown_value(value)}"
    text = str(value).strip()
    if not text:
        return f"the id of case {case.number} is empty"
    if any(c in text for c in "[]") or any(ord(c) < 32 for c in text):
        return f"the case id '{text}' cannot hold '[', ']' or a line break"
    return ""


# ---- the scenario's templates -------------------------------------------------------------


class Template(msgspec.Struct, frozen=True):
    """A string of the scenario that reads the case's values. ``call``: a string a fake
    tool answers with — rendered at each call (the case's values beside the call's own),
    not here."""

    path: DataPath
    source: str
    names: frozenset[str]
    call: bool
    renderer: CaseTemplate | None  # None for a call's template

    def offset(self, name: str) -> int:
        """Where ``name`` is first read in the source (for the caret)."""
        m = re.search(rf"\b{re.escape(name)}\b", self.source)
        if m is None:
            return 0
        opener = self.source.rfind("{", 0, m.start())
        return opener - 1 if opener > 0 and self.source[opener - 1] == "{" else m.start()


class Expansion(msgspec.Struct, frozen=True):
    """What every case of a scenario shares: its data without the cases, its templates,
    the paths that lead to the templates rendered here (``touched``: compile shares what
    lies elsewhere between cases) and to those a fake tool renders at each call
    (``bound``: compile shares them too, bound to each case's values), and the lines the
    templates span in the file."""

    doc: Document
    table: Table
    base: dict[str, Any]
    templates: tuple[Template, ...]
    touched: frozenset[DataPath]
    bound: frozenset[DataPath]
    # where each template's string is: its first line and column, and its last line
    places: tuple[tuple[int, int, int], ...]

    def in_template(self, span: Span) -> bool:
        """Is ``span`` inside one of the template strings (so what it says may come from a
        case's value), rather than beside one on its line (a key, another value)?"""
        return span.file == self.doc.path and any(
            (line, col) <= (span.line, span.col) and span.line <= last
            for line, col, last in self.places)

    @property
    def names(self) -> frozenset[str]:
        """Every name the templates read."""
        return frozenset(n for t in self.templates for n in t.names)


def _is_call_string(path: DataPath) -> bool:
    """A string a fake tool of ``given.tools`` answers with (returns, error, answers'
    returns and error; a table tool's where, set and row): a template over each call."""
    if len(path) < 4 or path[:2] != ("given", "tools"):
        return False
    rest = path[3:]
    if rest[0] in ("returns", "error", "where", "set", "row", "append", "require", "effects"):
        return True
    return len(rest) >= 3 and rest[0] == "answers" and rest[2] in ("returns", "error")


def _strings(data: Any, path: DataPath, out: list[tuple[DataPath, str]]) -> None:
    if isinstance(data, str):
        if is_template(data):
            out.append((path, data))
    elif isinstance(data, dict):
        for k, v in data.items():
            _strings(v, (*path, k), out)
    elif isinstance(data, list):
        for i, v in enumerate(data):
            _strings(v, (*path, i), out)


# the scenario's keys whose strings may be templates over a case's values
TEMPLATED_KEYS = ("id", "description", "tags", "targets", "given", "when", "then", "runs",
                  "min_pass", "min_pass_rate", "max_steps")


def template_paths(data: Mapping[str, Any]) -> set[DataPath]:
    """The paths of the scenario's strings that are templates."""
    found: list[tuple[DataPath, str]] = []
    for key in TEMPLATED_KEYS:
        if key in data:
            _strings(data[key], (key,), found)
    return {path for path, _ in found}


def plan_templates(doc: Document, table: Table, diags: Collector) -> Expansion | None:
    """The templates of a scenario with cases; None when one of them does not compile
    (E208, at its place)."""
    data: dict[str, Any] = doc.data
    base = {k: v for k, v in data.items() if k not in CASE_KEYS and not k.startswith("x-")}
    found: list[tuple[DataPath, str]] = []
    for key in TEMPLATED_KEYS:
        if key in base:
            _strings(base[key], (key,), found)
    templates = []
    ok = True
    for path, source in found:
        call = _is_call_string(path)
        trouble = check_template(source)
        if trouble is not None:
            if not call:  # a tool's own templates are reported where the tool compiles
                diags.error(doc.span_in_string(path, line_offset(source, trouble.line)),
                            "E208", f"the template {trouble.verb}: {trouble.message}",
                            "a case's value is written {{ name }}; check the braces")
                ok = False
            continue
        renderer = CaseTemplate(source)
        names = renderer.names - CALL_NAMES if call else renderer.names
        templates.append(Template(path, source, names, call, None if call else renderer))
    if not ok:
        return None
    touched = {t.path[:k] for t in templates if not t.call
               for k in range(1, len(t.path) + 1)}
    bound = {t.path[:k] for t in templates if t.call for k in range(1, len(t.path) + 1)}
    places = []
    for t in templates:
        at, (_, last) = doc.span(t.path), doc.extent(t.path)
        places.append((at.line, at.col, last))
    return Expansion(doc, table, base, tuple(templates), frozenset(touched),
                     frozenset(bound - touched), tuple(places))


# ---- one case -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CaseDocument(Document):
    """A case's scenario: the data with its templates rendered, read with the template's
    positions — except what the case overrides (``runs``, ``min_pass``, ``tags``), which is
    at the case's own value (found when asked for)."""

    case: Case | None = None
    table: Table | None = None

    def _place(self, path: DataPath) -> Span | None:
        case, table = self.case, self.table
        if not path or case is None or table is None or path[0] not in case.overrides:
            return None
        return table.cell(case, str(path[0]))

    def span(self, path: DataPath) -> Span:
        return self._place(path) or Document.span(self, path)

    def key_span(self, path: DataPath) -> Span:
        return self._place(path) or Document.key_span(self, path)


def case_sets(doc: Document, key: str) -> bool:
    """Does ``doc``'s case set ``key`` itself (``runs``, ``min_pass``, ``tags``)?"""
    return isinstance(doc, CaseDocument) and doc.case is not None and \
        key in doc.case.overrides


class Instance(msgspec.Struct, frozen=True):
    """One case, ready to compile: its scenario as a document, the case, and the strings
    its templates rendered (by path)."""

    doc: CaseDocument
    case: Case
    rendered: Mapping[DataPath, str] = msgspec.field(default_factory=dict)


def instance(exp: Expansion, case: Case, diags: Collector) -> Instance | None:
    """``case``'s scenario: every template rendered over its values, its overrides set.
    None when a template reads a name the case lacks (E227, at the case and at the
    template) or fails to render (E208)."""
    doc, values = exp.doc, case.values
    rendered: dict[DataPath, str] = {}
    ok = True
    for t in exp.templates:
        missing = [n for n in t.names if n not in values]
        if missing:
            ok = False
            for name in sorted(missing):
                missing_value(exp, case, t, name, diags)
            continue
        if t.renderer is None:
            continue
        try:
            rendered[t.path] = t.renderer.render(values)
        except Exception as exc:  # the sandbox's limits, a field a value does not have
            ok = False
            diags.error(doc.span(t.path), "E208",
                        f"the template cannot be rendered for {case.named} "
                        f"({case.span.file}:{case.span.line}): {exc}",
                        "check the names and fields it reads against the case's values")
    if not ok:
        return None
    data = _rebuild(exp.base, rendered)
    for key, value in case.overrides.items():
        data[key] = value
        if key == "min_pass":
            data.pop("min_pass_rate", None)
    return Instance(CaseDocument(doc.path, doc.text, data, doc.root, _keys=doc._keys,
                                 _places=doc._places, case=case, table=exp.table),
                    case, rendered)


def missing_value(exp: Expansion, case: Case, t: Template, name: str,
                  diags: Collector) -> None:
    """E227 for a name a template reads that ``case`` lacks: at the case, and (once per
    template and name) at the template."""
    at = exp.doc.span_in_string(t.path, t.offset(name))
    what = "column" if exp.table.source == "csv" else "value"
    diags.error(case.span, "E227",
                f"{case.named} has no value '{name}', which the template at "
                f"{at.file}:{at.line}:{at.col} reads",
                f"add the {what} '{name}' to every case, or change the template")
    diags.error(at, "E227",
                f"this template reads '{name}', which {case.named} "
                f"({case.span.file}:{case.span.line}) does not have",
                f"add the {what} '{name}' to every case, or change the template")


def missing_in_expression(case: CaseInfo, name: str, at: Span, diags: Collector) -> None:
    """E227 for ``case.NAME`` in an expression, read by a case that lacks NAME."""
    named = f"the case '{case.id}'" if case.id != str(case.number) else f"case {case.number}"
    diags.error(case.span, "E227",
                f"{named} has no value '{name}', which the expression at "
                f"{at.file}:{at.line}:{at.col} reads as case.{name}",
                f"add '{name}' to every case, or change the expression")
    diags.error(at, "E227",
                f"this expression reads case.{name}, which {named} "
                f"({case.span.file}:{case.span.line}) does not have",
                f"add '{name}' to every case, or change the expression")


class CaseBinding(msgspec.Struct):
    """The case a scenario is compiled for, as its checks see it (a check's
    ``CheckContext.extra["case"]``): its values and the type ``case`` has in expressions.
    A check that takes the values says so (:meth:`take`): compile then does not share it
    with the scenario's other cases; ``reads`` gathers the names expressions read (W407)."""

    info: CaseInfo
    type: Any
    base_id: str = ""  # the scenario's id, before [CASE]
    reads: set[str] = msgspec.field(default_factory=set)
    bound: bool = False
    programs: dict[str, Any] = msgspec.field(default_factory=dict)  # expressions compiled for
    # ``type``, by source: shared by the cases of one file (``type`` is theirs)

    def take(self, names: Iterator[str] | list[str]) -> dict[str, Any]:
        self.bound = True
        self.reads.update(names)
        return dict(self.info.values)


def _rebuild(base: dict[str, Any], rendered: dict[DataPath, str]) -> dict[str, Any]:
    """``base`` with the strings at ``rendered``'s paths replaced; only the mappings and
    lists on those paths are copied, the rest is shared between cases."""
    out = dict(base)
    copied: set[int] = set()
    for path, text in rendered.items():
        node: Any = out
        for key in path[:-1]:
            child = node[key]
            if id(child) not in copied:
                child = dict(child) if isinstance(child, dict) else list(child)
                copied.add(id(child))
                node[key] = child
            node = child
        node[path[-1]] = text
    return out


def instances(exp: Expansion, diags: Collector) -> Iterator[Instance]:
    for case in exp.table.cases:
        inst = instance(exp, case, diags)
        if inst is not None:
            yield inst


def unused(exp: Expansion, read_by_expressions: set[str], diags: Collector) -> None:
    """W407 for each column (or value) of the cases that no template and no expression
    (``case.NAME``) reads."""
    used = exp.names | read_by_expressions | set(SPECIAL)
    word = "column" if exp.table.source == "csv" else "value"
    for name, at in exp.table.columns.items():
        if name in used:
            continue
        if not _NAME.match(name):
            diags.warning(at, "W407",
                          f"the {word} '{name}' cannot be read by a template: a name is "
                          "letters, digits and '_', starting with a letter",
                          f"rename it, e.g. {_suggest(name)}, and use it as "
                          f"{{{{ {_suggest(name)} }}}}")
            continue
        diags.warning(at, "W407",
                      f"no template reads the {word} '{name}'",
                      f"use it as {{{{ {name} }}}} in the scenario (or case.{name} in an "
                      f"expect), or remove the {word}")


def _suggest(name: str) -> str:
    text = re.sub(r"[^A-Za-z0-9_]+", "_", name).strip("_").lower() or "value"
    return text if not text[0].isdigit() else "v_" + text


def case_type(table: Table) -> Any:
    """The type of ``case`` in the scenario's expressions: one field per value, typed by
    what the cases hold (text from a CSV; a JSON or YAML value's own type when every case
    agrees, JSON data otherwise)."""
    # why: the expression language (Lark); not for plan, lint, run, recheck or checks
    from ..expr.types import BOOL, JSON, NULL, NUMBER, TEXT, Type, case_of

    def kind(v: Any) -> Type:
        if isinstance(v, bool):
            return BOOL
        if isinstance(v, int | float):
            return NUMBER
        if isinstance(v, str):
            return TEXT
        return NULL if v is None else JSON

    if table.source == "csv":  # every value of a CSV file is text
        return case_of({k: TEXT for k in table.header if _NAME.match(k)})
    found: dict[str, Type] = {}
    for case in table.cases:
        for k, v in case.values.items():
            t = kind(v)
            if k not in found:
                found[k] = t
            elif found[k] != t:
                found[k] = JSON
    return case_of({k: v for k, v in found.items() if _NAME.match(k)})


def excerpt_lines(table: Table) -> dict[int, str]:
    """A cases file's lines, for the diagnostics that point into it."""
    return dict(enumerate(table.text.splitlines(), 1)) if table.text else {}
