"""The run folder over its life: kill -9 and resume, a plan that changed, re-running errors,
Ctrl-C, shards and merge — real processes."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

from tests.conftest import (
    EARLY,
    HOURS,
    ONE_RUN,
    TOOL_THEN_ANSWER,
    FakeServer,
    cli_process,
    early_suite,
    plain_suite,
    records_of,
    run_cli,
    the_run,
    wait_for_lines,
    write,
)

SLOW = {"rules": [{"match": "case", "replies": [
    {"tool_calls": [{"name": "list_business_hours", "arguments": {}}], "delay_ms": 60},
    {"text": "Hasta las 18:00.", "delay_ms": 60}]}]}


def slow_suite(tmp_path: Path, url: str) -> None:
    plain_suite(tmp_path, url)
    for i in range(6):
        write(tmp_path / f"case{i}.yaml", HOURS.replace("¿Hasta qué hora atendemos hoy?",
                                                        f"case {i}") + "runs: 4\nmin_pass: 3\n")


def wait_for_run_folder(parent: Path, process: subprocess.Popen[str],
                        timeout: float = 30) -> Path:
    """The run folder ``process`` makes in ``parent``, once it is there. Fails after
    ``timeout`` seconds, or as soon as the process ends without one."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if parent.exists() and any(parent.iterdir()):
            return the_run(parent)
        if process.poll() is not None:
            raise AssertionError(f"the run ended (exit {process.returncode}) before it made a "
                                 f"folder in {parent}")
        time.sleep(0.01)
    raise AssertionError(f"no run folder in {parent} after {timeout} s")


def totals(run_dir: Path) -> dict[str, tuple[int, int, int]]:
    s = json.loads((run_dir / "summary.json").read_text())
    return {r["scenario"]: (r["runs"], r["passes"], r["errors"]) for r in s["scenarios"]}


def test_sigkill_then_resume_gives_the_same_totals(tmp_path: Path, server: FakeServer) -> None:
    server.script(SLOW)
    slow_suite(tmp_path, server.url)
    ref = cli_process(tmp_path, "run", ".", "--no-early-stop", "--out", "ref", "-j", "2")
    assert ref.wait(60) == 0, ref.stderr.read() if ref.stderr else ""
    expected = totals(the_run(tmp_path / "ref"))

    victim = cli_process(tmp_path, "run", ".", "--no-early-stop", "--out", "killed", "-j", "2")
    run_dir = wait_for_run_folder(tmp_path / "killed", victim)
    wait_for_lines(run_dir / "results.jsonl", 5)
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    before = (run_dir / "results.jsonl").read_text().count("\n")
    assert 5 <= before < 24
    assert not (run_dir / "summary.json").exists()
    with (run_dir / "results.jsonl").open("a") as f:  # as if killed in the middle of a write
        f.write('{"schema_version": 1, "scenario": "case0", "tar')

    resumed = cli_process(tmp_path, "run", "--resume", str(run_dir))
    assert resumed.wait(60) == 0, resumed.stderr.read() if resumed.stderr else ""
    assert totals(run_dir) == expected
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 24
    keys = [(json.loads(x)["scenario"], json.loads(x)["run"]) for x in lines]
    assert len(set(keys)) == 24  # nothing ran twice


