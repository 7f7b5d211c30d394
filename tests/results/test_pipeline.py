"""The after-run chain as a function (``dsl.pipeline.finish``): summary → report → CI files
→ history → conformance certificate, the same for run, recheck, report and merge — each
command choosing only whether the report shows a trend and whether the run is recorded.
And the history it uses is the suite's own or ``SCENARIST_HISTORY``'s, never one a run
folder names: a tampered run.json is not connected to."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from dsl.errors import RunDirError
from dsl.history import Location, open_history
from dsl.pipeline import AfterRun, finish, history_here
from dsl.store import read_json
from dsl.store.summaryfile import summary_json
from tests.conftest import HOURS, TOOL_THEN_ANSWER, FakeServer, make_suite, run_cli, write
from tests.results.report_builders import demo_run, passing, scenario, write_run


def test_the_chain_writes_every_file_of_a_run_folder(tmp_path: Path) -> None:
    run = demo_run(tmp_path / "run")
    for name in ("summary.json", "report.html", "junit.xml", "summary.md"):
        (run / name).unlink(missing_ok=True)
    done = finish(run, AfterRun(trend=False, record=False))
    assert done.report == run / "report.html"
    assert read_json(run / "summary.json") == summary_json(done.summary)
    assert (run / "junit.xml").read_text("utf-8").startswith("<?xml")
    assert (run / "summary.md").read_text("utf-8").startswith("## Scenarist: 3 of 6 did not")
    assert "clinic.book_cleaning" in done.report.read_text("utf-8")
    assert (done.comparison, done.certificate, done.notes) == (None, None, ())


def test_the_chain_records_the_run_and_reads_the_trend_when_asked(tmp_path: Path) -> None:
    history = Location("sqlite", str(tmp_path / "history.db"))
    first = demo_run(tmp_path / "first", run_id="20261130-090000-aaaa")
    second = demo_run(tmp_path / "second", run_id="20261130-100000-bbbb")
    finish(first, AfterRun(history, record=False))
    with open_history(history) as store:
        assert store.runs() == []  # report: the trend only, nothing recorded
    finish(first, AfterRun(history))
    done = finish(second, AfterRun(history, replaces=("gone",)))
    assert done.notes == ()
    with open_history(history) as store:
        assert [r.run_id for r in store.runs()] == ["20261130-100000-bbbb",
                                                    "20261130-090000-aaaa"]
    assert "<h4>Over the last 2 runs</h4>" in done.report.read_text("utf-8")
    finish(second, AfterRun(history, trend=False, record=False))  # merge's report: no trend
    assert "Over the last" not in done.report.read_text("utf-8")


def test_a_history_that_cannot_be_read_is_a_warning_in_the_commands_words(
        tmp_path: Path) -> None:
    (tmp_path / "history.db").mkdir()  # a folder where the SQLite file should be
    history = Location("sqlite", str(tmp_path / "history.db"))
    run = demo_run(tmp_path / "run")
    (report_note,) = finish(run, AfterRun(history, record=False)).notes
    assert report_note.startswith("warning: the report has no trend: ")
    (run_note,) = finish(run, AfterRun(history)).notes
    assert run_note.startswith("warning: the run was not added to the history: ")
    assert run_note.endswith(f"add it later with: scenarist history import {run}")


def test_a_conformance_run_gets_its_certificate_again(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [scenario("conformance.plain", runs=2, min_pass=1)],
                    [passing("conformance.plain", 1), passing("conformance.plain", 2)])
    write(run / "conformance.json", json.dumps({
        "schema_version": 1, "endpoint": "fake-model at http://127.0.0.1:9/v1",
        "behaviours": [{"case": "conformance.plain", "builtin": True}]}))
    done = finish(run, AfterRun(trend=False, record=False))
    assert done.certificate is not None
    assert done.certificate.conclusion == "fake conforms: all 1 behaviours certified."
    kept = read_json(run / "conformance.json")
    assert (kept["certified"], kept["behaviours"][0]["builtin"]) == (True, True)


def test_a_file_that_cannot_be_written_is_one_sentence_with_the_commands_advice(
        tmp_path: Path) -> None:
    run = demo_run(tmp_path / "run")
    (tmp_path / "out.html").mkdir()  # the report's file is a folder: the disk says no
    with pytest.raises(RunDirError) as exc:
        finish(run, AfterRun(trend=False, record=False, report=tmp_path / "out.html",
                             then="Make room and try again."))
    assert str(exc.value) == (f"cannot write {tmp_path / 'out.html'}: Is a directory. "
                              "Make room and try again.")


def test_the_history_here_is_the_suites_or_the_environments(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCENARIST_HISTORY", raising=False)
    write(tmp_path / "suite" / "scenarist.yaml", "targets: {}\nhistory: team.db\n")
    (tmp_path / "suite" / "deep").mkdir()
    assert history_here(tmp_path / "suite" / "deep") == (
        Location("sqlite", str((tmp_path / "suite" / "team.db").resolve())), None)
    assert history_here(tmp_path) == (None, "no scenarist.yaml here or in a parent folder, "
                                            "so no history; run this from the suite's "
                                            "folder, or set SCENARIST_HISTORY")
    monkeypatch.setenv("SCENARIST_HISTORY", "off")
    assert history_here(tmp_path / "suite") == (
        None, "the history is off (history: false, or SCENARIST_HISTORY=off)")


@pytest.fixture
def listener() -> Iterator[tuple[int, list[str]]]:
    """A port on 127.0.0.1 that notes every connection to it (and closes it at once)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.1)
    seen: list[str] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            seen.append("connected")
            conn.close()

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield server.getsockname()[1], seen
    stop.set()
    thread.join()
    server.close()


