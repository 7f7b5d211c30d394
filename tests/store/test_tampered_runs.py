"""Issue 22 item 10: a tampered run folder (a CI artifact, a shared folder) is read as
regular files, bounded, each validated by its reader in dsl/store/: report, recheck, merge
and diff end with a located message and exit 2, never a traceback, never a hang."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import ONE_RUN, REPO, TOOL_THEN_ANSWER, FakeServer, plain_suite, the_run, write


def _cli(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=20)


@pytest.fixture
def run_dir(tmp_path: Path, server: FakeServer) -> Path:
    server.script(TOOL_THEN_ANSWER)
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", ONE_RUN)
    r = _cli(tmp_path, "run", "hours.yaml")
    assert r.returncode == 0, r.stderr
    return the_run(tmp_path / "runs")


def _tamper_results(run: Path, how: str) -> None:
    results = run / "results.jsonl"
    if how == "symlink to /dev/zero":
        results.unlink()
        results.symlink_to("/dev/zero")
    elif how == "fifo":
        results.unlink()
        os.mkfifo(results)
    elif how == "infinite latency":
        record = json.loads(results.read_text())
        record["latency_ms"] = float("inf")
        results.write_text(json.dumps(record) + "\n")
    else:  # pragma: no cover
        raise AssertionError(how)


@pytest.mark.parametrize(("how", "said"), [
    ("symlink to /dev/zero", "results.jsonl is a device, not a regular file"),
    ("fifo", "results.jsonl is a FIFO (named pipe), not a regular file"),
    ("infinite latency", "results.jsonl:1 is not valid JSON: Infinity is not a number JSON "
                         "allows"),
])
@pytest.mark.parametrize("command", ["report", "recheck", "merge"])
def test_tampered_results_are_one_located_sentence_and_exit_2(
        run_dir: Path, how: str, said: str, command: str) -> None:
    _tamper_results(run_dir, how)
    args = [command, str(run_dir)]
    if command == "merge":
        args += ["--out", str(run_dir.parent.parent / "merged")]
    r = _cli(run_dir.parent.parent, *args)
    assert r.returncode == 2, (r.stdout, r.stderr)
    assert "Traceback" not in r.stderr
    assert r.stderr.startswith("error: "), r.stderr
    assert r.stderr.count("\n") == 1, r.stderr
    assert f"{run_dir}/{said}" in r.stderr, r.stderr
    assert not (run_dir.parent.parent / "merged").exists()  # nothing half-made


def _line(run: Path) -> dict[str, object]:
    record: dict[str, object] = json.loads((run / "results.jsonl").read_text())
    return record


def _tampered_line(run: Path, how: str) -> None:
    """One line of results.jsonl edited by hand, as someone might (issue 31: each ends in
    one located sentence, mapped from msgspec's own located error)."""
    results = run / "results.jsonl"
    record = _line(run)
    if how == "wrong type":
        record["run"] = "1"
    elif how == "missing field":
        del record["scenario"]
    elif how == "unknown version":
        record["schema_version"] = 7
    elif how == "NaN where a count goes":
        record["steps"] = float("nan")
    elif how == "a wrong value deep inside":
        record["checks"][0]["status"] = "passed"  # type: ignore[index]
    if how == "truncated line":  # cut in the middle, with a whole line after it
        text = json.dumps(record)
        results.write_text(text[: len(text) // 2] + "\n" + text + "\n")
    else:
        results.write_text(json.dumps(record) + "\n")


@pytest.mark.parametrize(("how", "said"), [
    ("wrong type", ":1 is not an attempt record: 'run' is text, not a whole number"),
    ("missing field", ":1 is not an attempt record: 'scenario' is missing"),
    ("unknown version", ":1 has schema_version 7; this Scenarist reads version 1 (upgrade "
                        "Scenarist, or re-run to regenerate it)"),
    ("truncated line", ":1 is not valid JSON"),
    ("NaN where a count goes",
     ":1 is not an attempt record: 'steps' is a decimal number, not a whole number"),
    ("a wrong value deep inside", ":1 is not an attempt record: 'checks[0].status' is "
                                  "'passed', not pass, fail, unsure, error or not_evaluated"),
])
@pytest.mark.parametrize("command", ["report", "recheck", "merge"])
def test_an_edited_results_line_is_one_located_sentence_and_exit_2(
        run_dir: Path, how: str, said: str, command: str) -> None:
    _tampered_line(run_dir, how)
    args = [command, str(run_dir)]
    if command != "report":
        args += ["--out", str(run_dir.parent.parent / "out")]
    r = _cli(run_dir.parent.parent, *args)
    said = ("cannot merge: " if command == "merge" else "") + f"{run_dir / 'results.jsonl'}{said}"
    assert (r.returncode, r.stderr) == (2, f"error: {said}\n")
    assert not (run_dir.parent.parent / "out").exists()  # nothing half-made


def test_a_huge_results_file_is_refused_not_read(run_dir: Path) -> None:
    results = run_dir / "results.jsonl"
    with results.open("r+b") as f:  # sparse: no disk used
        f.truncate(5 * 2**30)
    r = _cli(run_dir.parent.parent, "report", str(run_dir))
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    assert f"error: {results} is larger than Scenarist reads (" in r.stderr, r.stderr


def _summary(run: Path) -> dict[str, object]:
    data: dict[str, object] = json.loads((run / "summary.json").read_text())
    return data


@pytest.mark.parametrize(("tamper", "said"), [
    (lambda s: s["scenarios"][0].update(passes=7),  # type: ignore[index]
     "summary.json is not a run summary: scenarios[0].passes is 7, more than its decided "
     "attempts (1)"),
    (lambda s: s.update(scenarios=[1, 2]),
     "summary.json is not a run summary: scenarios[0] is a whole number, not an object"),
    (lambda s: s["scenarios"][0].update(runs=-1),  # type: ignore[index]
     "summary.json is not a run summary: scenarios[0].runs is -1, not a count"),
])
def test_diff_of_a_tampered_summary_is_one_located_sentence_and_exit_2(
        run_dir: Path, tamper: object, said: str) -> None:
    data = _summary(run_dir)
    tamper(data)  # type: ignore[operator]
    other = run_dir.parent / "tampered"
    other.mkdir()
    (other / "summary.json").write_text(json.dumps(data))
    for args in ((str(run_dir), str(other)), (str(other), str(run_dir))):
        r = _cli(run_dir.parent.parent, "diff", *args)
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert "Traceback" not in r.stderr
        assert r.stderr == f"error: {other}/{said}\n"


@pytest.mark.parametrize("name", ["plan.json", "run.json", "summary.json"])
def test_json_files_of_a_run_folder_are_read_as_regular_files(run_dir: Path, name: str
                                                               ) -> None:
    path = run_dir / name
    path.unlink()
    os.mkfifo(path)
    r = _cli(run_dir.parent.parent, "diff", str(run_dir), str(run_dir)) if name == \
        "summary.json" else _cli(run_dir.parent.parent, "report", str(run_dir))
    assert "Traceback" not in r.stderr
    if name != "run.json":  # run.json is optional to the report: it reads what it can
        assert r.returncode == 2, (r.stdout, r.stderr)
        assert f"{path} is a FIFO (named pipe), not a regular file" in r.stderr


def test_the_report_is_never_written_through_a_planted_symlink(run_dir: Path) -> None:
    victim = run_dir.parent.parent / "victim.txt"
    victim.write_text("keep me\n")
    (run_dir / "report.html.tmp").symlink_to(victim)
    r = _cli(run_dir.parent.parent, "report", str(run_dir))
    assert r.returncode == 0, r.stderr
    assert victim.read_text() == "keep me\n"
    assert (run_dir / "report.html").is_file()
    assert not (run_dir / "report.html").is_symlink()


@pytest.mark.parametrize("command", ["report", "recheck", "merge"])
def test_a_nan_latency_as_the_json_module_writes_it_is_read(run_dir: Path, command: str
                                                            ) -> None:
    results = run_dir / "results.jsonl"
    record = json.loads(results.read_text())
    record["latency_ms"] = float("nan")
    results.write_text(json.dumps(record) + "\n")
    args = [command, str(run_dir)]
    if command != "report":
        args += ["--out", str(run_dir.parent.parent / "out")]
    r = _cli(run_dir.parent.parent, *args)
    assert "Traceback" not in r.stderr, r.stderr
    assert r.returncode == 0, (r.stdout, r.stderr)