def test_resume_refuses_a_plan_that_changed(tmp_path: Path, server: FakeServer,
                                            cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", ONE_RUN)
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0
    run_dir = the_run(tmp_path / "runs")
    write(tmp_path / "hours.yaml", ONE_RUN.replace('contains: "18:00"', 'contains: "19:00"'))
    write(tmp_path / "new.yaml", ONE_RUN)
    r = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == (f"error: cannot resume {run_dir}: the plan changed since it started: "
                        "scenario new was added; scenario hours changed (checks). Start a new "
                        "run instead.\n")


def test_resume_retry_errors_reruns_only_the_errors(tmp_path: Path, server: FakeServer,
                                                    cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "by_seed": {
        "2": [{"status": 503, "body": "down"}]},
        "replies": TOOL_THEN_ANSWER["rules"][0]["replies"]}]})
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS + "runs: 3\nmin_pass: 3\n")
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 3
    run_dir = the_run(tmp_path / "runs")
    assert totals(run_dir) == {"hours": (3, 2, 1)}
    assert run_cli("run", "--resume", str(run_dir), cwd=tmp_path).exit_code == 3  # nothing new
    server.script(TOOL_THEN_ANSWER)
    r = run_cli("run", "--resume", str(run_dir), "--retry-errors", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert totals(run_dir) == {"hours": (3, 3, 0)}
    assert len(server.requests()) == 2  # only run 2, a tool call and an answer


def test_ctrl_c_finishes_in_flight_attempts_and_reports(tmp_path: Path,
                                                        server: FakeServer) -> None:
    server.script(SLOW)
    slow_suite(tmp_path, server.url)
    p = cli_process(tmp_path, "run", ".", "--no-early-stop", "-j", "2")
    run_dir = wait_for_run_folder(tmp_path / "runs", p)
    wait_for_lines(run_dir / "results.jsonl", 3)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "Interrupted: finishing 2 attempt(s) in flight" in err
    assert f"Finish the run with: scenarist run --resume {Path('runs') / run_dir.name}" in err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["totals"]["attempts"] == len(records_of(run_dir)) < 24
    assert (run_dir / "report.html").exists()
    assert "Traceback" not in err


def test_shards_merge_into_the_same_verdicts(tmp_path: Path, server: FakeServer,
                                             cli_env: dict[str, str]) -> None:
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    whole = run_cli("run", ".", "--out", "whole", "--no-early-stop", cwd=tmp_path)
    for i in (1, 2):
        run_cli("run", ".", "--shard", f"{i}/2", "--out", f"shard{i}", "--no-early-stop",
                cwd=tmp_path)
    shard_ids = [{s["id"] for s in json.loads((the_run(tmp_path / f"shard{i}") / "plan.json")
                                               .read_text())["scenarios"]} for i in (1, 2)]
    assert shard_ids == [{"always", "odd"}, {"never"}]
    r = run_cli("merge", str(the_run(tmp_path / "shard1")), str(the_run(tmp_path / "shard2")),
                "--out", "merged", cwd=tmp_path)
    assert r.exit_code == whole.exit_code == 1
    assert totals(the_run(tmp_path / "merged")) == totals(the_run(tmp_path / "whole"))
    again = run_cli("merge", str(the_run(tmp_path / "shard1")), str(the_run(tmp_path / "shard1")),
                    "--out", "bad", cwd=tmp_path)
    assert again.exit_code == 2
    assert "error: cannot merge: the scenario always is in both" in again.output
    partial = run_cli("merge", str(the_run(tmp_path / "shard1")), "--out", "partial",
                      cwd=tmp_path)
    assert "warning: shard(s) 2/2 are missing" in partial.output


def test_merge_refuses_runs_of_different_plans(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    run_cli("run", ".", "--shard", "1/2", "--out", "a", cwd=tmp_path)
    write(tmp_path / "extra.yaml", ONE_RUN)
    run_cli("run", ".", "--shard", "2/2", "--out", "b", cwd=tmp_path)
    r = run_cli("merge", str(the_run(tmp_path / "a")), str(the_run(tmp_path / "b")), cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error: cannot merge: these runs come from different plans (or "
                        "different versions of the files); merge only the shards of one run\n")


def test_run_ids_sort_by_time_even_within_one_second(tmp_path: Path) -> None:
    import datetime as dt

    from dsl.store import create_run_dir, new_run_id

    t = dt.datetime(2026, 11, 30, 9, 15, 0, 500, tzinfo=dt.UTC)
    ids = [new_run_id(t + dt.timedelta(microseconds=i)) for i in (0, 1, 999_998)]
    assert ids == sorted(ids)
    assert ids[0].startswith("20261130-091500-000500-")
    assert len(ids[0]) == len("20261130-091500-000500-ab12")
    # the clock stands still or steps back: the new id still sorts after the latest
    later = new_run_id(t - dt.timedelta(hours=1), after=ids[-1])
    assert later > ids[-1]
    assert later.startswith("20261130-091501-000499-")
    made = [create_run_dir(tmp_path).name for _ in range(20)]
    assert made == sorted(made)
    assert sorted(p.name for p in tmp_path.iterdir())[-1] == made[-1]
