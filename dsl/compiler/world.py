"""A world with state: named tables of rows that fake tools read and change, and that
checks look at after the conversation.

::

    world: (scenarist.yaml)  ─┐
    given.world: (scenario)  ─┴─compile_world──▶ WorldTable per table (a scenario's table
                                                replaces the suite's of the same name)
    a tool's table/where/set/row/fields/one ──table_action──▶ TableAction (on its ToolSpec)
    check_tools ──▶ lint: an unknown table, a column the table does not have, a key the
                    tool's action does not take (at file:line:col, with did-you-mean)
    World(tables) ──act──▶ what a table tool answers (one World per attempt: a fresh copy)
                 ──run──▶ WorldRun: the tables at the start and at the end
    changes(run) ──▶ what the attempt changed (table, id, column: before → after; rows
                     added and removed), as results.jsonl keeps it; ``apply`` is its inverse

A table is a list of mappings, or ``{file: PATH}``: a ``.csv`` file with a header row or a
``.jsonl`` file of one JSON object a line, relative to the file that names it and inside
the suite's folder, read with the rules and limits of ``cases_file``
(dsl/compiler/cases.py). A row's identity is its ``id``.

Nothing here is imported by a suite without a world (lint and run stay as fast as they
were): dsl/compiler/compile.py, suite.py and faketools.py import it only when a world, a
``table:`` or a ``world`` check is written.
"""

from __future__ import annotations

import copy
import datetime as dt
import json
import stat
import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import msgspec
from msgspec.structs import replace

from ..errors import Collector, Span, did_you_mean, quoted_list
from ..model import Located, TableAction, ToolSpec, WorldRun, WorldTable
from ..source.load import DataPath, Document, display_path, file_kind
from .cases import read_table_file
from .moment import say
from .rules import (
    Refused,
    check_rules,
    compile_effects,
    compile_step,
    rebound,
    run_call,
    text_of,
    written,
)
from .rules import columns_hint as columns_hint  # (their home: what lint says of tables)
from .rules import no_row as said_no_row
from .rules import same as rule_same
from .rules import unknown_column as unknown_column
from .rules import world_type as world_type
from .templates import CaseTemplate, as_tool_text, check_template, is_template

ID = "id"  # the column that identifies a row
MAX_ROWS = 10_000  # rows of one table (as the cases of one scenario file)
MAX_WORLD_FILE_BYTES = 16 * 2**20  # as a cases file
FIELD_KEYS = ("where", "set", "row")  # a table tool's keys of column: value
FITS = {"set": ("update",), "row": ("create",), "one": ("read",)}  # key → its actions
_EMPTY: tuple[Mapping[str, Any], ...] = ()


# ---- compiling the tables -----------------------------------------------------------------


def compile_world(doc: Document, path: DataPath, data: Any, root: Path,
                  diags: Collector) -> dict[str, WorldTable]:
    """The tables of ``world:`` (the suite's) or ``given.world`` (a scenario's), already
    validated by the schema: each a list of mappings or ``{file: PATH}``."""
    out: dict[str, WorldTable] = {}
    if not isinstance(data, dict):
        return out
    for name, value in data.items():
        at = (*path, name)
        if isinstance(value, dict) and "file" in value:
            table = _from_file(doc, at, str(name), str(value["file"]), root, diags)
        elif isinstance(value, list):
            table = _inline(doc, at, str(name), value, diags)
        else:
            continue  # the schema said what is wrong
        out[str(name)] = table
    return out


def _inline(doc: Document, path: DataPath, name: str, rows: list[Any],
            diags: Collector) -> WorldTable:
    columns: dict[str, Span] = {}
    kept: list[Mapping[str, Any]] = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict):
            continue
        for key in row:
            columns.setdefault(str(key), doc.key_span((*path, i, key)))
        kept.append(dict(row))
    return _checked(WorldTable(name, tuple(kept), doc.key_span(path), columns), diags,
                    lambda i: doc.span((*path, i)))


