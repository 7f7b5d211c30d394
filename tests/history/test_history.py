"""The history: the same cases against both stores — SQLite and a real PostgreSQL server
(started by the session's ``postgres`` fixture) — then the commands through the CLI."""

from __future__ import annotations

import itertools
import json
import sqlite3
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from dsl.history import HistoryError, Location, ResultEntry, RunEntry, TargetEntry, open_history
from dsl.history.locate import (
    location_for,
    location_from_setting,
    setting_problem,
    without_password,
)
from dsl.history.migrations import CREATE_SCHEMA_TABLE, MIGRATIONS, SCHEMA_VERSION
from dsl.history.store import HistoryStore
from tests.conftest import Postgres

_counter = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> Location:
    """A new, empty history of each kind."""
    if request.param == "sqlite":
        return Location("sqlite", str(tmp_path / ".scenarist" / "history.db"))
    pg: Postgres = request.getfixturevalue("postgres")
    db = pg.new_database(f"h{next(_counter)}")
    return Location("postgresql", pg.url(db, password=True))


@pytest.fixture
def store(location: Location) -> Iterator[HistoryStore]:
    with open_history(location) as s:
        yield s


def result(scenario: str, target: str = "t", passes: int = 5, decided: int = 5,
           verdict: str = "pass") -> ResultEntry:
    from dsl.results.stats import wilson

    low, high = wilson(passes, decided)
    return ResultEntry(scenario, target, verdict, 5, decided, decided, passes,
                       decided - passes, 0, 0, 4, passes / decided if decided else None,
                       low, high)


def entry(run_id: str, started: str, *results: ResultEntry, **kw: Any) -> RunEntry:
    targets = kw.pop("targets", (TargetEntry("t", "openai", "m1"),))
    return RunEntry(run_id, started, None, "scenarist.yaml", "abc123", "main", f"/runs/{run_id}",
                    len(results), sum(r.verdict == "pass" for r in results),
                    sum(r.verdict == "fail" for r in results), 0,
                    sum(r.runs for r in results), None, False, targets, results, **kw)


def test_a_new_store_is_at_the_latest_schema(store: HistoryStore) -> None:
    assert store.schema_version() == SCHEMA_VERSION == 2


def test_a_run_is_recorded_and_read_back(store: HistoryStore) -> None:
    e = entry("20260101-100000-000001-aaaa", "2026-01-01T10:00:00+00:00",
              result("s1"), result("s2", passes=2, verdict="fail"),
              targets=(TargetEntry("t", "openai", "m1"), TargetEntry("u", "replay", "c.jsonl")))
    store.record(e)
    back = store.run(e.run_id)
    assert back is not None
    assert back.recorded_at is not None
    assert msgspec.structs.replace(back, recorded_at=None) == e
    assert store.run("nope") is None


def test_recording_a_run_again_replaces_it(store: HistoryStore) -> None:
    store.record(entry("r1", "2026-01-01T10:00:00+00:00", result("s1")))
    store.record(entry("r1", "2026-01-01T10:00:00+00:00", result("s2")))
    again = store.run("r1")
    assert again is not None
    assert [r.scenario for r in again.results] == ["s2"]
    assert len(store.runs()) == 1


def test_runs_are_listed_latest_first_and_filtered(store: HistoryStore) -> None:
    store.record(entry("r1", "2026-01-01T10:00:00+00:00", result("s1"), result("s2")))
    store.record(entry("r2", "2026-01-02T10:00:00+00:00", result("s1")))
    store.record(entry("r3", "2026-01-03T10:00:00+00:00", result("s2", target="u"),
                       targets=(TargetEntry("u", "openai", "m2"),)))
    assert [r.run_id for r in store.runs()] == ["r3", "r2", "r1"]
    assert [r.run_id for r in store.runs(limit=2)] == ["r3", "r2"]
    assert [r.run_id for r in store.runs(scenario="s2")] == ["r3", "r1"]
    assert [r.run_id for r in store.runs(target="u")] == ["r3"]
    assert [r.run_id for r in store.runs(scenario="s2", target="t")] == ["r1"]
    assert store.runs(scenario="zzz") == []
    assert store.runs()[0].targets == (TargetEntry("u", "openai", "m2"),)
    assert store.runs()[0].results == ()  # the list leaves the rows out


def test_a_run_is_found_by_the_start_of_its_id(store: HistoryStore) -> None:
    store.record(entry("20260101-100000-000001-aaaa", "2026-01-01T10:00:00+00:00"))
    store.record(entry("20260101-100000-000002-bbbb", "2026-01-01T10:00:01+00:00"))
    store.record(entry("20260102-100000-000001-cccc", "2026-01-02T10:00:00+00:00"))
    found = store.run("20260102")
    assert found is not None
    assert found.run_id == "20260102-100000-000001-cccc"
    with pytest.raises(HistoryError, match="^several runs start with '20260101' "
                       r"\(20260101-100000-000001-aaaa, 20260101-100000-000002-bbbb\); give "
                       "more of the id$"):
        store.run("20260101")
    assert store.run("2026010_") is None  # _ and % are not wildcards


