"""The history store: what it keeps about a run, and the one interface both stores offer.

:class:`HistoryStore` is the interface (record a run, list runs, show one, the trend of
scenario × target rows). :class:`SqlHistory` implements it once in SQL that SQLite and
PostgreSQL both run; :mod:`~dsl.history.sqlite` and :mod:`~dsl.history.postgresql` only
connect, take the migration lock and name their driver's errors. The tests run the same
cases against both.
"""

# ruff: noqa: S608 -- every query here is built from this module's own column names and
# '?' placeholders; every value is a parameter.
from __future__ import annotations

import contextlib
import datetime as dt
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import msgspec

from .migrations import CREATE_SCHEMA_TABLE, MIGRATIONS, SCHEMA_VERSION

TREND_RUNS = 10  # the report's trend: a row's last runs
IN_CHUNK = 400  # scenario ids per IN (...) list: far below every driver's parameter limit


class HistoryError(Exception):
    """The history could not be read or written; the message says why, in plain words
    (never with a password)."""


class TargetEntry(msgspec.Struct, frozen=True):
    name: str
    kind: str | None
    model: str | None  # what it runs: the model, the cassette, the entry point


class ResultEntry(msgspec.Struct, frozen=True):
    """One scenario × target of a run: its counts, verdict and 95% interval."""

    scenario: str
    target: str
    verdict: str
    planned: int
    runs: int
    decided: int
    passes: int
    fails: int
    unsure: int
    errors: int
    min_pass: int
    pass_rate: float | None
    ci_low: float
    ci_high: float


class RunEntry(msgspec.Struct, frozen=True):
    """One run, as the history keeps it."""

    run_id: str
    started_at: str | None
    finished_at: str | None
    suite: str | None
    git_commit: str | None
    git_branch: str | None
    run_dir: str | None
    scenarios: int
    passed: int
    failed: int
    inconclusive: int
    attempts: int
    pass_rate: float | None
    interrupted: bool
    targets: tuple[TargetEntry, ...] = ()
    results: tuple[ResultEntry, ...] = ()
    recheck_of: str | None = None
    recorded_at: str | None = None


class TrendPoint(msgspec.Struct, frozen=True):
    """One run in a scenario × target's trend."""

    run_id: str
    started_at: str | None
    verdict: str
    passes: int
    decided: int
    pass_rate: float | None
    ci_low: float
    ci_high: float

    def as_json(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "started_at": self.started_at, "verdict": self.verdict,
                "passes": self.passes, "decided": self.decided, "pass_rate": self.pass_rate,
                "ci_low": self.ci_low, "ci_high": self.ci_high}


class HistoryStore(ABC):
    """Where runs are remembered. Every method raises :class:`HistoryError` (in plain
    words) when the store cannot be reached, read or written."""

    location: str  # how to show it: a file, or a URL without its password

    @abstractmethod
    def record(self, entry: RunEntry, replaces: Sequence[str] = ()) -> None:
        """Add a run (or replace the one with the same id: importing twice is harmless);
        the runs ``replaces`` names leave the history (the shards a merged run holds)."""

    @abstractmethod
    def runs(self, *, scenario: str | None = None, target: str | None = None,
             limit: int = 50) -> list[RunEntry]:
        """The latest runs first, without their results; only those that ran ``scenario``
        (on ``target``) when given."""

    @abstractmethod
    def run(self, run_id: str) -> RunEntry | None:
        """One run with its targets and results: by its id, or the start of one when only
        one id starts so (HistoryError when several do)."""

    @abstractmethod
    def trends(self, keys: Iterable[tuple[str, str]], *, limit: int = TREND_RUNS,
               exclude_run: str | None = None) -> dict[tuple[str, str], list[TrendPoint]]:
        """Each (scenario, target)'s last ``limit`` runs, oldest first."""

    @abstractmethod
    def schema_version(self) -> int:
        """The store's schema version (after migrating)."""

    @abstractmethod
    def close(self) -> None: ...

    def __enter__(self) -> HistoryStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


