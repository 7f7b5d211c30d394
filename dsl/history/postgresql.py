"""A shared history for a team: a PostgreSQL server, so that CI jobs on many machines
write one history (``history: postgresql://user@host/db`` in scenarist.yaml, or the
``SCENARIST_HISTORY`` environment variable).

The client is psycopg 3 (the ``scenarist[postgresql]`` extra). The password is never
written by Scenarist: libpq reads it from ``PGPASSWORD`` or ``~/.pgpass``, or from the URL in
``SCENARIST_HISTORY`` — and every message shows the URL without it.
"""

from __future__ import annotations

from typing import Any

from .locate import without_password
from .store import HistoryError, SqlHistory

CONNECT_TIMEOUT_S = 10  # a server that is down answers nothing: do not wait for ever
# Another session holding a lock on the history's tables, or a server too busy to answer,
# never keeps a run waiting after its results are printed: a statement waits for a lock as
# long as a SQLite history waits for its file (sqlite.BUSY_TIMEOUT_S), and runs for at most
# STATEMENT_TIMEOUT_S; then the history is a warning and the run goes on.
LOCK_TIMEOUT_S = 5.0
STATEMENT_TIMEOUT_S = 30.0
MIGRATION_LOCK = 0x5C3E_A415  # pg_advisory_xact_lock key: one migrating process at a time


class PostgresHistory(SqlHistory):
    def __init__(self, url: str, location: str) -> None:
        super().__init__(location)
        self.url = url

    def _connect(self) -> Any:
        try:
            # why: psycopg, only for a PostgreSQL history
            import psycopg
        except ImportError:
            raise HistoryError(
                f"the history {self.location} is a PostgreSQL server, and its client is not "
                "installed: pip install 'scenarist[postgresql]'") from None
        conn = psycopg.connect(self.url, connect_timeout=CONNECT_TIMEOUT_S,
                               application_name="scenarist")
        try:  # SET, not the startup packet's options (which poolers such as PgBouncer refuse)
            conn.execute("SELECT set_config('lock_timeout', %s, false), "
                         "set_config('statement_timeout', %s, false)",
                         (f"{round(LOCK_TIMEOUT_S * 1000)}ms",
                          f"{round(STATEMENT_TIMEOUT_S * 1000)}ms"))
            conn.commit()
        except BaseException:
            conn.close()
            raise
        return conn

    def _lock(self, cur: Any) -> None:
        cur.execute("SELECT pg_advisory_xact_lock(%s)", (MIGRATION_LOCK,))

    def _sql(self, query: str) -> str:
        return query.replace("%", "%%").replace("?", "%s")

    def _describe(self, exc: BaseException) -> str:
        sqlstate = getattr(exc, "sqlstate", None)
        if sqlstate == "55P03":  # lock_not_available: lock_timeout passed
            return (f"another session has held a lock on its tables for more than "
                    f"{LOCK_TIMEOUT_S:g} s")
        if sqlstate == "57014":  # query_canceled: statement_timeout passed
            return f"the server took more than {STATEMENT_TIMEOUT_S:g} s to answer"
        # libpq's messages may quote the connection string; never its password
        text = super()._describe(exc)
        return text.replace(self.url, without_password(self.url))

    def _errors(self) -> tuple[type[BaseException], ...]:
        try:
            # why: psycopg, only for a PostgreSQL history
            import psycopg
        except ImportError:  # _connect says so in words
            return (OSError,)
        return (psycopg.Error, OSError)