def test_trends_are_the_last_runs_oldest_first(store: HistoryStore) -> None:
    for day in range(1, 14):
        store.record(entry(f"r{day:02}", f"2026-01-{day:02}T10:00:00+00:00",
                           result("s1", passes=day % 6, decided=5),
                           result("s2")))
    found = store.trends([("s1", "t"), ("zzz", "t")], limit=10, exclude_run="r13")
    assert list(found) == [("s1", "t")]
    points = found[("s1", "t")]
    assert [p.run_id for p in points] == [f"r{d:02}" for d in range(3, 13)]
    p = points[-1]  # day 12: 0 of 5
    assert (p.passes, p.decided, p.pass_rate, p.ci_low) == (0, 5, 0.0, 0.0)
    assert p.ci_high == pytest.approx(0.43448246478317536, abs=1e-12)


def test_a_merged_run_replaces_its_shards(store: HistoryStore) -> None:
    store.record(entry("shard1", "2026-01-01T10:00:00+00:00", result("s1")))
    store.record(entry("shard2", "2026-01-01T10:00:00+00:00", result("s2")))
    store.record(entry("merged", "2026-01-01T10:00:00+00:00", result("s1"), result("s2")),
                 replaces=("shard1", "shard2"))
    assert [r.run_id for r in store.runs()] == ["merged"]


def _raw(location: Location) -> Any:
    if location.kind == "sqlite":
        Path(location.target).parent.mkdir(parents=True, exist_ok=True)
        return sqlite3.connect(location.target, isolation_level=None), "?"
    import psycopg

    return psycopg.connect(location.target, autocommit=True), "%s"


def test_an_older_store_is_migrated_and_keeps_its_runs(location: Location) -> None:
    conn, mark = _raw(location)
    conn.execute(CREATE_SCHEMA_TABLE)
    for statement in MIGRATIONS[0].statements:  # a store written by schema version 1
        conn.execute(statement)
    conn.execute(f"INSERT INTO scenarist_schema VALUES (1, 'v1', {mark})", ("2026",))
    conn.execute("INSERT INTO runs (run_id, started_at, scenarios, passed, failed, "
                 "inconclusive, attempts, interrupted, recorded_at) VALUES "
                 f"('old', '2025-01-01', 1, 1, 0, 0, 5, 0, {mark})", ("2025",))
    conn.close()
    with open_history(location) as s:
        assert s.schema_version() == 2
        (old,) = s.runs()
        assert (old.run_id, old.recheck_of) == ("old", None)
        s.record(entry("new", "2026-01-01", result("s1"), recheck_of="old"))
        assert s.run("new").recheck_of == "old"  # type: ignore[union-attr]
    conn, _ = _raw(location)
    versions = conn.execute("SELECT version, description FROM scenarist_schema "
                            "ORDER BY version").fetchall()
    conn.close()
    assert [tuple(v) for v in versions] == [
        (1, "v1"), (2, "rechecks: the run a recheck re-applied checks to; runs by time")]


def test_a_store_from_a_newer_scenarist_is_refused(location: Location) -> None:
    conn, mark = _raw(location)
    conn.execute(CREATE_SCHEMA_TABLE)
    conn.execute(f"INSERT INTO scenarist_schema VALUES (99, 'future', {mark})", ("2030",))
    conn.close()
    with open_history(location) as s, pytest.raises(HistoryError) as err:
        s.runs()
    shown = location.shown
    assert str(err.value) == (f"the history {shown} has schema version 99, written by a newer "
                              "Scenarist (this one knows up to 2); upgrade Scenarist to use it")


def test_processes_opening_a_new_store_at_once_migrate_it_once(location: Location) -> None:
    errors: list[BaseException] = []

    def open_and_write(i: int) -> None:
        try:
            with open_history(location) as s:
                s.record(entry(f"r{i}", f"2026-01-0{i + 1}", result("s1")))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    with open_history(location) as s:
        assert len(s.runs()) == 4
    conn, _ = _raw(location)
    assert [tuple(r) for r in conn.execute(
        "SELECT version FROM scenarist_schema ORDER BY version").fetchall()] == [(1,), (2,)]
    conn.close()


