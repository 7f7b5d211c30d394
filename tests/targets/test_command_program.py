"""``kind: command``: what the program is given (its environment, ``given.system``) and
that everything it starts ends with its attempt — real programs, run through the command
line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, records_of, run_cli, suite_yaml, the_run, write

# A program that answers with what it was given: its environment and its input line.
TELLS = """
import json, os, sys
line = sys.stdin.readline()
print(json.dumps({"answer": json.dumps({"env": dict(os.environ), "input": json.loads(line)})}),
      flush=True)
sys.stdin.readline()
"""

SYSTEM = """
given:
  at: 2026-09-29T10:00:00-03:00
  system: "You answer for the Clínica Norte; never give a diagnosis."
when: "hello"
then: [non_empty]
runs: 1
"""

SECRETS = {"MODEL_KEY": "sk-model-key-0123456789abcdef", "JUDGE_KEY": "judge-key-9f8e7d6c5b",
           "CLINIC_PIN": "pin-4471-secret", "UNRELATED": "something-else",
           "AGENT_OWN_KEY": "agent-own-key-55aa", "LANG": "es_AR.UTF-8",
           "LC_TIME": "es_AR.UTF-8", "TZ": "America/Argentina/Buenos_Aires"}


def told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **target: Any) -> dict[str, Any]:
    """What the program was given in one attempt of SYSTEM, in a suite whose other
    target, judge and redact name secrets."""
    for k, v in SECRETS.items():
        monkeypatch.setenv(k, v)
    script = write(tmp_path / "tells.py", TELLS)
    targets = {"model": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                         "api_key_env": "MODEL_KEY"},
               "judge": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "j",
                         "api_key_env": "JUDGE_KEY"},
               "cmd": {"kind": "command", "command": [sys.executable, str(script)],
                       "env": {"AGENT_MODEL": "qwen"}, **target}}
    write(tmp_path / "scenarist.yaml", suite_yaml(
        "http://127.0.0.1:9/v1", targets=targets, judge={"target": "judge"},
        redact={"env": ["CLINIC_PIN"]}))
    write(tmp_path / "system.yaml", SYSTEM)
    result = run_cli("run", ".", "--target", "cmd", "--out", "runs", cwd=tmp_path)
    (rec,) = records_of(the_run(tmp_path / "runs"))
    assert rec["status"] == "pass", result.output
    out: dict[str, Any] = json.loads(rec["answer"])
    return out


def test_a_program_gets_only_the_variables_it_is_given(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = told(tmp_path, monkeypatch)["env"]
    assert sorted(k for k in env if not k.startswith(("SCENARIST_", "LC_"))) == sorted(
        k for k in ("AGENT_MODEL", "HOME", "LANG", "LANGUAGE", "PATH", "TMPDIR", "TZ")
        if k == "AGENT_MODEL" or k in os.environ)
    assert env["AGENT_MODEL"] == "qwen"
    assert env["PATH"] == os.environ["PATH"]
    assert env["LC_TIME"] == "es_AR.UTF-8"
    assert env["TZ"] == "America/Argentina/Buenos_Aires"
    assert env["SCENARIST_SYSTEM"] == "You answer for the Clínica Norte; never give a diagnosis."
    assert sorted(k for k in env if k.startswith("SCENARIST_")) == [
        "SCENARIST_AT", "SCENARIST_MCP_URL", "SCENARIST_SCENARIO", "SCENARIST_SEED",
        "SCENARIST_SESSION", "SCENARIST_SYSTEM"]
    for name in ("MODEL_KEY", "JUDGE_KEY", "CLINIC_PIN", "UNRELATED", "AGENT_OWN_KEY"):
        assert name not in env
        assert SECRETS[name] not in json.dumps(env)


def test_pass_env_names_what_the_program_needs(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = told(tmp_path, monkeypatch, pass_env=["AGENT_OWN_KEY", "JUDGE_KEY", "NOT_SET"])["env"]
    assert env["AGENT_OWN_KEY"] == "agent-own-key-55aa"
    # named: the team's choice (passed, and redacted in what the run keeps)
    assert env["JUDGE_KEY"] == "[REDACTED:JUDGE_KEY]"
    assert "NOT_SET" not in env
    assert "MODEL_KEY" not in env
    assert "CLINIC_PIN" not in env
    assert "UNRELATED" not in env


def test_inherit_env_passes_the_run_s_environment_but_never_the_suite_s_secrets(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env = told(tmp_path, monkeypatch, inherit_env=True)["env"]
    assert env["UNRELATED"] == "something-else"
    assert env["AGENT_OWN_KEY"] == "agent-own-key-55aa"
    for name in ("MODEL_KEY", "JUDGE_KEY", "CLINIC_PIN"):
        assert name not in env


def test_the_program_is_told_given_system_in_its_environment_and_each_line(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    said = told(tmp_path, monkeypatch)["input"]
    assert said["system"] == "You answer for the Clínica Norte; never give a diagnosis."
    assert list(said) == ["turn", "message", "system", "confirmed", "cancelled", "messages"]


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


HI = ("hi", """
given:
  at: 2026-09-29T10:00:00-03:00
