"""Issue 32 item 11: ``scenarist recheck RUNDIR --suite DIR`` reads the suite in DIR (a
copy, a moved folder); without it, recheck reads the suite the run names and says which
folder it read, and where that folder is gone says to pass ``--suite`` (exit 2)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from dsl.exits import EXIT_FAILED, EXIT_INPUT, EXIT_OK
from tests.conftest import (
    HOURS,
    TOOL_THEN_ANSWER,
    FakeServer,
    make_suite,
    records_of,
    run_cli,
    the_run,
    write,
)


def ran(tmp_path: Path, server: FakeServer) -> tuple[Path, Path]:
    """A suite in ``suite/`` (a scenario in a subfolder) and its run, kept in ``runs/``
    beside it."""
    suite = tmp_path / "suite"
    make_suite(suite, server, HOURS + "runs: 1\nmin_pass: 1\n")
    (suite / "clinic").mkdir()
    (suite / "hours.yaml").rename(suite / "clinic" / "hours.yaml")
    server.script(TOOL_THEN_ANSWER)
    r = run_cli("run", "clinic", "--out", str(tmp_path / "runs"), cwd=suite)
    assert r.exit_code == EXIT_OK, r.output
    return suite, the_run(tmp_path / "runs")


def stricter(folder: Path) -> None:
    """The same question, another check: a recheck of this folder fails."""
    f = folder / "clinic" / "hours.yaml"
    f.write_text(f.read_text().replace('contains: "18:00"', 'contains: "19:00"'))


def test_recheck_reads_the_suite_the_run_names_and_says_so(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite, run = ran(tmp_path, server)
    copy = tmp_path / "copy"
    shutil.copytree(suite, copy)
    stricter(copy)  # only the copy changed: the run names the original
    r = run_cli("recheck", str(run), "--out", str(tmp_path / "again"), cwd=tmp_path)
    assert r.exit_code == EXIT_OK, r.output
    assert r.output.splitlines()[-4:-2] == [
        f"Read the scenarios of {suite.resolve()} (the suite the run names)", ""]
    r = run_cli("recheck", str(run), "--suite", "copy", "--out", str(tmp_path / "copied"),
                cwd=tmp_path)
    assert r.exit_code == EXIT_FAILED, r.output
    assert r.output.splitlines()[-4:-2] == [
        f"Read the scenarios of {copy.resolve()} (--suite)", ""]
    (rec,) = records_of(the_run(tmp_path / "copied"))
    assert [c["status"] for c in rec["checks"]] == ["pass", "fail", "pass", "pass"]
    info = json.loads((the_run(tmp_path / "copied") / "run.json").read_text())
    assert info["settings"]["paths"] == [str(copy.resolve() / "clinic")]
    assert info["settings"]["root"] == str(copy.resolve())


def test_a_moved_suite_is_named_with_suite(tmp_path: Path, server: FakeServer,
                                           cli_env: dict[str, str]) -> None:
    suite, run = ran(tmp_path, server)
    moved = tmp_path / "moved"
    suite.rename(moved)
    r = run_cli("recheck", str(run), cwd=tmp_path)
    assert r.exit_code == EXIT_INPUT
    assert r.output == (
        f"error: cannot recheck {run}: the suite it ran, {suite.resolve()}, is no longer "
        "there; name the suite's folder with --suite DIR (a copy, or where it was moved)\n")
    stricter(moved)
    r = run_cli("recheck", str(run), "--suite", str(moved), "--out", str(tmp_path / "re"),
                cwd=tmp_path)
    assert r.exit_code == EXIT_FAILED, r.output
    assert f"Read the scenarios of {moved.resolve()} (--suite)" in r.output.splitlines()
    # a recheck of that recheck reads the folder it read
    again = the_run(tmp_path / "re")
    r = run_cli("recheck", str(again), "--out", str(tmp_path / "re2"), cwd=tmp_path)
    assert r.exit_code == EXIT_FAILED, r.output
    assert (f"Read the scenarios of {moved.resolve()} (the suite the run names)"
            in r.output.splitlines())


def test_suite_must_be_a_suite_that_holds_the_files(tmp_path: Path, server: FakeServer,
                                                    cli_env: dict[str, str]) -> None:
    suite, run = ran(tmp_path, server)
    (tmp_path / "empty").mkdir()
    r = run_cli("recheck", str(run), "--suite", "empty", cwd=tmp_path)
    assert r.exit_code == EXIT_INPUT
    assert r.output == (f"error: cannot recheck {run} with --suite empty: it has no "
                        "scenarist.yaml; name the folder that holds the suite's "
                        "scenarist.yaml\n")
    other = tmp_path / "other"
    write(other / "scenarist.yaml", (suite / "scenarist.yaml").read_text())
    r = run_cli("recheck", str(run), "--suite", "other", cwd=tmp_path)
    assert r.exit_code == EXIT_INPUT
    assert r.output == f"error: cannot recheck {run}: clinic (which it ran) is not in other\n"
    r = run_cli("recheck", str(run), "--suite", "nowhere", cwd=tmp_path)
    assert r.exit_code == EXIT_INPUT
    assert "Directory 'nowhere' does not exist." in r.output


def test_a_run_from_before_run_json_kept_its_suite(tmp_path: Path, server: FakeServer,
                                                   cli_env: dict[str, str]) -> None:
    suite, run = ran(tmp_path, server)
    info = json.loads((run / "run.json").read_text())
    del info["settings"]["root"]
    (run / "run.json").write_text(json.dumps(info))
    r = run_cli("recheck", str(run), "--out", str(tmp_path / "a"), cwd=tmp_path)
    assert r.exit_code == EXIT_OK, r.output
    assert (f"Read the scenarios of {suite.resolve()} (the suite the run names)"
            in r.output.splitlines())
    moved = tmp_path / "moved"
    suite.rename(moved)
    stricter(moved)
    r = run_cli("recheck", str(run), cwd=tmp_path)
    assert r.exit_code == EXIT_INPUT
    assert r.output == (
        f"error: cannot recheck {run}: {suite.resolve() / 'clinic'} (which it ran) no longer "
        "exists; name the suite's folder with --suite DIR (a copy, or where it was moved)\n")
    r = run_cli("recheck", str(run), "--suite", "moved", "--out", str(tmp_path / "b"),
                cwd=tmp_path)
    assert r.exit_code == EXIT_FAILED, r.output
    assert f"Read the scenarios of {moved.resolve()} (--suite)" in r.output.splitlines()
