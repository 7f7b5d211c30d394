"""Issue 22 item 15: merge refuses shards whose results overlap (an attempt of one shard
appended to another: "planned 3, runs 4") and shards whose plan.json was edited — exit 2,
naming the attempt or the scenario, and nothing made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import FakeServer, plain_suite, run_cli, the_run, write


@pytest.fixture
def shards(tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> list[Path]:
    server.script({"rules": [{"match": "", "replies": [{"text": "Hasta las 18:00."}]}]})
    plain_suite(tmp_path, server.url)
    for name in ("a", "b", "c"):
        write(tmp_path / f"{name}.yaml", f"""
            given: {{at: "2026-09-29T10:00:00-03:00"}}
            when: hours {name}
            then: [{{contains: "18:00"}}]
            runs: 1
            min_pass: 1
            """)
    out = []
    for i in (1, 2):
        r = run_cli("run", ".", "--shard", f"{i}/2", "--out", f"shard{i}", cwd=tmp_path)
        assert r.exit_code == 0, r.output
        out.append(the_run(tmp_path / f"shard{i}"))
    return out


def _merge(tmp_path: Path, shards: list[Path]) -> tuple[int, str]:
    r = run_cli("merge", *map(str, shards), "--out", "merged", cwd=tmp_path)
    return r.exit_code, r.output


def test_the_shards_as_their_runs_left_them_merge(tmp_path: Path, shards: list[Path]) -> None:
    code, out = _merge(tmp_path, shards)
    assert code == 0, out
    assert "planned 3" in out or "3" in out


def test_an_attempt_of_one_shard_appended_to_the_other_is_refused(
        tmp_path: Path, shards: list[Path]) -> None:
    one, two = shards
    line = (two / "results.jsonl").read_text().splitlines()[0]
    scenario = json.loads(line)["scenario"]
    with (one / "results.jsonl").open("a") as f:
        f.write(line + "\n")
    code, out = _merge(tmp_path, shards)
    assert code == 2
    assert out == (f"error: cannot merge: {one}/results.jsonl holds the attempt {scenario} × "
                   f"fake run 1, which the plan of {one} does not have (its scenario is "
                   "another shard's or no one's): the shards overlap; merge the shards as "
                   "their runs left them\n")
    assert not (tmp_path / "merged").exists()


def test_an_attempt_written_twice_is_refused(tmp_path: Path, shards: list[Path]) -> None:
    one = shards[0]
    line = (one / "results.jsonl").read_text().splitlines()[0]
    scenario = json.loads(line)["scenario"]
    with (one / "results.jsonl").open("a") as f:
        f.write(line + "\n")
    code, out = _merge(tmp_path, shards)
    assert code == 2
    assert out == (f"error: cannot merge: the attempt {scenario} × fake run 1 is twice in "
                   f"{one}/results.jsonl: merge the shards as their runs left them\n")


def test_a_run_beyond_the_planned_runs_is_refused(tmp_path: Path, shards: list[Path]) -> None:
    one = shards[0]
    record = json.loads((one / "results.jsonl").read_text().splitlines()[0])
    record["run"] = 2
    with (one / "results.jsonl").open("a") as f:
        f.write(json.dumps(record) + "\n")
    code, out = _merge(tmp_path, shards)
    assert code == 2
    assert out == (f"error: cannot merge: {one}/results.jsonl holds the attempt "
                   f"{record['scenario']} × fake run 2, but {record['scenario']} is planned "
                   "for 1 run: merge the shards as their runs left them\n")


@pytest.mark.parametrize(("edit", "differs"), [
    (lambda p: p["scenarios"][0].update(min_pass=0), "the scenario {first}"),
    (lambda p: p["scenarios"][0]["checks"].clear(), "the scenario {first}"),
    (lambda p: p["targets"][0].update(model="other"), "its targets, judge or counts"),
    (lambda p: p.update(attempts=1000), "its targets, judge or counts"),
])
def test_a_shard_whose_plan_json_was_edited_is_refused(
        tmp_path: Path, shards: list[Path], edit: object, differs: str) -> None:
    two = shards[1]
    plan = json.loads((two / "plan.json").read_text())
    first = plan["scenarios"][0]["id"]
    edit(plan)  # type: ignore[operator]
    (two / "plan.json").write_text(json.dumps(plan))
    code, out = _merge(tmp_path, shards)
    assert code == 2
    assert out == (f"error: cannot merge: {two}/plan.json was edited after its run: "
                   f"{differs.format(first=first)} differs from what the run planned; merge "
                   "the shards as their runs left them (or run the shard again)\n")
    assert not (tmp_path / "merged").exists()