def test_the_password_is_never_shown(postgres: Postgres) -> None:
    url = postgres.url("nosuchdb", password=True)
    loc = Location("postgresql", url)
    assert postgres.password in url
    assert loc.shown == postgres.url("nosuchdb")
    with open_history(loc) as s, pytest.raises(HistoryError) as err:
        s.runs()
    assert postgres.password not in str(err.value)
    assert str(err.value).startswith(f"cannot read the history {loc.shown}: ")
    assert 'database "nosuchdb" does not exist' in str(err.value)


def test_a_postgresql_history_waits_a_bounded_time(postgres: Postgres) -> None:
    """Its session's lock and statement timeouts (a locked history is a warning: see
    test_history_cli's test_a_locked_postgresql_history_warns_and_keeps_the_run)."""
    db = postgres.new_database("bounded")
    with open_history(Location("postgresql", postgres.url(db, password=True))) as s:
        s.schema_version()
        cur = s._conn.cursor()  # type: ignore[attr-defined]
        assert cur.execute("SELECT current_setting('lock_timeout'), "
                           "current_setting('statement_timeout')").fetchone() == ("5s", "30s")


def test_a_server_that_is_down_is_said_in_words() -> None:
    from tests.conftest import _free_port

    loc = Location("postgresql", f"postgresql://u:pw@127.0.0.1:{_free_port()}/db")
    with open_history(loc) as s, pytest.raises(HistoryError) as err:
        s.record(entry("r1", "2026-01-01"))
    assert str(err.value).startswith(f"cannot write to the history {loc.shown}: ")
    assert "pw" not in str(err.value).replace("postgresql", "")


def test_a_sqlite_history_that_is_not_a_file(tmp_path: Path) -> None:
    (tmp_path / "h.db").mkdir()
    loc = Location("sqlite", str(tmp_path / "h.db"))
    with open_history(loc) as s, pytest.raises(HistoryError) as err:
        s.runs()
    assert str(err.value) == f"cannot open the history {tmp_path / 'h.db'}: it is not a file"


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://ci:secret@db:5432/scenarist", "postgresql://ci@db:5432/scenarist"),
    ("postgresql://ci@db/scenarist?password=secret&sslmode=require",
     "postgresql://ci@db/scenarist?sslmode=require"),
    ("postgres://db/scenarist", "postgres://db/scenarist"),
])
def test_without_password(url: str, shown: str) -> None:
    assert without_password(url) == shown


def test_where_the_history_is(tmp_path: Path) -> None:
    default = location_from_setting(None, tmp_path)
    assert default == Location("sqlite", str(tmp_path / ".scenarist" / "history.db"))
    assert location_from_setting(False, tmp_path) is None
    assert location_from_setting("h/runs.db", tmp_path) == Location(
        "sqlite", str(tmp_path / "h" / "runs.db"))
    pg = location_from_setting("postgresql://ci@db/s", tmp_path)
    assert pg == Location("postgresql", "postgresql://ci@db/s")
    env = {"SCENARIST_HISTORY": "postgresql://ci:pw@db/s"}
    assert location_for(tmp_path, None, env=env) == Location("postgresql",
                                                             "postgresql://ci:pw@db/s")
    assert location_for(tmp_path, None, env={"SCENARIST_HISTORY": "off"}) is None
    kept = {"kind": "sqlite", "target": "/x/h.db"}
    assert location_for(None, kept=kept, env={}) == Location("sqlite", "/x/h.db")
    assert location_for(None, kept=None, env={}) is None


@pytest.mark.parametrize(("setting", "problem"), [
    ("postgresql://ci:pw@db/s", "the history URL holds a password, and scenarist.yaml is "
     "shared; leave it out and set PGPASSWORD (or ~/.pgpass, or the whole URL in "
     "SCENARIST_HISTORY) where the run happens"),
    ("mysql://db/s", "the history is a URL with the scheme 'mysql', and Scenarist knows "
     "postgresql:// or postgres:// (PostgreSQL) only; give postgresql://user@host/database, "
     "or a file name for SQLite"),
    ("u:pw@db://s", "the history is a URL with no scheme, and Scenarist knows postgresql:// "
     "or postgres:// (PostgreSQL) only; give postgresql://user@host/database, or a file "
     "name for SQLite"),
    ("", "history must be a PostgreSQL URL, a file name, or false"),
    ("postgresql://ci@db/s", None), (".scenarist/h.db", None), (False, None),
])
def test_what_history_in_scenarist_yaml_may_be(setting: Any, problem: str | None) -> None:
    assert setting_problem(setting) == problem


def test_entries_json() -> None:
    from dsl.history.views import run_json

    data = run_json(entry("r1", "2026-01-01", result("s1")))
    assert data["targets"] == [{"name": "t", "kind": "openai", "model": "m1"}]
    assert data["results"][0]["scenario"] == "s1"
    json.dumps(data)