when: "hello"
then: [non_empty]
runs: 1
""")


@pytest.mark.parametrize("parent_exits", [False, True])
def test_a_grandchild_that_calls_setsid_ends_with_the_attempt(tmp_path: Path,
                                                              parent_exits: bool) -> None:
    """The program starts a child, which starts a grandchild that calls setsid() (a new
    session: out of the program's process group) and sleeps; with ``parent_exits`` the
    child exits at once, so the grandchild is adopted by init (a daemon's double fork)."""
    pidfile = tmp_path / "grandchild.pid"
    grandchild = (f"import os, time; os.setsid(); open({str(pidfile)!r}, 'w')"
                  ".write(str(os.getpid())); time.sleep(300)")
    child = (f"import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', "
             f"{grandchild!r}]); time.sleep(0 if {parent_exits} else 300)")
    script = write(tmp_path / "parent.py", f"""
import json, os, subprocess, sys, time
subprocess.Popen([sys.executable, "-c", {child!r}])
while not os.path.exists({str(pidfile)!r}):
    time.sleep(0.01)
time.sleep(0.1)
for line in sys.stdin:
    print(json.dumps({{"answer": "hi"}}), flush=True)
""")
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets={
        "cmd": {"kind": "command", "command": [sys.executable, str(script)],
                "timeout_ms": 60000}}))
    write(tmp_path / "hi.yaml", HI[1])
    result = run_cli("run", ".", "--out", "runs", cwd=tmp_path)
    assert records_of(the_run(tmp_path / "runs"))[0]["status"] == "pass", result.output
    pid = int(pidfile.read_text())
    end = time.monotonic() + 10
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.05)
    try:
        assert not _alive(pid)
    finally:
        if _alive(pid):
            os.kill(pid, 9)


def test_a_program_that_floods_its_output_leaves_no_traceback(tmp_path: Path) -> None:
    """A program that floods standard output and error and never answers: the attempt is
    an error that says so, and nothing asyncio leaves behind prints a traceback."""
    script = write(tmp_path / "flood.py", """
import sys
sys.stdin.readline()
while True:
    sys.stdout.write("x" * 65536)
    sys.stderr.write("y" * 65536)
""")
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets={
        "cmd": {"kind": "command", "command": [sys.executable, str(script)],
                "timeout_ms": 20000}}))
    write(tmp_path / "hi.yaml", HI[1].replace("runs: 1", "runs: 2"))
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "dsl", "run", ".", "--out", "runs"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    assert "Event loop is closed" not in output
    assert "Exception ignored" not in output
    assert [r["error"]["message"] for r in records_of(the_run(tmp_path / "runs"))] == [
        f"the program {sys.executable} printed a line longer than 8,388,608 bytes"] * 2


def test_a_program_that_sends_its_tools_garbage_leaves_no_server_log_in_the_output(
        tmp_path: Path) -> None:
    """uvicorn's "Invalid HTTP request received." (a client's mistake, logged by the run's
    MCP server) never reaches the run's output."""
    script = write(tmp_path / "garbage.py", """
import json, os, socket, sys
from urllib.parse import urlsplit
url = urlsplit(os.environ["SCENARIST_MCP_URL"])
for line in sys.stdin:
    for garbage in (b"\\x16\\x03\\x01 not http\\r\\n\\r\\n", b"NOT A REQUEST\\r\\n\\r\\n"):
        with socket.create_connection((url.hostname, url.port)) as raw:
            raw.sendall(garbage)
            raw.settimeout(10)
            raw.recv(1000)
    print(json.dumps({"answer": "hi"}), flush=True)
""")
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets={
        "cmd": {"kind": "command", "command": [sys.executable, str(script)]}}))
    write(tmp_path / "hi.yaml", HI[1])
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "dsl", "run", ".", "--out", "runs"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert records_of(the_run(tmp_path / "runs"))[0]["status"] == "pass", done.stdout
    assert "Invalid HTTP request" not in done.stdout + done.stderr
    assert "WARNING" not in done.stdout + done.stderr
