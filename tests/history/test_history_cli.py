"""The history through the command line, against both stores: every run is recorded,
``runs list``, ``runs show``, ``history import``, the report's trend, merge — and a history
that cannot be written warns and never loses the run folder."""

from __future__ import annotations

import itertools
import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import (
    HOURS,
    TOOL_THEN_ANSWER,
    FakeServer,
    Postgres,
    make_suite,
    run_cli,
    suite_yaml,
    write,
)

_counter = itertools.count()


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path,
          monkeypatch: pytest.MonkeyPatch) -> str:
    """Which history the suite writes: the default SQLite file, or a new database on the
    session's PostgreSQL server (the password only in PGPASSWORD)."""
    if request.param == "sqlite":
        return str(tmp_path / ".scenarist" / "history.db")
    pg: Postgres = request.getfixturevalue("postgres")
    db = pg.new_database(f"cli{next(_counter)}")
    monkeypatch.setenv("PGPASSWORD", pg.password)
    return pg.url(db)


def suite(tmp_path: Path, server: FakeServer, store: str) -> Path:
    extra = {} if store.endswith(".db") else {"history": store}
    make_suite(tmp_path, server, HOURS + "runs: 2\nmin_pass: 1\n", **extra)
    server.script(TOOL_THEN_ANSWER)
    return tmp_path


def run_ids(tmp_path: Path) -> list[str]:
    return sorted(p.name for p in (tmp_path / "runs").iterdir())


def test_every_run_is_recorded_and_listed(tmp_path: Path, server: FakeServer,
                                          cli_env: dict[str, str], store: str) -> None:
    suite(tmp_path, server, store)
    for _ in range(2):
        assert run_cli("run", cwd=tmp_path).exit_code == 0
    first, second = run_ids(tmp_path)
    listed = run_cli("runs", "list", cwd=tmp_path)
    assert listed.exit_code == 0
    lines = listed.output.splitlines()
    assert [line.split()[0] for line in lines[:2]] == [second, first]
    assert lines[0].endswith("1/1 passed  fake (fake-model)")
    assert lines[-1] == f"2 runs in the history {store}"
    by_scenario = run_cli("runs", "list", "--scenario", "hours", "--target", "fake",
                          cwd=tmp_path).output.splitlines()
    assert by_scenario[1] == "    PASS  fake  2/2  100% [34–100]"
    assert run_cli("runs", "list", "--scenario", "nothing", cwd=tmp_path).output == (
        f"No runs that ran nothing in the history {store}.\n")
    shown = run_cli("runs", "show", second[:22], cwd=tmp_path)
    assert shown.exit_code == 0
    out = shown.output.splitlines()
    assert out[0] == f"Run {second}"
    assert "  targets   fake (fake-model)" in out
    assert f"  folder    {tmp_path / 'runs' / second}" in out
    assert out[-1] == "PASS  hours  fake    2/2   min 1   100% [34–100]"
    as_json = json.loads(run_cli("runs", "show", second, "--json", cwd=tmp_path).output)
    assert as_json["results"][0]["ci_low"] == pytest.approx(0.3423802275066532, abs=1e-12)
    # the second run's report shows the trend: the first run, then itself
    html = (tmp_path / "runs" / second / "report.html").read_text()
    assert "<h4>Over the last 2 runs</h4>" in html
    assert f"<code>{second}</code> <span class=\"muted\">(this run)</span>" in html
    first_html = (tmp_path / "runs" / first / "report.html").read_text()
    assert "Over the last" not in first_html  # nothing before it
    again = run_cli("report", str(tmp_path / "runs" / first), cwd=tmp_path)
    assert again.exit_code == 0
    assert "<h4>Over the last 2 runs</h4>" in (tmp_path / "runs" / first / "report.html"
                                               ).read_text()