def _from_file(doc: Document, path: DataPath, name: str, file: str, root: Path,
               diags: Collector) -> WorldTable:
    """The table read from its file; when the file cannot be read (E242, said here), the
    table still exists, with no rows and its columns unknown: the tools and checks that
    name it are checked as far as they can be, never told it does not exist (E240)."""
    at = doc.span((*path, "file"))
    unread = WorldTable(name, (), doc.key_span(path), {}, file)
    suffix = Path(file).suffix.lower()
    if Path(file).is_absolute():
        diags.error(at, "E242", f"the world file '{file}' of the table '{name}' is an "
                                "absolute path",
                    f"write it relative to the folder of {doc.path}, e.g. data/{name}.csv")
        return unread
    if suffix not in (".csv", ".jsonl"):
        diags.error(at, "E242", f"the world file '{file}' of the table '{name}' is neither "
                                ".csv nor .jsonl",
                    "save the spreadsheet as CSV (CSV UTF-8), or write one JSON object a line "
                    "in a .jsonl file")
        return unread
    full = (Path(doc.path).parent / file).resolve()
    suite = root.resolve()
    if full != suite and suite not in full.parents:
        diags.error(at, "E242", f"the world file '{file}' of the table '{name}' is outside "
                                "the suite's folder",
                    "keep the file in the suite's folder")
        return unread
    try:
        mode = full.stat().st_mode  # never opened here: a FIFO would block a read
    except OSError:
        mode = None
    if mode is None:
        diags.error(at, "E242", f"the world file '{file}' of the table '{name}' does not "
                                f"exist (looked for {display_path(full)})",
                    f"the file is relative to the folder of {doc.path}; check the name")
        return unread
    if not stat.S_ISREG(mode):
        diags.error(at, "E242", f"the world file '{file}' of the table '{name}' is "
                                f"{file_kind(mode)}, not a regular file "
                                f"({display_path(full)})",
                    "name a .csv or .jsonl file that holds the table's rows")
        return unread
    shown = display_path(full)
    read = read_table_file(full, MAX_WORLD_FILE_BYTES, "split the table into several files",
                           diags)
    if read is None:
        return replace(unread, file=shown)
    rows = tuple(dict(c.values) for c in read.cases)
    spans = {i: c.span for i, c in enumerate(read.cases)}
    return _checked(WorldTable(name, rows, doc.key_span(path), dict(read.columns), shown),
                    diags, lambda i: spans.get(i, at))


def _checked(table: WorldTable, diags: Collector, row_span: Any) -> WorldTable:
    """The table, said wrong when it has more than MAX_ROWS rows (E242) or an id twice
    (E245, each duplicate where it is written). Either is an error, so nothing runs; the
    table is kept all the same, so that lint goes on checking the tools and checks that
    name it (their columns, did-you-mean) instead of saying it does not exist."""
    if len(table.rows) > MAX_ROWS:
        diags.error(table.span, "E242", f"the table '{table.name}' has {len(table.rows):,} "
                                        f"rows; a table may have at most {MAX_ROWS:,}",
                    "keep only the rows the scenarios need")
        return table
    seen: dict[str, int] = {}
    for i, row in enumerate(table.rows):
        if ID not in row:
            continue
        key = _text(row[ID])
        if key in seen:
            first: Span = row_span(seen[key])
            diags.error(row_span(i), "E245",
                        f"the table '{table.name}' has two rows with id = {key} (the first "
                        f"at {first.file}:{first.line})",
                        "give each row its own id: a row is known by its id")
            continue  # a third row with the id is said against the first one too
        seen[key] = i
    return table


def render_cases(table: WorldTable, values: Mapping[str, Any]) -> WorldTable:
    """A suite's table for one case: each ``{{ name }}`` of its values rendered over the
    case's values (a name the case lacks is left as it is written)."""
    def one(v: Any) -> Any:
        if isinstance(v, str) and is_template(v) and check_template(v) is None:
            t = CaseTemplate(v)
            if t.names <= values.keys():
                try:
                    return t.render(dict(values))
                except Exception:  # a limit of the sandbox: the text stays as written
                    return v
        return v

    if not any(isinstance(v, str) and "{{" in v for r in table.rows for v in r.values()):
        return table
    rows = tuple({k: one(v) for k, v in r.items()} for r in table.rows)
    return WorldTable(table.name, rows, table.span, table.columns, table.file)


