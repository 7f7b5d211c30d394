"""The history: every run indexed in a store, so that a result outlives its run folder.

::

    run folder (run.json, summary.json) ──entry_from_run──▶ RunEntry
        ──HistoryStore.record──▶ the store (SQLite file, or a PostgreSQL server)
        ──runs / run / trends──▶ ``scenarist runs list``, ``runs show``, the report's trend

* :mod:`~dsl.history.store` — the values (:class:`RunEntry`, :class:`ResultEntry`,
  :class:`TrendPoint`), the interface (:class:`HistoryStore`) and the SQL both stores
  share (:class:`SqlHistory`);
* :mod:`~dsl.history.migrations` — the schema, as numbered migrations applied in order;
* :mod:`~dsl.history.sqlite` — the default: ``.scenarist/history.db`` beside
  scenarist.yaml (the standard library's ``sqlite3``);
* :mod:`~dsl.history.postgresql` — a shared server for a team (``psycopg``, the
  ``scenarist[postgresql]`` extra);
* :mod:`~dsl.history.locate` — which store: ``SCENARIST_HISTORY``, else ``history:`` in
  scenarist.yaml, else the default; how a location is shown (never with its password);
  what the compiler asks of a suite's ``history:``, without opening anything;
* :func:`open_history` (here) — the store at a location.

A run folder becomes a :class:`RunEntry` in ``dsl/results/entries.py`` (with the git
commit and branch the run recorded).

Writing the history is the last thing a run does, after its folder is complete: a store
that cannot be written (locked, server down) is a warning, never a lost run — and
``scenarist history import RUNDIR`` adds the run later.
"""

from pathlib import Path

from .locate import (
    DEFAULT_HISTORY,
    HISTORY_ENV,
    Location,
    location_for,
    location_from_setting,
    setting_problem,
)
from .store import HistoryError, HistoryStore, ResultEntry, RunEntry, TargetEntry, TrendPoint

__all__ = ["DEFAULT_HISTORY", "HISTORY_ENV", "HistoryError", "HistoryStore", "Location",
           "ResultEntry", "RunEntry", "TargetEntry", "TrendPoint", "location_for",
           "location_from_setting", "open_history", "setting_problem"]


def open_history(location: Location) -> HistoryStore:
    """The store at ``location``; it connects and migrates on first use (HistoryError)."""
    if location.kind == "postgresql":
        from .postgresql import PostgresHistory  # why: psycopg, only for a server's history

        return PostgresHistory(location.target, location.shown)
    if location.kind == "sqlite":
        from .sqlite import SqliteHistory  # why: sqlite3, only for a file's history

        return SqliteHistory(Path(location.target), location.shown)
    raise HistoryError(f"unknown history kind {location.kind!r}")