def test_history_import_backfills_runs(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str], store: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    suite(tmp_path, server, store)
    monkeypatch.setenv("SCENARIST_HISTORY", "off")
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    monkeypatch.delenv("SCENARIST_HISTORY")
    assert run_cli("runs", "list", cwd=tmp_path).output == f"No runs in the history {store}.\n"
    folders = [str(tmp_path / "runs" / r) for r in run_ids(tmp_path)]
    (tmp_path / "not-a-run").mkdir()
    out = run_cli("history", "import", *folders, str(tmp_path / "not-a-run"), cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output.splitlines() == [
        f"error: {tmp_path / 'not-a-run'} was not imported: {tmp_path / 'not-a-run' / 'plan.json'}"
        f" does not exist; is {tmp_path / 'not-a-run'} a run folder?",
        f"Added 2 runs to the history {store}."]
    again = run_cli("history", "import", *folders, cwd=tmp_path)  # twice: replaced
    assert again.exit_code == 0
    assert run_cli("runs", "list", cwd=tmp_path).output.splitlines()[-1] == (
        f"2 runs in the history {store}")


def test_the_password_is_never_written(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str], postgres: Postgres,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    db = postgres.new_database(f"pw{next(_counter)}")
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    monkeypatch.setenv("SCENARIST_HISTORY", postgres.url(db, password=True))
    out = run_cli("run", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    assert postgres.password not in out.output
    for p in tmp_path.rglob("*"):
        if p.is_file():
            assert postgres.password not in p.read_bytes().decode("utf-8", "replace"), p
    (run_dir,) = (tmp_path / "runs").iterdir()
    kept = json.loads((run_dir / "run.json").read_text())["history"]
    assert kept == {"kind": "postgresql", "target": postgres.url(db)}
    listed = run_cli("runs", "list", cwd=tmp_path)
    assert listed.output.splitlines()[-1] == f"1 run in the history {postgres.url(db)}"


WARNING = ("warning: the run was not added to the history: cannot {what} the history {where}: "
           "{why}. The run folder is complete; add it later with: scenarist history import "
           "{run_dir}")


def test_a_history_that_cannot_be_written_warns_and_keeps_the_run(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    (tmp_path / ".scenarist").mkdir()
    (tmp_path / ".scenarist" / "history.db").mkdir()  # not a file
    out = run_cli("run", cwd=tmp_path)
    assert out.exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    where = tmp_path / ".scenarist" / "history.db"
    assert (f"warning: the run was not added to the history: cannot open the history {where}: "
            "it is not a file. The run folder is complete; add it later with: scenarist "
            f"history import runs/{run_dir.name}") in out.output.splitlines()
    assert {p.name for p in run_dir.iterdir()} >= {"results.jsonl", "summary.json",
                                                  "report.html", "junit.xml", "summary.md"}


def test_a_locked_history_warns_and_keeps_the_run(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sqlite3

    from dsl.history import sqlite as history_sqlite

    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0  # the history exists
    monkeypatch.setattr(history_sqlite, "BUSY_TIMEOUT_S", 0.05)
    holder = sqlite3.connect(tmp_path / ".scenarist" / "history.db", isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")  # another process writes it, for ever
    try:
        out = run_cli("run", cwd=tmp_path)
    finally:
        holder.rollback()
        holder.close()
    assert out.exit_code == 0
    second = run_ids(tmp_path)[-1]
    where = tmp_path / ".scenarist" / "history.db"
    assert WARNING.format(what="read", where=where, why="database is locked",
                          run_dir=f"runs/{second}") in out.output.splitlines()
    assert (tmp_path / "runs" / second / "summary.json").exists()
    imported = run_cli("history", "import", f"runs/{second}", cwd=tmp_path)
    assert imported.exit_code == 0
    assert imported.output == f"Added 1 run to the history {where}.\n"


def test_a_server_that_is_down_warns_and_keeps_the_run(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    from tests.conftest import _free_port

    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    url = f"postgresql://ci:pw-never-shown@127.0.0.1:{_free_port()}/scenarist"
    monkeypatch.setenv("SCENARIST_HISTORY", url)
    out = run_cli("run", cwd=tmp_path)
    assert out.exit_code == 0
    assert "pw-never-shown" not in out.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    shown = f"postgresql://ci@127.0.0.1:{url.rsplit(':', 1)[1]}"
    (warning,) = [line for line in out.output.splitlines() if line.startswith("warning:")]
    assert warning.startswith(f"warning: the run was not added to the history: cannot read "
                              f"the history {shown}: ")
    assert warning.endswith(f"The run folder is complete; add it later with: scenarist "
                            f"history import runs/{run_dir.name}")
    assert (run_dir / "summary.json").exists()
    listed = run_cli("runs", "list", cwd=tmp_path)
    assert listed.exit_code == 4
    assert listed.output.startswith(f"error: cannot read the history {shown}: ")


def test_runs_commands_say_what_is_missing(tmp_path: Path, server: FakeServer,
                                           cli_env: dict[str, str], store: str) -> None:
    (tmp_path / "elsewhere").mkdir()
    out = run_cli("runs", "list", cwd=tmp_path / "elsewhere")
    assert out.exit_code == 2
    assert out.output == ("error: no scenarist.yaml here or in a parent folder, so no history; "
                          "run this from the suite's folder, or set SCENARIST_HISTORY\n")
    suite(tmp_path, server, store)
    out = run_cli("runs", "show", "nope", cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output == (f"error: the history {store} has no run 'nope'; see scenarist runs "
                          "list\n")


def test_history_false_turns_it_off(tmp_path: Path, server: FakeServer,
                                    cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n", history=False)
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    assert not (tmp_path / ".scenarist" / "history.db").exists()
    out = run_cli("runs", "list", cwd=tmp_path)
    assert (out.exit_code, out.output) == (2, "error: the history is off (history: false, or "
                                              "SCENARIST_HISTORY=off)\n")


def test_a_password_in_scenarist_yaml_is_refused(tmp_path: Path, server: FakeServer,
                                                 cli_env: dict[str, str]) -> None:
    write(tmp_path / "scenarist.yaml",
          suite_yaml(server.url, history="postgresql://ci:s3cret@db/scenarist"))
    write(tmp_path / "hours.yaml", HOURS)
    out = run_cli("lint", cwd=tmp_path)
    assert out.exit_code == 1
    assert ("scenarist.yaml:68:14: error E221 the history URL holds a password, and "
            "scenarist.yaml is shared; leave it out and set PGPASSWORD (or ~/.pgpass, or the "
            "whole URL in SCENARIST_HISTORY) where the run happens\n"
            '  68 |   "history": "postgresql://ci:***@db/scenarist"\n'
            "     |              ^\n") in out.output
    assert "s3cret" not in out.output
    for fmt in ("json", "github"):
        assert "s3cret" not in run_cli("lint", "--format", fmt, cwd=tmp_path).output


def test_the_git_commit_and_branch_are_recorded(tmp_path: Path, server: FakeServer,
                                                cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    git = ["git", "-C", str(tmp_path), "-c", "user.name=t", "-c", "user.email=t@example.org"]
    subprocess.run([*git, "init", "-q", "-b", "feature/x"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    subprocess.run([*git, "commit", "-qm", "scenarios"], check=True)
    commit = subprocess.run([*git, "rev-parse", "HEAD"], check=True, capture_output=True,
                            text=True).stdout.strip()
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    assert json.loads((run_dir / "run.json").read_text())["git"] == {
        "commit": commit, "branch": "feature/x", "dirty": None}
    shown = run_cli("runs", "show", run_dir.name, cwd=tmp_path).output.splitlines()
    assert f"  commit    {commit} (feature/x)" in shown
    assert commit[:8] + " feature/x" in run_cli("runs", "list", cwd=tmp_path).output


def test_a_merged_run_replaces_its_shards_in_the_history(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    write(tmp_path / "other.yaml", HOURS.replace("description:", "id: other\ndescription:")
          + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    for shard in ("1/2", "2/2"):
        assert run_cli("run", "--shard", shard, "--out", "shards", cwd=tmp_path).exit_code == 0
    shards = sorted((tmp_path / "shards").iterdir())
    assert len(run_cli("runs", "list", cwd=tmp_path).output.splitlines()) == 4
    merged = run_cli("merge", *map(str, shards), cwd=tmp_path)
    assert merged.exit_code == 0, merged.output
    lines = run_cli("runs", "list", cwd=tmp_path).output.splitlines()
    assert lines[-1] == f"1 run in the history {tmp_path / '.scenarist' / 'history.db'}"
    assert "2/2 passed" in lines[0]


UNKNOWN_SCHEME = ("the history is a URL with the scheme '{}', and Scenarist knows "
                  "postgresql:// or postgres:// (PostgreSQL) only; give "
                  "postgresql://user@host/database, or a file name for SQLite")


def _files(root: Path) -> set[Path]:
    return set(root.rglob("*"))


@pytest.mark.parametrize("scheme", ["postgressql", "mysql"])
def test_scenarist_history_with_an_unknown_scheme_is_refused(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str], scheme: str,
        monkeypatch: pytest.MonkeyPatch) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    before = _files(tmp_path)
    monkeypatch.setenv("SCENARIST_HISTORY", f"{scheme}://u:PW-never-shown@host/db")
    expected = f"error: SCENARIST_HISTORY cannot be used: {UNKNOWN_SCHEME.format(scheme)}\n"
    for command in (["run"], ["runs", "list"], ["runs", "show", "x"],
                    ["history", "import", str(tmp_path)]):
        out = run_cli(*command, cwd=tmp_path)
        assert (out.exit_code, out.output) == (2, expected), command
    assert _files(tmp_path) == before  # no SQLite file, no run folder, no run.json
    assert server.requests() == []


def test_history_with_an_unknown_scheme_in_scenarist_yaml_is_refused(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n",
               history="postgressql://u:PW-never-shown@host/db")
    before = _files(tmp_path)
    for command in ("lint", "run"):
        out = run_cli(command, cwd=tmp_path)
        assert out.exit_code == (1 if command == "lint" else 2)
        assert (f"scenarist.yaml:68:14: error E221 {UNKNOWN_SCHEME.format('postgressql')}\n"
                '  68 |   "history": "postgressql://u:***@host/db"\n'
                "     |              ^\n") in out.output
        assert "PW-never-shown" not in out.output
    out = run_cli("runs", "list", cwd=tmp_path)
    assert (out.exit_code, out.output) == (
        2, f"error: {tmp_path / 'scenarist.yaml'}: {UNKNOWN_SCHEME.format('postgressql')}\n")
    assert _files(tmp_path) == before


def test_report_and_merge_warn_of_an_unknown_scheme_and_go_on(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n", history=False)
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    (run_dir,) = (tmp_path / "runs").iterdir()
    monkeypatch.setenv("SCENARIST_HISTORY", "mysql://u:PW-never-shown@host/db")
    problem = f"SCENARIST_HISTORY cannot be used: {UNKNOWN_SCHEME.format('mysql')}"
    out = run_cli("report", str(run_dir), cwd=tmp_path)
    assert out.exit_code == 0
    assert f"warning: the report has no trend: {problem}\n" in out.output
    out = run_cli("merge", str(run_dir), "--out", str(tmp_path / "merged"), cwd=tmp_path)
    assert out.exit_code == 0, out.output
    assert f"warning: the run was not added to the history: {problem}\n" in out.output
    assert "PW-never-shown" not in out.output
    assert not list(tmp_path.glob("mysql*"))


@pytest.mark.parametrize("holds", ["tables", "migration"])
def test_a_locked_postgresql_history_warns_and_keeps_the_run(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str], postgres: Postgres,
        monkeypatch: pytest.MonkeyPatch, holds: str) -> None:
    """Another session holds a lock (on the tables, or the migration's advisory lock) for
    as long as the test lasts: the run waits LOCK_TIMEOUT_S (made short here), warns and
    ends; before, it waited for the whole lock."""
    import threading

    import psycopg

    from dsl.history import postgresql as history_postgresql

    db = postgres.new_database(f"locked{next(_counter)}")
    monkeypatch.setenv("PGPASSWORD", postgres.password)
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n", history=postgres.url(db))
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0  # the history exists
    monkeypatch.setattr(history_postgresql, "LOCK_TIMEOUT_S", 0.2)
    holder = psycopg.connect(postgres.url(db, password=True))
    if holds == "tables":
        holder.execute("LOCK TABLE scenarist_schema, runs, run_targets, results "
                       "IN ACCESS EXCLUSIVE MODE")
    else:
        holder.execute("SELECT pg_advisory_xact_lock(%s)", (history_postgresql.MIGRATION_LOCK,))
    # The lock goes at the latest after 60 s, so that a run that waits for it ends (and
    # this test fails) rather than hangs.
    release = threading.Timer(60, holder.rollback)
    release.start()
    try:
        out = run_cli("run", cwd=tmp_path)
    finally:
        release.cancel()
        holder.rollback()
        holder.close()
    assert out.exit_code == 0
    second = run_ids(tmp_path)[-1]
    why = "another session has held a lock on its tables for more than 0.2 s"
    assert WARNING.format(what="read", where=postgres.url(db), why=why,
                          run_dir=f"runs/{second}") in out.output.splitlines()
    assert (tmp_path / "runs" / second / "summary.json").exists()
    imported = run_cli("history", "import", f"runs/{second}", cwd=tmp_path)
    assert imported.output == f"Added 1 run to the history {postgres.url(db)}.\n"