# ---- compiling a table tool ---------------------------------------------------------------


def table_action(doc: Document, path: DataPath, name: str, data: Mapping[str, Any],
                 diags: Collector, values: dict[str, Any] | None) -> TableAction | None:
    """A tool's ``table`` and its ``where``, ``set``, ``row``, ``fields``, ``one`` (the
    strings of where, set and row are templates over the call, as ``returns`` is), and its
    rules: ``require``, ``compute``, ``append`` and ``effects`` (dsl/compiler/rules.py)."""
    action = data.get("action", "read")
    what = f"the tool '{name}'"
    if action == "create" and "row" not in data:
        diags.error(doc.key_span((*path, "table")), "E244",
                    f"the tool '{name}' creates a row in '{data['table']}' but has no row",
                    "say what row it adds, e.g. row: {id: \"{{ args.id }}\", status: new}")
    if action == "update" and not any(k in data for k in ("set", "compute", "append")):
        diags.error(doc.key_span((*path, "table")), "E244",
                    f"the tool '{name}' updates '{data['table']}' but has no set",
                    "say what it changes, e.g. set: {status: blocked}")
    parts = compile_step(doc, path, what, data, action, diags, values)
    effects = compile_effects(doc, path, name, data.get("effects"), diags, values)
    places = list(parts.places) if parts is not None else []
    fields = data.get("fields")
    if isinstance(fields, list):
        for i, column in enumerate(fields):
            places.append(Located("fields", str(column), doc.span((*path, "fields", i))))
    if parts is None or effects is None:
        return None
    rules = {k: data[k] for k in ("require", "compute", "append", "effects") if k in data}
    return TableAction(
        table=str(data["table"]), span=doc.span((*path, "table")),
        where=parts.where, set=parts.set, row=parts.row,
        fields=tuple(str(f) for f in fields) if isinstance(fields, list) else None,
        one=data.get("one") is True, returns="returns" in data, places=tuple(places),
        compute=parts.compute, append=parts.append, require=parts.require, effects=effects,
        written=json.dumps(written(rules), sort_keys=True, ensure_ascii=False, default=str)
        if rules else "")


def bind_action(action: TableAction, values: dict[str, Any]) -> TableAction:
    """``action`` (compiled for one case) for another case: its templates read ``values``."""
    def rebind(items: tuple[tuple[str, Any], ...]) -> tuple[tuple[str, Any], ...]:
        return tuple((k, rebound(v, values)) for k, v in items)

    def rules(rs: tuple[Any, ...]) -> tuple[Any, ...]:
        return tuple(replace(r, otherwise=rebound(r.otherwise, values)) for r in rs)

    effects = tuple(replace(e, where=rebind(e.where), set=rebind(e.set), row=rebind(e.row),
                            append=rebind(e.append), require=rules(e.require))
                    for e in action.effects)
    return replace(action, where=rebind(action.where), set=rebind(action.set),
                   row=rebind(action.row), append=rebind(action.append),
                   require=rules(action.require), effects=effects)


# ---- lint: the tools against the tables ---------------------------------------------------


def check_tools(tools: Iterable[ToolSpec], world: Mapping[str, WorldTable],
                diags: Collector) -> None:
    """Each table tool's table exists (E240) and has every column its where, set, row and
    fields name (E241), each reported where it is written."""
    for tool in tools:
        act = tool.table
        if act is None:
            continue
        table = world.get(act.table)
        if table is None:
            have = quoted_list(sorted(world), "and") or "none"
            diags.error(act.span, "E240",
                        f"the tool '{tool.name}' acts on the table '{act.table}', which no "
                        f"world defines{did_you_mean(act.table, world)}",
                        f"the tables are {have}; define it under world: in scenarist.yaml or "
                        "given.world: in the scenario")
            continue
        for place in act.places:
            if table.columns and place.column not in table.columns:  # empty: not known
                diags.error(place.span, "E241", unknown_column(table, place.column,
                                                               f"{place.key} of the tool "
                                                               f"'{tool.name}' names"),
                            columns_hint(table))
        if act.require or act.compute or act.append or act.effects:
            check_rules(tool, world, diags)


