"""The run under hostile conditions (issue 11): secrets that would cut through JSON, two
writers on one folder, re-recording against a dead endpoint, keys echoed by a broken
server, bad paths, a full disk, agents that exit or hang. Real server processes, real
subprocesses, the real command line."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.conftest import (
    HOURS,
    REPO,
    TOOL_THEN_ANSWER,
    FakeServer,
    cli_process,
    run_cli,
    suite_yaml,
    the_run,
    write,
)

AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"


def lines(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]


def hours_suite(tmp_path: Path, url: str, **extra: Any) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml(url, **extra))
    write(tmp_path / "hours.yaml", HOURS)
    return tmp_path


def test_secrets_in_tool_arguments_are_redacted_and_every_line_stays_json(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours",
                         "arguments": {"aws_secret_key": AWS_SECRET, "dni": 12345678}}]},
        {"text": "Hasta las 18:00 (DNI 87654321)."}]}]})
    hours_suite(tmp_path, server.url, redact={"patterns": {"dni": r"\b\d{8}\b"}})
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    run_dir = the_run(tmp_path / "runs")
    text = (run_dir / "results.jsonl").read_text()
    assert AWS_SECRET not in text
    assert "12345678" not in text
    assert "87654321" not in text
    records = lines(run_dir)  # every line is JSON
    assert len(records) == 3
    first = records[0]
    assert first["calls"][0]["args"] == {"aws_secret_key": "[REDACTED:aws-secret-key]",
                                         "dni": "[REDACTED:dni]"}
    assert first["answer"] == "Hasta las 18:00 (DNI [REDACTED:dni])."
    report = run_cli("report", str(run_dir), cwd=tmp_path)
    assert report.exit_code == 0, report.output
    resumed = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert resumed.exit_code == 0, resumed.output
    assert len(lines(run_dir)) == 3  # nothing was missing, nothing ran again
    # a cassette is redacted the same way: valid JSON, and it still replays
    r = run_cli("run", ".", "--record", "c.jsonl", "--out", "rec", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    cassette = (tmp_path / "c.jsonl").read_text()
    assert AWS_SECRET not in cassette
    assert "12345678" not in cassette
    assert all(json.loads(x) for x in cassette.splitlines())


def test_a_second_writer_of_a_run_folder_is_refused(tmp_path: Path, server: FakeServer,
                                                    cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    hours_suite(tmp_path, server.url)
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0
    run_dir = the_run(tmp_path / "runs")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from pathlib import Path; "
         "from dsl.store import RunLock\n"
         "with RunLock(Path(sys.argv[1])):\n    print('held', flush=True); time.sleep(60)",
         str(run_dir)], cwd=REPO, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)})
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "held\n"
        r = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
        assert r.exit_code == 2
        assert r.output == (f"error: {run_dir} is being written by another scenarist process "
                            f"(pid {holder.pid}); wait for it to end, or stop it, then try "
                            "again\n")
    finally:
        holder.kill()
        holder.wait()
    assert run_cli("run", "--resume", str(run_dir), cwd=tmp_path).exit_code == 0  # free again


def test_re_recording_against_a_dead_endpoint_keeps_the_cassette(
        tmp_path: Path, cli_env: dict[str, str], server: FakeServer) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}/v1"
    hours_suite(tmp_path, dead)
    cassette = write(tmp_path / "cassettes" / "local.jsonl", '{"header": "the old one"}\n'
                                                            '{"key": "k"}\n')
    before = cassette.read_bytes()
    r = run_cli("run", ".", "--record", "cassettes/local.jsonl", cwd=tmp_path)
    assert r.exit_code == 3
    assert cassette.read_bytes() == before
    assert ("Nothing was recorded (the endpoint answered nothing): cassettes/local.jsonl was "
            "kept as it was.\n") in r.output
    assert not (tmp_path / "cassettes" / "local.jsonl.partial").exists()

    server.script(TOOL_THEN_ANSWER)  # the endpoint is back: the new recording replaces it
    hours_suite(tmp_path, server.url)
    r = run_cli("run", ".", "--record", "cassettes/local.jsonl", "--no-early-stop",
                "--out", "again", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "Recorded 6 exchanges into cassettes/local.jsonl.\n" in r.output
    header = json.loads(cassette.read_text().splitlines()[0])
    assert header["kind"] == "scenarist-cassette"


def test_a_key_echoed_in_a_broken_status_line_never_reaches_the_terminal_or_run_json(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    key = "sk-test-Zx81kQ0rV7uYtP4sLm2n"
    server.script({"default": [{"raw_http": f"HTTP/1.1 2OO {key}\r\n\r\n"}]})
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "m",
                        "api_key_env": "SCENARIST_TEST_KEY", "timeout_ms": 5000,
                        "retry": {"max_attempts": 1}}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                  defaults={"runs": 6, "concurrency": 1}))
    write(tmp_path / "hours.yaml", HOURS)
    env = {**cli_env, "SCENARIST_TEST_KEY": key, "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "dsl", "run", "."], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 3, p.stderr
    run_dir = the_run(tmp_path / "runs")
    everything = p.stdout + p.stderr + "".join(
        f.read_text() for f in run_dir.iterdir() if f.is_file() and f.suffix != ".html")
    assert key not in everything
    assert key not in (run_dir / "report.html").read_text()
    # a reply that is not HTTP is the endpoint's (malformed: h11's words, the key redacted)
    errors = [rec["error"] for rec in lines(run_dir)]
    assert len(errors) == 6
    for error in errors:
        assert error["kind"] == "malformed"
        assert error["message"] == (f"the reply from {server.url} is not valid HTTP/1.1 "
                                    "(illegal status line: bytearray(b'HTTP/1.1 2OO "
                                    "[REDACTED:SCENARIST_TEST_KEY]'))")


def test_a_short_placeholder_key_is_redacted_too(tmp_path: Path, server: FakeServer,
                                                 cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"text": "My key is dummy. Hasta las 18:00."}]}]})
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "m",
                        "api_key_env": "SCENARIST_SHORT_KEY"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets))
    write(tmp_path / "hours.yaml", HOURS)
    env = {**cli_env, "SCENARIST_SHORT_KEY": "dummy", "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "dsl", "run", "."], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 1, p.stderr
    rec = lines(the_run(tmp_path / "runs"))[0]
    assert rec["answer"] == "My key is [REDACTED:SCENARIST_SHORT_KEY]. Hasta las 18:00."


def test_bad_paths_are_one_sentence_and_exit_2(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    hours_suite(tmp_path, server.url)
    write(tmp_path / "afile", "x")
    r = run_cli("run", ".", "--out", "afile", cwd=tmp_path)
    assert (r.exit_code, r.output) == (2, "error: afile is a file, not a folder: the run "
                                          "folders go into a folder (the default is runs)\n")
    (tmp_path / "cass").mkdir()
    r = run_cli("run", ".", "--record", "cass", cwd=tmp_path)
    assert (r.exit_code, r.output) == (2, "error: --record cass is a folder; give the "
                                          "cassette's file name, e.g. cass/recorded.jsonl\n")
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0
    run_dir = the_run(tmp_path / "runs")
    r = run_cli("report", str(run_dir), "-o", "nowhere/r.html", cwd=tmp_path)
    assert (r.exit_code, r.output) == (2, "error: cannot write the report to nowhere/r.html: "
                                          "the folder nowhere does not exist\n")
    r = run_cli("report", str(run_dir), "-o", "cass", cwd=tmp_path)
    assert (r.exit_code, r.output) == (2, "error: -o cass is a folder; give the report's "
                                          "file name, e.g. cass/report.html\n")


def _limit_file_size() -> None:
    # Writes past 40 kB fail with EFBIG (Python ignores SIGXFSZ): a disk that fills up
    # in the middle of a run, on any machine and without root.
    resource.setrlimit(resource.RLIMIT_FSIZE, (40_000, 40_000))


def test_a_full_disk_stops_the_run_in_one_sentence_and_resume_finishes_it(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, defaults={"runs": 40,
                                                                        "concurrency": 2}))
    write(tmp_path / "hours.yaml", HOURS)
    env = {**cli_env, "PYTHONPATH": str(REPO)}
    p = subprocess.run([sys.executable, "-m", "dsl", "run", ".", "--no-early-stop"],
                       cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
                       preexec_fn=_limit_file_size)
    run_dir = the_run(tmp_path / "runs")
    rel = run_dir.relative_to(tmp_path)
    assert p.returncode == 2, p.stderr
    assert "Traceback" not in p.stderr
    assert p.stderr == (f"error: cannot write {rel / 'results.jsonl'}: File too large. "
                        "The attempts written before are kept; make room, then finish the "
                        f"run with: scenarist run --resume {rel}\n")
    kept = (run_dir / "results.jsonl").read_text().splitlines(keepends=True)
    complete = [json.loads(x) for x in kept if x.endswith("\n")]
    assert 0 < len(complete) < 40
    resumed = subprocess.run([sys.executable, "-m", "dsl", "run", "--resume", str(run_dir)],
                             cwd=tmp_path, env=env, capture_output=True, text=True,
                             timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    runs = sorted(r["run"] for r in lines(run_dir))
    assert runs == list(range(1, 41))


EXITING_AGENT = '''
import sys

def run(env):
    if env.seed == 1:
        sys.exit(3)
    if env.seed == 2:
        raise KeyboardInterrupt
    return "Hoy hasta las 18:00."
'''


def test_an_agent_that_exits_ends_its_attempt_not_the_run(tmp_path: Path, server: FakeServer,
                                                           cli_env: dict[str, str]) -> None:
    module = "agent_exits_" + tmp_path.name.replace("-", "_")
    targets = {"mine": {"kind": "python", "entry": f"{module}:run"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                  defaults={"runs": 4, "min_pass_rate": 0.5}))
    write(tmp_path / f"{module}.py", EXITING_AGENT)
    write(tmp_path / "hours.yaml", HOURS.replace("  - calls: list_business_hours\n", ""))
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    recs = {x["run"]: x for x in lines(the_run(tmp_path / "runs"))}
    assert recs[1]["status"] == recs[2]["status"] == "error"
    assert recs[1]["reason"] == (f"agent: the agent raised SystemExit: 3 (at {module}.py:5 in "
                                 "run)")
    assert recs[2]["reason"] == (f"agent: the agent raised KeyboardInterrupt (at {module}.py:7 "
                                 "in run)")
    assert recs[3]["status"] == recs[4]["status"] == "pass"


HANGING_AGENT = '''
import time

def run(env):
    time.sleep(3600)
'''


def test_a_hanging_sync_agent_does_not_keep_the_process_alive(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    targets = {"mine": {"kind": "python", "entry": "hanging:run", "attempt_timeout_ms": 300}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                  defaults={"runs": 2}))
    write(tmp_path / "hanging.py", HANGING_AGENT)
    write(tmp_path / "hours.yaml", HOURS)
    started = time.monotonic()
    p = cli_process(tmp_path, "run", ".")
    assert p.wait(timeout=60) == 3  # two timeouts: no verdict
    assert time.monotonic() - started < 60  # it ended: the agent's threads did not hold it
    rec = lines(the_run(tmp_path / "runs"))[0]
    assert rec["reason"] == "timeout: the attempt took longer than 0.3 s (attempt_timeout_ms)"


def test_a_shard_that_holds_no_scenario_is_refused(tmp_path: Path, server: FakeServer,
                                                    cli_env: dict[str, str]) -> None:
    hours_suite(tmp_path, server.url)
    r = run_cli("run", ".", "--shard", "5/8", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error E220 the shard 5/8 holds no scenario: the suite has 1 scenario, "
                        "fewer than 8 shards\n  hint: split it into at most 1 shards\n")
    assert not (tmp_path / "runs").exists()


def test_files_that_are_not_files_never_block_lint_or_the_report(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    hours_suite(tmp_path, server.url)
    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    for name, said in (("fifo.yaml", "the path is a FIFO (named pipe), not a regular file"),
                       ("loop.yaml", "cannot read the file: it is a symbolic link that leads "
                                     "back to itself (a symlink loop)"),
                       ("zero.yaml", "the path is a device, not a regular file")):
        r = run_cli("lint", name, cwd=tmp_path)
        assert r.exit_code == 1
        assert r.output.startswith(f"{name}:1:1: error Y112 {said}\n"), r.output
    assert run_cli("run", "hours.yaml", cwd=tmp_path).exit_code == 0
    r = run_cli("report", str(the_run(tmp_path / "runs")), "-o", "fifo.yaml", cwd=tmp_path)
    assert (r.exit_code, r.output) == (2, "error: -o fifo.yaml is not a regular file (a device "
                                          "or a pipe); give the report's file name\n")
    assert (tmp_path / "fifo.yaml").is_fifo()  # not replaced by a file