def tamper(run_dir: Path, port: int) -> None:
    """run.json names a PostgreSQL history at ``port`` (a CI artifact someone edited)."""
    info = json.loads((run_dir / "run.json").read_text("utf-8"))
    info["history"] = {"kind": "postgresql", "target": f"postgresql://x@127.0.0.1:{port}/db"}
    (run_dir / "run.json").write_text(json.dumps(info), "utf-8")


def test_commands_that_read_a_run_folder_never_connect_to_the_history_it_names(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch, listener: tuple[int, list[str]]) -> None:
    monkeypatch.delenv("SCENARIST_HISTORY", raising=False)
    port, seen = listener
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    write(tmp_path / "other.yaml", HOURS.replace("clerk", "nurse") + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", "--out", "runs", cwd=tmp_path).exit_code == 0
    for shard in ("1/2", "2/2"):
        assert run_cli("run", "--shard", shard, "--out", "shards", cwd=tmp_path).exit_code == 0
    (run,) = (tmp_path / "runs").iterdir()
    shards = sorted((tmp_path / "shards").iterdir())
    for d in (run, *shards):
        tamper(d, port)
    report = run_cli("report", str(run), cwd=tmp_path)
    assert (report.exit_code, report.output) == (0, f"Report: {run / 'report.html'}\n")
    recheck = run_cli("recheck", str(run), "--out", "rechecked", cwd=tmp_path)
    assert recheck.exit_code == 0, recheck.output
    merged = run_cli("merge", *map(str, shards), "--out", "merged", cwd=tmp_path)
    assert merged.exit_code == 0, merged.output
    assert "warning" not in report.output + recheck.output + merged.output
    assert seen == []
    # what they recorded went into the suite's own history, and the recheck says so
    (rechecked,) = (tmp_path / "rechecked").iterdir()
    assert read_json(rechecked / "run.json")["history"] == {
        "kind": "sqlite", "target": str((tmp_path / ".scenarist" / "history.db").resolve())}
    with open_history(Location("sqlite", str(tmp_path / ".scenarist" / "history.db"))) as h:
        recorded = {r.run_id for r in h.runs()}
    assert rechecked.name in recorded
    assert next((tmp_path / "merged").iterdir()).name in recorded
    assert not {s.name for s in shards} & recorded  # the merged run replaced its shards