# ---- one attempt's world ------------------------------------------------------------------


class World:
    """The tables of one attempt: a fresh copy of the scenario's, changed only by its table
    tools' calls (thread-safe: a python agent may call its tools from threads)."""

    def __init__(self, tables: Sequence[WorldTable]) -> None:
        self.before = {t.name: t.rows for t in tables}
        self.rows: dict[str, list[dict[str, Any]]] = {
            t.name: [dict(r) for r in t.rows] for t in tables}
        self._tables = tuple(tables)
        self._lock = threading.Lock()
        self._turns: list[dict[str, tuple[Mapping[str, Any], ...]]] = []
        self._types: Any = None

    def mark(self) -> None:
        """A turn of the conversation ended: keep the tables as they are now."""
        with self._lock:
            self._turns.append(self._now())

    def _now(self) -> dict[str, tuple[Mapping[str, Any], ...]]:
        return {name: tuple(dict(r) for r in rows) for name, rows in self.rows.items()}

    @property
    def types(self) -> Any:
        """``world`` as the tools' rules read it (typed as lint types it)."""
        if self._types is None:
            self._types = world_type({t.name: t for t in self._tables})
        return self._types

    def act(self, tool: ToolSpec, args: Any, at: dt.datetime) -> tuple[str, str | None]:
        """What ``tool`` (a table tool) answers to a call with ``args``: the text the
        agent gets, and the error kind when it is an error (``no-row``: nothing matched;
        ``row-exists``: a create's id is taken; ``refused``: a rule of its ``require`` is
        false; ``tool-error``) — then no table changed (dsl/compiler/rules.py applies every
        step of the call, all or nothing)."""
        act = tool.table
        assert act is not None  # only table tools come here (faketools.answer)
        call = args if isinstance(args, dict) else {}
        with self._lock:
            try:
                touched, after = run_call(self.rows, tool, call, at, self.types)
            except Refused as exc:
                return exc.text, exc.kind
            self.rows = after
            shown = [_project(r, act.fields) for r in touched]
            world = self.rows
        if act.returns:
            return _returns(tool, call, at, shown, world), None
        single = act.one or tool.action == "create"
        if single and not shown:
            return "[]" if not act.one else "null", None
        return json.dumps(shown[0] if single else shown, ensure_ascii=False, default=str), None

    def run(self) -> WorldRun:
        with self._lock:
            return WorldRun(self.before, self._now(), tuple(self._turns))

    def snapshot(self) -> dict[str, list[dict[str, Any]]]:
        """The tables as they are now, for :meth:`restore`."""
        with self._lock:
            return copy.deepcopy(self.rows)

    def restore(self, tables: Mapping[str, list[dict[str, Any]]]) -> None:
        """Put the tables back as :meth:`snapshot` kept them: what the calls made since
        changed is undone (an own-loop agent's turn sent again, dsl/clients/ownloop.py)."""
        with self._lock:
            self.rows = copy.deepcopy(dict(tables))


def open_world(tables: Sequence[WorldTable]) -> World | None:
    """A fresh world for one attempt (None when the scenario has none)."""
    return World(tables) if tables else None


def no_row(table: str, where: Sequence[tuple[str, Any]]) -> str:
    """``no row in cards with id = C-9``: what a where that matches nothing tells the agent."""
    return said_no_row(table, where)


def _text(v: Any) -> str:
    return text_of(v)


def _project(row: Mapping[str, Any], fields: tuple[str, ...] | None) -> dict[str, Any]:
    if fields is None:
        return dict(row)
    return {f: row[f] for f in fields if f in row}