_RUN_COLUMNS = ("run_id", "started_at", "finished_at", "suite", "git_commit", "git_branch",
                "run_dir", "scenarios", "passed", "failed", "inconclusive", "attempts",
                "pass_rate", "interrupted", "recorded_at", "recheck_of")
_RESULT_COLUMNS = ("scenario", "target", "verdict", "planned", "runs", "decided", "passes",
                   "fails", "unsure", "errors", "min_pass", "pass_rate", "ci_low", "ci_high")


class SqlHistory(HistoryStore):
    """The history in SQL, written once for both stores. A subclass connects
    (:meth:`_connect`), takes the migration lock (:meth:`_lock`), converts the ``?``
    placeholders its driver wants otherwise (:meth:`_sql`) and names its driver's errors
    (:meth:`_errors`)."""

    def __init__(self, location: str) -> None:
        self.location = location
        self._conn: Any = None

    # -- what a store provides
    @abstractmethod
    def _connect(self) -> Any: ...

    @abstractmethod
    def _lock(self, cur: Any) -> None:
        """Start the migration's transaction so that one process at a time migrates."""

    @abstractmethod
    def _errors(self) -> tuple[type[BaseException], ...]:
        """The driver's exceptions that mean the store cannot be used."""

    def _sql(self, query: str) -> str:
        return query

    def _begin(self, cur: Any) -> None:
        """Start a write transaction (the drivers begin one implicitly otherwise)."""

    # -- plumbing
    @contextlib.contextmanager
    def _cursor(self, what: str, write: bool = False) -> Iterator[Any]:
        try:
            if self._conn is None:
                conn = self._connect()
                self._conn = conn
                try:
                    self._migrate()
                except BaseException:
                    self._conn = None
                    with contextlib.suppress(*self._errors()):
                        conn.close()
                    raise
            cur = self._conn.cursor()
            try:
                if write:
                    self._begin(cur)
                yield cur
                if write:
                    self._conn.commit()
                else:  # end the read's transaction (PostgreSQL opens one for any query)
                    self._conn.rollback()
            except BaseException:
                with contextlib.suppress(*self._errors()):
                    self._conn.rollback()
                raise
            finally:
                with contextlib.suppress(*self._errors()):
                    cur.close()
        except self._errors() as exc:
            raise HistoryError(f"cannot {what} the history {self.location}: "
                               f"{self._describe(exc)}") from None

    def _describe(self, exc: BaseException) -> str:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__

    def _execute(self, cur: Any, query: str, params: Sequence[Any] = ()) -> Any:
        cur.execute(self._sql(query), tuple(params))
        return cur

    def _migrate(self) -> None:
        cur = self._conn.cursor()
        try:
            self._lock(cur)
            self._execute(cur, CREATE_SCHEMA_TABLE)
            current = self._execute(
                cur, "SELECT MAX(version) FROM scenarist_schema").fetchone()[0] or 0
            if current > SCHEMA_VERSION:
                self._conn.rollback()
                raise HistoryError(
                    f"the history {self.location} has schema version {current}, written by a "
                    f"newer Scenarist (this one knows up to {SCHEMA_VERSION}); upgrade "
                    "Scenarist to use it")
            now = _now()
            for m in MIGRATIONS:
                if m.version <= current:
                    continue
                for statement in m.statements:
                    self._execute(cur, statement)
                self._execute(cur, "INSERT INTO scenarist_schema (version, description, "
                                   "applied_at) VALUES (?, ?, ?)", (m.version, m.description, now))
            self._conn.commit()
        except BaseException:
            with contextlib.suppress(*self._errors()):
                self._conn.rollback()
            raise
        finally:
            with contextlib.suppress(*self._errors()):
                cur.close()

    def close(self) -> None:
        if self._conn is not None:
            with contextlib.suppress(*self._errors()):
                self._conn.close()
            self._conn = None

    # -- the interface
    def schema_version(self) -> int:
        with self._cursor("read") as cur:
            row = self._execute(cur, "SELECT MAX(version) FROM scenarist_schema").fetchone()
            return int(row[0] or 0)

    def record(self, entry: RunEntry, replaces: Sequence[str] = ()) -> None:
        with self._cursor("write to", write=True) as cur:
            for run_id in (entry.run_id, *replaces):
                self._execute(cur, "DELETE FROM results WHERE run_id = ?", (run_id,))
                self._execute(cur, "DELETE FROM run_targets WHERE run_id = ?", (run_id,))
                self._execute(cur, "DELETE FROM runs WHERE run_id = ?", (run_id,))
            values = (entry.run_id, entry.started_at, entry.finished_at, entry.suite,
                      entry.git_commit, entry.git_branch, entry.run_dir, entry.scenarios,
                      entry.passed, entry.failed, entry.inconclusive, entry.attempts,
                      entry.pass_rate, int(entry.interrupted), entry.recorded_at or _now(),
                      entry.recheck_of)
            self._execute(cur, f"INSERT INTO runs ({', '.join(_RUN_COLUMNS)}) VALUES "
                               f"({', '.join('?' * len(_RUN_COLUMNS))})", values)
            for i, t in enumerate(entry.targets):
                self._execute(cur, "INSERT INTO run_targets (run_id, position, name, kind, "
                                   "model) VALUES (?, ?, ?, ?, ?)",
                              (entry.run_id, i, t.name, t.kind, t.model))
            insert = (f"INSERT INTO results (run_id, {', '.join(_RESULT_COLUMNS)}) VALUES "
                      f"({', '.join('?' * (len(_RESULT_COLUMNS) + 1))})")
            for r in entry.results:
                self._execute(cur, insert, (entry.run_id, r.scenario, r.target, r.verdict,
                                            r.planned, r.runs, r.decided, r.passes, r.fails,
                                            r.unsure, r.errors, r.min_pass, r.pass_rate,
                                            r.ci_low, r.ci_high))

    def runs(self, *, scenario: str | None = None, target: str | None = None,
             limit: int = 50) -> list[RunEntry]:
        where, params = [], []
        if scenario is not None or target is not None:
            inner, inner_params = [], []
            if scenario is not None:
                inner.append("x.scenario = ?")
                inner_params.append(scenario)
            if target is not None:
                inner.append("x.target = ?")
                inner_params.append(target)
            where.append("EXISTS (SELECT 1 FROM results x WHERE x.run_id = runs.run_id AND "
                         + " AND ".join(inner) + ")")
            params += inner_params
        query = (f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs"
                 + (" WHERE " + " AND ".join(where) if where else "")
                 + " ORDER BY started_at DESC, run_id DESC LIMIT ?")
        with self._cursor("read") as cur:
            rows = self._execute(cur, query, (*params, limit)).fetchall()
            entries = [_run(row) for row in rows]
            targets = self._targets(cur, [e.run_id for e in entries])
        return [_with(e, targets=targets.get(e.run_id, ())) for e in entries]

    def _targets(self, cur: Any, run_ids: list[str]) -> dict[str, tuple[TargetEntry, ...]]:
        out: dict[str, list[TargetEntry]] = {}
        for chunk in _chunks(run_ids):
            rows = self._execute(cur, "SELECT run_id, name, kind, model FROM run_targets "
                                      f"WHERE run_id IN ({', '.join('?' * len(chunk))}) "
                                      "ORDER BY run_id, position", chunk).fetchall()
            for run_id, name, kind, model in rows:
                out.setdefault(run_id, []).append(TargetEntry(name, kind, model))
        return {k: tuple(v) for k, v in out.items()}

    def run(self, run_id: str) -> RunEntry | None:
        with self._cursor("read") as cur:
            row = self._execute(cur, f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE "
                                     "run_id = ?", (run_id,)).fetchone()
            if row is None:
                like = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
                rows = self._execute(cur, f"SELECT {', '.join(_RUN_COLUMNS)} FROM runs WHERE "
                                          "run_id LIKE ? ESCAPE '\\' ORDER BY run_id LIMIT 6",
                                     (like + "%",)).fetchall()
                if len(rows) > 1:
                    names = ", ".join(r[0] for r in rows[:5])
                    raise HistoryError(f"several runs start with '{run_id}' ({names}"
                                       f"{', …' if len(rows) > 5 else ''}); give more of the id")
                if not rows:
                    return None
                row = rows[0]
            entry = _run(row)
            results = self._execute(cur, f"SELECT {', '.join(_RESULT_COLUMNS)} FROM results "
                                         "WHERE run_id = ? ORDER BY scenario, target",
                                    (entry.run_id,)).fetchall()
            targets = self._targets(cur, [entry.run_id])
        return _with(entry, targets=targets.get(entry.run_id, ()),
                     results=tuple(_result(r) for r in results))

    def trends(self, keys: Iterable[tuple[str, str]], *, limit: int = TREND_RUNS,
               exclude_run: str | None = None) -> dict[tuple[str, str], list[TrendPoint]]:
        wanted = set(keys)
        scenarios = sorted({s for s, _ in wanted})
        out: dict[tuple[str, str], list[TrendPoint]] = {}
        with self._cursor("read") as cur:
            for chunk in _chunks(scenarios):
                query = (
                    "SELECT run_id, started_at, scenario, target, verdict, passes, decided, "
                    "pass_rate, ci_low, ci_high FROM (SELECT x.run_id, r.started_at, "
                    "x.scenario, x.target, x.verdict, x.passes, x.decided, x.pass_rate, "
                    "x.ci_low, x.ci_high, ROW_NUMBER() OVER (PARTITION BY x.scenario, x.target "
                    "ORDER BY r.started_at DESC, x.run_id DESC) AS n FROM results x JOIN runs r "
                    "ON r.run_id = x.run_id WHERE x.scenario IN "
                    f"({', '.join('?' * len(chunk))}) AND x.run_id <> ?) ranked "
                    "WHERE n <= ? ORDER BY started_at, run_id")
                rows = self._execute(cur, query, (*chunk, exclude_run or "", limit)).fetchall()
                for run_id, started, scen, tgt, verdict, passes, decided, rate, lo, hi in rows:
                    if (scen, tgt) in wanted:
                        out.setdefault((scen, tgt), []).append(TrendPoint(
                            run_id, started, verdict, passes, decided,
                            None if rate is None else float(rate), float(lo), float(hi)))
        return out


