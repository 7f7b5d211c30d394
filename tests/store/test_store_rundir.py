"""The run folder (dsl/store/rundir.py) as functions, beside the end-to-end tests of kill,
resume and merge (tests/store/test_rundir.py): its name, its lock, results.jsonl written and read
back (a torn line, a line that is not a record), each attempt's latest record, the
attachments it keeps, and merge's refusals."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import msgspec
import pytest

from dsl.errors import RunDirError
from dsl.store import (
    AttemptRecord,
    ResultsWriter,
    RunLock,
    create_run_dir,
    iter_results,
    latest_records,
    merge_runs,
    new_run_id,
    read_attachment,
    read_plan,
    read_run_info,
    store_attachments,
    truncate_torn,
    write_json,
)


def rec(run: int, status: str = "pass", scenario: str = "s") -> AttemptRecord:
    r = AttemptRecord(scenario, "t", run, "pass", "ok", "2026-11-30T10:00:00.000+00:00")
    return msgspec.structs.replace(r, status=status)


def written(run_dir: Path, *records: AttemptRecord) -> Path:
    writer = ResultsWriter(run_dir)
    try:
        for r in records:
            writer.write(r)
    finally:
        writer.close()
    return run_dir / "results.jsonl"


def test_a_run_id_sorts_after_the_latest_even_when_the_clock_stands_still() -> None:
    now = dt.datetime(2026, 11, 30, 9, 15, tzinfo=dt.UTC)
    first = new_run_id(now)
    assert first.startswith("20261130-091500-000000-")
    second = new_run_id(now, after=first)
    assert second.startswith("20261130-091500-000001-")
    assert sorted([second, first]) == [first, second]


def test_a_run_folder_is_made_in_a_folder_and_nowhere_else(tmp_path: Path) -> None:
    made = create_run_dir(tmp_path / "runs")
    assert made.parent == tmp_path / "runs"
    assert list(made.iterdir()) == []
    (tmp_path / "afile").write_text("x")
    with pytest.raises(RunDirError) as exc:
        create_run_dir(tmp_path / "afile")
    assert str(exc.value) == (f"{tmp_path / 'afile'} is a file, not a folder: the run "
                              "folders go into a folder (the default is runs)")


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    with RunLock(tmp_path):
        assert (tmp_path / ".lock").read_text().startswith("pid ")
        with pytest.raises(RunDirError) as exc, RunLock(tmp_path):
            pass
    assert str(exc.value).startswith(f"{tmp_path} is being written by another scenarist "
                                     "process (pid ")
    with RunLock(tmp_path):  # released: the next one gets it
        pass


def test_records_read_back_in_order_and_a_torn_line_is_cut(tmp_path: Path) -> None:
    path = written(tmp_path, rec(1), rec(2, "fail"))
    assert [(r.run, r.status) for r in iter_results(tmp_path)] == [(1, "pass"), (2, "fail")]
    with path.open("a") as f:
        f.write('{"schema_version": 1, "scenario": "s", "tar')  # killed mid-line
    assert len(list(iter_results(tmp_path))) == 2  # the torn line is skipped...
    assert truncate_torn(tmp_path)  # ...and cut before anything is appended
    assert not truncate_torn(tmp_path)
    assert path.read_text().count("\n") == 2
    written(tmp_path, rec(3))
    assert [r.run for r in iter_results(tmp_path)] == [1, 2, 3]


def test_a_line_that_is_not_a_record_is_refused_with_its_line(tmp_path: Path) -> None:
    path = written(tmp_path, rec(1))
    with path.open("a") as f:
        f.write('{"schema_version": 1, "scenario": "s", "target": "t", "run": "2", '
                '"status": "pass"}\n')
    with pytest.raises(RunDirError) as exc:
        list(iter_results(tmp_path))
    assert str(exc.value) == f"{path}:2 is not an attempt record: 'run' is text, not a whole number"
    path.write_text("not json\n")
    with pytest.raises(RunDirError, match=r":1 is not valid JSON$"):
        list(iter_results(tmp_path))


def test_each_attempts_latest_record_after_errors_were_run_again(tmp_path: Path) -> None:
    written(tmp_path, rec(1), rec(2, "error"), rec(2, "pass"))
    write_json(tmp_path / "run.json", {"schema_version": 1, "run_id": "r"})
    assert [(r.run, r.status) for r in latest_records(tmp_path)] == [
        (1, "pass"), (2, "error"), (2, "pass")]  # run.json says no attempt ran twice
    write_json(tmp_path / "run.json", {"schema_version": 1, "run_id": "r",
                                       "reran_errors": True})
    assert [(r.run, r.status) for r in latest_records(tmp_path)] == [(1, "pass"), (2, "pass")]


def test_an_attachment_is_kept_once_and_read_only_as_itself(tmp_path: Path) -> None:
    content = b"Cierra a las 18:00."
    sha = hashlib.sha256(content).hexdigest()
    store_attachments(tmp_path, [(sha, content), (sha, content)])
    assert [p.name for p in (tmp_path / "attachments").iterdir()] == [sha]
    assert read_attachment(tmp_path, sha) == content
    (tmp_path / "attachments" / sha).write_bytes(b"changed")
    assert read_attachment(tmp_path, sha) is None  # not the file its name says
    assert read_attachment(tmp_path, "../../etc/passwd") is None


def shard(tmp_path: Path, name: str, i: int, scenarios: list[str], full: str = "F1") -> Path:
    d = tmp_path / name
    d.mkdir()
    write_json(d / "plan.json", {
        "schema_version": 1, "suite": "scenarist.yaml",
        "targets": [{"name": "t", "kind": "openai", "model": "m"}],
        "scenarios": [{"id": s, "file": f"{s}.yaml", "line": 1, "runs": 1, "min_pass": 1,
                       "checks": []} for s in scenarios],
        "attempts": len(scenarios), "max_model_calls": 6 * len(scenarios), "shard": [i, 3],
        "full_plan": full})
    write_json(d / "run.json", {
        "schema_version": 1, "run_id": name, "started_at": f"2026-11-30T10:0{i}:00+00:00",
        "finished_at": f"2026-11-30T10:1{i}:00+00:00", "duration_s": float(i),
        "git": {"commit": "abc", "branch": "main"},
        "early_stop": {"runs": 1, "model_calls": 2, "by_scenario": [
            {"scenario": scenarios[0], "target": "t", "runs": 1}]}})
    written(d, *(rec(1, scenario=s) for s in scenarios))
    return d


def test_shards_merge_into_one_plan_and_one_run(tmp_path: Path) -> None:
    a = shard(tmp_path, "a", 1, ["s1", "s2"])
    b = shard(tmp_path, "b", 2, ["s3"])
    out, missing = merge_runs([a, b], tmp_path / "merged")
    # shards written without full_scenarios: which scenarios 3/3 holds is not known
    assert [(m.shard, m.scenarios) for m in missing] == [((3, 3), None)]
    plan = read_plan(out)
    assert ([s.id for s in plan.scenarios], plan.shard, plan.attempts, plan.full_plan) == (
        ["s1", "s2", "s3"], None, 3, "F1")
    info = read_run_info(out)
    assert (info.merged_from, info.started_at, info.finished_at, info.duration_s) == (
        ("a", "b"), "2026-11-30T10:01:00+00:00", "2026-11-30T10:12:00+00:00", 2.0)
    assert info.early_stop is not None
    assert (info.early_stop.runs, info.early_stop.model_calls) == (2, 4)
    assert [r.scenario for r in iter_results(out)] == ["s1", "s2", "s3"]


def test_merge_refuses_other_plans_and_overlapping_shards(tmp_path: Path) -> None:
    a = shard(tmp_path, "a", 1, ["s1"])
    other = shard(tmp_path, "other", 2, ["s2"], full="F2")
    twice = shard(tmp_path, "twice", 2, ["s1"])
    with pytest.raises(RunDirError) as plans:
        merge_runs([a, other], tmp_path / "merged")
    assert str(plans.value) == ("these runs come from different plans (or different versions "
                                "of the files); merge only the shards of one run")
    with pytest.raises(RunDirError) as overlap:
        merge_runs([a, twice], tmp_path / "merged")
    assert str(overlap.value) == f"the scenario s1 is in both {a} and {twice}; merge each " \
                                 "shard once"
    assert not (tmp_path / "merged").exists()  # nothing made for a refused merge
    assert json.loads((a / "plan.json").read_text())["shard"] == [1, 3]  # nor changed