def _returns(tool: ToolSpec, args: Mapping[str, Any], at: dt.datetime,
             rows: list[dict[str, Any]], world: Mapping[str, Any]) -> str:
    if tool.template is None:
        return as_tool_text(tool.returns)
    try:
        return str(tool.template.render(args=dict(args), at=at, now=say(at), rows=rows,
                                        world=world))
    except Exception as exc:  # a template over the model's arguments: report, go on
        return f"error: the tool failed: {exc}"


# ---- what an attempt changed --------------------------------------------------------------


def _key(row: Mapping[str, Any], i: int) -> str:
    return _text(row[ID]) if ID in row else f"#{i + 1}"


def unchanged(was: Any, now: Any) -> bool:
    """Whether a column kept its value: equal, or both the same value that is not equal to
    itself (a ``NaN`` read from a JSONL table is no change)."""
    if was == now:
        return True
    if type(was) is not type(now) or not isinstance(was, float | list | dict):
        return False
    return _canon(was) == _canon(now)


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)


def _row_text(row: Mapping[str, Any]) -> bytes:
    """A row as text, to pair equal rows (the columns in order; a value JSON cannot say,
    as its text)."""
    return msgspec.json.encode(row, order="sorted", enc_hook=str)


def _pairs(was: Sequence[Mapping[str, Any]], now: Sequence[Mapping[str, Any]]
           ) -> list[tuple[int, int]]:
    """Which row at the end is which row at the start (index pairs, both ascending): a
    table tool changes a row where it is, deletes it, or adds one at the end, so the rows
    left keep their order. Rows that kept every value pair first; then, between them, rows
    of the same id (or position) — a row deleted and created again is another row, and two
    rows may share an id (an update can set one)."""
    lo = 0
    while lo < len(was) and lo < len(now) and was[lo] == now[lo]:
        lo += 1
    hi = 0
    while (hi < len(was) - lo and hi < len(now) - lo
           and was[len(was) - 1 - hi] == now[len(now) - 1 - hi]):
        hi += 1
    out = [(i, i) for i in range(lo)]
    a, b = was[lo:len(was) - hi], now[lo:len(now) - hi]
    if a and b:
        # why: difflib aligns two sequences in order, which is what a table's rows keep
        import difflib

        rows = difflib.SequenceMatcher(None, [_row_text(r) for r in a],
                                       [_row_text(r) for r in b], autojunk=False)
        last_i = last_j = 0
        blocks = rows.get_matching_blocks()
        for i0, j0, n in blocks:
            keys = difflib.SequenceMatcher(
                None, [_key(r, lo + last_i + k) for k, r in enumerate(a[last_i:i0])],
                [_key(r, lo + last_j + k) for k, r in enumerate(b[last_j:j0])],
                autojunk=False)
            for ki, kj, kn in keys.get_matching_blocks():
                out += [(lo + last_i + ki + k, lo + last_j + kj + k) for k in range(kn)]
            out += [(lo + i0 + k, lo + j0 + k) for k in range(n)]
            last_i, last_j = i0 + n, j0 + n
    out += [(len(was) - hi + k, len(now) - hi + k) for k in range(hi)]
    return out


def changes(run: WorldRun, redact: Callable[[Any], Any] | None = None
            ) -> list[dict[str, Any]]:
    """What an attempt did to the world, row by row: ``{"table", "id", "set": {column:
    [before, after]}}`` for a changed row, ``"added": row`` and ``"removed": row``;
    ``unset`` names the columns a changed row no longer has.

    Where its id alone cannot tell :func:`apply` which row it is — two rows share an id
    (an update can set one), or results.jsonl keeps the id redacted (``redact``, the run's
    ``Redactor.value``, changes it) — a change says where the row is, ``index``: in the
    table at the start for a changed or removed row, at the end for an added one; and
    ``id_as`` says that a changed or added row's id is the one row N had at the start, so
    that recheck knows a redacted id again."""
    out: list[dict[str, Any]] = []
    for name in sorted({*run.before, *run.after}):
        was, now = run.before.get(name, _EMPTY), run.after.get(name, _EMPTY)
        if len(was) != len(now) or any(x != y for x, y in zip(was, now, strict=True)):
            out += _table_changes(name, was, now, redact)
    return out


