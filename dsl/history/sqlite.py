"""The default history: one SQLite file, ``.scenarist/history.db`` beside scenarist.yaml
(Python's own ``sqlite3``: nothing to install, nothing to run)."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from .store import HistoryError, SqlHistory

BUSY_TIMEOUT_S = 5.0  # how long a write waits for another process's (locks are short)


class SqliteHistory(SqlHistory):
    def __init__(self, path: Path, location: str | None = None) -> None:
        super().__init__(location or str(path))
        self.path = path

    def _connect(self) -> Any:
        if self.path.exists() and not self.path.is_file():
            raise HistoryError(f"cannot open the history {self.location}: it is not a file")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise HistoryError(f"cannot create the folder of the history {self.location}: "
                               f"{exc.strerror or exc}") from None
        # isolation_level None: transactions begin where this module says (BEGIN IMMEDIATE)
        conn = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_S, isolation_level=None)
        conn.execute("PRAGMA foreign_keys = ON")
        return conn

    def _lock(self, cur: Any) -> None:
        cur.execute("BEGIN IMMEDIATE")

    def _begin(self, cur: Any) -> None:
        cur.execute("BEGIN IMMEDIATE")

    def _errors(self) -> tuple[type[BaseException], ...]:
        return (sqlite3.Error, OSError)
