"""The history's schema, as numbered migrations.

A store keeps the migrations it has applied in ``scenarist_schema`` (one row per version,
with when and what). Opening a store applies, in one transaction, every migration whose
version is above the highest recorded — so a store made by an older Scenarist is brought up
to date the first time a newer one opens it, and two processes that open a new store at
once apply each migration once (SQLite: ``BEGIN IMMEDIATE``; PostgreSQL: an advisory
lock). A store whose version is above :data:`SCHEMA_VERSION` was written by a newer
Scenarist, and is refused rather than misread.

The statements are plain SQL that SQLite and PostgreSQL both run. To change the schema,
append a :class:`Migration` (never edit one that has shipped): its version is the next
number, its statements move a store of the previous version to the new one.
"""

from __future__ import annotations

import msgspec


class Migration(msgspec.Struct, frozen=True):
    version: int
    description: str
    statements: tuple[str, ...]


MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "runs, their targets, and each scenario × target's result", (
        """CREATE TABLE runs (
            run_id TEXT PRIMARY KEY,
            started_at TEXT,
            finished_at TEXT,
            suite TEXT,
            git_commit TEXT,
            git_branch TEXT,
            run_dir TEXT,
            scenarios INTEGER NOT NULL,
            passed INTEGER NOT NULL,
            failed INTEGER NOT NULL,
            inconclusive INTEGER NOT NULL,
            attempts INTEGER NOT NULL,
            pass_rate DOUBLE PRECISION,
            interrupted INTEGER NOT NULL,
            recorded_at TEXT NOT NULL
        )""",
        """CREATE TABLE run_targets (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            position INTEGER NOT NULL,
            name TEXT NOT NULL,
            kind TEXT,
            model TEXT,
            PRIMARY KEY (run_id, name)
        )""",
        """CREATE TABLE results (
            run_id TEXT NOT NULL REFERENCES runs (run_id) ON DELETE CASCADE,
            scenario TEXT NOT NULL,
            target TEXT NOT NULL,
            verdict TEXT NOT NULL,
            planned INTEGER NOT NULL,
            runs INTEGER NOT NULL,
            decided INTEGER NOT NULL,
            passes INTEGER NOT NULL,
            fails INTEGER NOT NULL,
            unsure INTEGER NOT NULL,
            errors INTEGER NOT NULL,
            min_pass INTEGER NOT NULL,
            pass_rate DOUBLE PRECISION,
            ci_low DOUBLE PRECISION NOT NULL,
            ci_high DOUBLE PRECISION NOT NULL,
            PRIMARY KEY (run_id, scenario, target)
        )""",
        "CREATE INDEX results_by_scenario ON results (scenario, target)",
    )),
    Migration(2, "rechecks: the run a recheck re-applied checks to; runs by time", (
        "ALTER TABLE runs ADD COLUMN recheck_of TEXT",
        "CREATE INDEX runs_by_time ON runs (started_at, run_id)",
    )),
)

SCHEMA_VERSION = MIGRATIONS[-1].version

CREATE_SCHEMA_TABLE = """CREATE TABLE IF NOT EXISTS scenarist_schema (
    version INTEGER PRIMARY KEY,
    description TEXT NOT NULL,
    applied_at TEXT NOT NULL
)"""