def _table_changes(name: str, was: Sequence[Mapping[str, Any]],
                   now: Sequence[Mapping[str, Any]], redact: Callable[[Any], Any] | None
                   ) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    paired = dict(_pairs(was, now))
    twice = _ids_twice(was) or _ids_twice(now)
    ids: dict[str, int] | None = None

    def placed(change: dict[str, Any], index: int, row: Mapping[str, Any],
               new_id: bool) -> dict[str, Any]:
        nonlocal ids
        hidden = redact is not None and ID in row and redact({ID: row[ID]}) != {ID: row[ID]}
        if twice or hidden:
            change["index"] = index
        if hidden and new_id:
            if ids is None:
                ids = {}
                for i, r in enumerate(was):
                    if ID in r:
                        ids.setdefault(_text(r[ID]), i)
            found = ids.get(_text(row[ID]))
            if found is not None:
                change["id_as"] = found
        return change

    for i, row in enumerate(was):
        j = paired.get(i)
        if j is None:
            out.append(placed({"table": name, "id": _key(row, i), "removed": dict(row)}, i,
                              row, False))
            continue
        new = now[j]
        if new == row:
            continue
        diff = {c: [row.get(c), new.get(c)] for c in dict.fromkeys([*row, *new])
                if (c in row) != (c in new) or not unchanged(row.get(c), new.get(c))}
        if diff:
            change: dict[str, Any] = {"table": name, "id": _key(row, i), "set": diff}
            gone = [c for c in row if c not in new]
            if gone:
                change["unset"] = gone
            if ID in diff and ID in new:
                placed(change, i, new, True)
            out.append(placed(change, i, row, False))
    kept = set(paired.values())
    last = max(kept, default=-1)  # an added row before it is not at the end
    for j, row in enumerate(now):
        if j not in kept:
            added = placed({"table": name, "id": _key(row, j), "added": dict(row)}, j, row,
                           True)
            if j < last:
                added["index"] = j
            out.append(added)
    return out


def _ids_twice(rows: Sequence[Mapping[str, Any]]) -> bool:
    seen: set[str] = set()
    for r in rows:
        if ID in r:
            key = _text(r[ID])
            if key in seen:
                return True
            seen.add(key)
    return False


def apply(before: Mapping[str, tuple[Mapping[str, Any], ...]],
          made: Sequence[Mapping[str, Any]],
          known: Callable[[Any], Any] | None = None) -> WorldRun:
    """The world at the end, from the one at the start and the changes an attempt made
    (:func:`changes`): what ``recheck`` evaluates world checks on. ``known`` gives back
    the true value of one results.jsonl keeps redacted, where recheck can know it (the
    value itself where it cannot). Changes written before they kept an ``index`` find
    their row by its id."""
    true = known or (lambda v: v)
    after = {name: [dict(r) for r in rows] for name, rows in before.items()}
    gone: dict[str, set[int]] = {}
    added: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for ch in made:
        name = str(ch.get("table"))
        rows = after.setdefault(name, [])
        start = before.get(name, _EMPTY)
        if "added" in ch:
            row = {c: true(v) for c, v in dict(ch["added"]).items()}
            _known_id(row, ch, start)
            at = ch.get("index")
            added.setdefault(name, []).append((at if isinstance(at, int) else 1 << 62, row))
            continue
        index = _row_of(ch, rows, start, true)
        if index is None:
            continue
        if "removed" in ch:
            gone.setdefault(name, set()).add(index)
            continue
        row = rows[index]
        for column, (_, new) in dict(ch.get("set") or {}).items():
            row[column] = true(new)
        for column in ch.get("unset") or ():
            row.pop(str(column), None)
        _known_id(row, ch, start)
    for name, rows in after.items():
        kept = [r for i, r in enumerate(rows) if i not in gone.get(name, ())]
        for at, row in sorted(added.get(name, ()), key=lambda x: x[0]):
            kept.insert(min(at, len(kept)), row)
        rows[:] = kept
    return WorldRun(before, {n: tuple(rs) for n, rs in after.items()})