def _chunks(items: Sequence[str]) -> Iterator[Sequence[str]]:
    for i in range(0, len(items), IN_CHUNK):
        yield items[i:i + IN_CHUNK]


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _run(row: Sequence[Any]) -> RunEntry:
    d = dict(zip(_RUN_COLUMNS, row, strict=True))
    return RunEntry(
        run_id=d["run_id"], started_at=d["started_at"], finished_at=d["finished_at"],
        suite=d["suite"], git_commit=d["git_commit"], git_branch=d["git_branch"],
        run_dir=d["run_dir"], scenarios=d["scenarios"], passed=d["passed"],
        failed=d["failed"], inconclusive=d["inconclusive"], attempts=d["attempts"],
        pass_rate=None if d["pass_rate"] is None else float(d["pass_rate"]),
        interrupted=bool(d["interrupted"]), recorded_at=d["recorded_at"],
        recheck_of=d["recheck_of"])


def _result(row: Sequence[Any]) -> ResultEntry:
    d = dict(zip(_RESULT_COLUMNS, row, strict=True))
    d["pass_rate"] = None if d["pass_rate"] is None else float(d["pass_rate"])
    d["ci_low"], d["ci_high"] = float(d["ci_low"]), float(d["ci_high"])
    return ResultEntry(**d)


def _with(entry: RunEntry, **changes: Any) -> RunEntry:
    return msgspec.structs.replace(entry, **changes)