def _row_of(change: Mapping[str, Any], rows: Sequence[Mapping[str, Any]],
            start: Sequence[Mapping[str, Any]], true: Callable[[Any], Any]) -> int | None:
    """The index, in the table at the start, of the row a change changed or removed."""
    at = change.get("index")
    if isinstance(at, int) and not isinstance(at, bool):
        return at if 0 <= at < len(rows) else None
    key = str(change.get("id"))
    found = [i for i, r in enumerate(start) if _key(r, i) in (key, true(key))]
    return found[0] if found else None


def _known_id(row: dict[str, Any], change: Mapping[str, Any],
              start: Sequence[Mapping[str, Any]]) -> None:
    """The row's id, when the change says it is the id of a row at the start."""
    at = change.get("id_as")
    if isinstance(at, int) and not isinstance(at, bool) and 0 <= at < len(start) \
            and ID in start[at]:
        row[ID] = start[at][ID]


MAX_DIFFERENCES = 20  # differences a failure lists before "and N more"


def differences(found: Mapping[str, Sequence[Mapping[str, Any]]],
                expected: Mapping[str, Sequence[Mapping[str, Any]]],
                before: Mapping[str, Sequence[Mapping[str, Any]]]) -> list[str]:
    """Every way the world ``found`` differs from ``expected``, table by table and row by
    row (known by id, else by position), column by column: ``orders #W1: status is
    'pending', expected 'cancelled'``; a column one side lacks is ``absent``; a row is
    missing (``no such row``, ``(it was deleted)`` when it was there at the start) or
    should not exist (``expected absent, but the row exists``). Values compare as a where
    does: numbers by value, lists in order."""
    out: list[str] = []
    for name in sorted({*found, *expected}):
        have = {_key(r, i): r for i, r in enumerate(found.get(name, _EMPTY))}
        want = {_key(r, i): r for i, r in enumerate(expected.get(name, _EMPTY))}
        was = {_key(r, i) for i, r in enumerate(before.get(name, _EMPTY))}
        for key, row in want.items():
            got = have.get(key)
            if got is None:
                out.append(f"{name} {key}: no such row" + (" (it was deleted)" if key in was
                                                           else ""))
                continue
            for column in dict.fromkeys([*row, *got]):
                if column not in got:
                    out.append(f"{name} {key}: {column} is absent, expected "
                               f"{shown(row[column])}")
                elif column not in row:
                    out.append(f"{name} {key}: {column} is {shown(got[column])}, expected "
                               "absent")
                elif not same(got[column], row[column]):
                    out.append(f"{name} {key}: {column} is {shown(got[column])}, expected "
                               f"{shown(row[column])}")
        for key in have:
            if key not in want:
                out.append(f"{name} {key}: expected absent, but the row exists")
    return out


def find(rows: Sequence[Mapping[str, Any]], key: str) -> Mapping[str, Any] | None:
    """The row whose id is ``key``."""
    return next((r for r in rows if ID in r and _text(r[ID]) == key), None)


def same(have: Any, want: Any) -> bool:
    """The rule a ``world`` check compares a column by (as a where does): equal, the same
    written as text, numbers by value ('135.20' and 135.2), lists in order."""
    return rule_same(have, want)


def shown(value: Any, limit: int = 120) -> str:
    """A value as a failure reason quotes it: ``'blocked'``, ``7``, ``null``, a list or a
    mapping as JSON (shortened)."""
    text = f"'{value}'" if isinstance(value, str) else _text(value)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---- the type of world and world_before in expressions ------------------------------------


def said(change: Mapping[str, Any]) -> str:
    """One change in words: ``cards C-2: status 'active' → 'blocked'``."""
    head = f"{change.get('table')} {change.get('id')}"
    if "added" in change:
        return f"{head}: added"
    if "removed" in change:
        return f"{head}: removed"
    return f"{head}: " + ", ".join(f"{c} {shown(b)} → {shown(a)}"
                                   for c, (b, a) in dict(change.get("set") or {}).items())
