"""``kind: http`` and ``kind: command``: agents that run their own loop, with the
scenario's fake tools served over MCP — against real processes on 127.0.0.1 (the scripted
agent tests/ownagent.py, which takes its tools with the official Python MCP client)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, records_of, run_cli, suite_yaml, the_run, write

AGENT = REPO / "tests" / "ownagent.py"
TOKEN = "tok-3f9c1d7e-never-on-disk"


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    env = {**os.environ, "AGENT_TOKEN": TOKEN, "OWNAGENT_LOG": "/dev/null"}
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait()


def http_target(url: str, **extra: Any) -> dict[str, Any]:
    return {"kind": "http", "url": url + "/chat", "api_key_env": "AGENT_TOKEN",
            "headers": {"X-Team": "clinic"},
            "body": {"message": "{{ message }}", "session": "{{ session }}",
                     "tools_url": "{{ mcp_url }}", "now": "{{ at }}", "turn": "{{ turn }}",
                     "confirmed": "{{ confirmed }}", "cancelled": "{{ cancelled }}"},
            "answer": "reply.text", "pending": "held", "timeout_ms": 20000,
            "retry": {"max_attempts": 1}, **extra}


def command_target(**extra: Any) -> dict[str, Any]:
    return {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
            "timeout_ms": 20000, **extra}


def suite(tmp_path: Path, targets: dict[str, Any], *scenarios: tuple[str, str]) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets=targets,
                                                  defaults={"runs": 2, "concurrency": 2}))
    for name, text in scenarios:
        write(tmp_path / f"{name}.yaml", text)
    return tmp_path


HOURS = ("hours", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when: "CALL list_business_hours {}"
then:
  - calls: list_business_hours
  - contains: "18:00"
  - contains: "at 2026-09-29T10:00:00-03:00"
  - does_not_modify
  - asks_nothing_to_confirm
runs: 2
""")

CONFIRM = ("confirm", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when:
  - say: 'CALL set_business_hours {"day": "saturday", "hours": "closed"}'
    then:
      - asks_to_confirm: set_business_hours
      - contains: "NOT been run"
  - confirm: set_business_hours
    then:
      - contains: "confirmed: set_business_hours -> Hours for saturday updated."
then:
  - calls: {name: set_business_hours, args: {day: saturday}, times: 1}
runs: 1
""")

CANCEL = ("cancel", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [set_business_hours]
when:
  - say: 'CALL set_business_hours {"day": "monday", "hours": "closed"}'
  - cancel: set_business_hours
    then:
      - contains: "cancelled: set_business_hours"
      - does_not_modify
runs: 1
""")

MODIFIES = ("modifies", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [book_appointment]
when: 'CALL book_appointment {"date": "2026-10-01", "time": "10:00"}'
then:
  - does_not_modify
runs: 1
""")

MEMORY = ("memory", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when:
  - say: "my name is Ana"
  - say: "MEMORY"
    then:
      - contains: "before: my name is Ana"
      - not_contains: "SESSION REUSED"
runs: 3
""")


def verdicts(run_dir: Path) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for r in records_of(run_dir):
        out.setdefault(r["scenario"], []).append(r["status"])
    return {k: sorted(v) for k, v in out.items()}


def test_an_agent_service_gets_its_tools_over_mcp(tmp_path: Path, service: str,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    root = suite(tmp_path, {"svc": http_target(service)}, HOURS, CONFIRM, CANCEL, MODIFIES,
                 MEMORY)
    result = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    run_dir = the_run(root / "runs")
    assert verdicts(run_dir) == {
        "hours": ["pass", "pass"], "confirm": ["pass"], "cancel": ["pass"],
        "modifies": ["fail"], "memory": ["pass", "pass", "pass"]}, result.output
    hours = next(r for r in records_of(run_dir) if r["scenario"] == "hours")
    assert [(c["name"], c["args"], c["output"]) for c in hours["calls"]] == [
        ("list_business_hours", {}, json.dumps({"monday": "09:00-18:00",
                                                "tuesday": "09:00-18:00"}))]
    # the token is sent, and written nowhere
    for f in run_dir.rglob("*"):
        if f.is_file():
            assert TOKEN not in f.read_text("utf-8", errors="replace"), f


def test_each_attempt_has_its_own_session_and_endpoint(tmp_path: Path, service: str,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    root = suite(tmp_path, {"svc": http_target(service)}, MEMORY)
    run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    import httpx

    sent = [r for r in httpx.get(service + "/_requests").json()
            if r["message"] in ("my name is Ana", "MEMORY")][-6:]
    sessions = [r["session"] for r in sent]
    urls = [r["tools_url"] for r in sent]
    assert len(set(sessions)) == 3
    assert len(set(urls)) == 3
    assert [r["turn"] for r in sent if r["session"] == sessions[0]] == [1, 2]
    assert all(u.startswith("http://127.0.0.1:") and len(u.rsplit("/", 1)[1]) >= 24
               for u in urls)
    # the run's MCP server stopped with the run
    assert not any(_listening(u) for u in urls)


def _listening(url: str) -> bool:
    import httpx

    try:
        httpx.get(url, timeout=1)
    except httpx.TransportError:
        return False
    return True


def test_a_missing_key_stops_the_run_before_anything_is_sent(
        tmp_path: Path, service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_TOKEN", raising=False)
    root = suite(tmp_path, {"svc": http_target(service)}, HOURS)
    result = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    assert result.exit_code == 2
    assert ("the target 'svc' reads its API key from the environment variable AGENT_TOKEN, "
            "which is not set") in result.output


def test_a_reply_without_the_answer_is_an_endpoint_error(
        tmp_path: Path, service: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    root = suite(tmp_path, {"svc": http_target(service, answer="reply.words")}, HOURS)
    run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    rec = records_of(the_run(root / "runs"))[0]
    assert rec["status"] == "error"
    assert rec["error"]["kind"] == "malformed"
    assert rec["error"]["message"].startswith(
        f"the reply from {service}/chat has nothing at 'reply.words' (the target's answer "
        "path): ")


def test_a_wrong_token_is_a_status_error(tmp_path: Path, service: str,
                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "wrong")
    root = suite(tmp_path, {"svc": http_target(service)}, HOURS)
    run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    rec = records_of(the_run(root / "runs"))[0]
    assert rec["error"]["kind"] == "status"
    assert rec["error"]["message"] == (f'HTTP 401 from {service}/chat: \'{{"error": '
                                       '"bad token"}\'')


def test_a_call_after_its_attempt_ended_is_refused_and_not_recorded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    log = tmp_path / "late.log"
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "OWNAGENT_LOG": str(log)})
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    try:
        root = suite(tmp_path, {"svc": http_target(f"http://127.0.0.1:{port}")}, ("a_late", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when: "CALL list_business_hours {} LATE list_business_hours"
then:
  - calls: {name: list_business_hours, times: 1}
runs: 1
"""), ("b_slow", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when: "SLEEP 3"
then: [non_empty]
runs: 1
"""))
        started = time.monotonic()
        result = run_cli("run", ".", "--out", "runs", "-j", "1", cwd=root)
        ended = time.monotonic() - started
        end = time.monotonic() + 10
        while not log.exists() and time.monotonic() < end:
            time.sleep(0.05)
        assert ended > 3, result.output
        # the late call came while the run's MCP server still served the slow attempt
        assert log.read_text() == ("list_business_hours: refused (MCPError: no such endpoint "
                                   "(or its attempt has ended))\n")
        rec = next(r for r in records_of(the_run(root / "runs")) if r["scenario"] == "a_late")
        assert [c["name"] for c in rec["calls"]] == ["list_business_hours"]
        assert rec["status"] == "pass"
    finally:
        proc.terminate()
        proc.wait()


def test_a_command_agent(tmp_path: Path) -> None:
    root = suite(tmp_path, {"cmd": command_target()}, HOURS, CONFIRM, CANCEL, MODIFIES,
                 MEMORY)
    result = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    run_dir = the_run(root / "runs")
    assert verdicts(run_dir) == {
        "hours": ["pass", "pass"], "confirm": ["pass"], "cancel": ["pass"],
        "modifies": ["fail"], "memory": ["pass", "pass", "pass"]}, result.output
    hours = [r for r in records_of(run_dir) if r["scenario"] == "hours"]
    assert sorted(r["stderr"] for r in hours) == [
        "agent started for hours seed 1\n", "agent started for hours seed 2\n"]


@pytest.mark.parametrize(("said", "kind", "message"), [
    ("CRASH", "agent", "the program {exe} exited with status 3 before it answered turn 1; "
                       "its standard error ends: 'agent started for crash seed 1 the agent "
                       "fell over'"),
    ("GARBAGE", "agent", "the program {exe} printed a line that is not JSON: 'this is not "
                         "json'; each answer is one line of JSON: {{\"answer\": \"...\", "
                         "\"pending\": [...]}}"),
])
def test_a_program_that_fails_ends_its_attempt_as_an_error(tmp_path: Path, said: str,
                                                           kind: str, message: str) -> None:
    root = suite(tmp_path, {"cmd": command_target()}, ("crash", f"""
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when: "{said}"
then: [non_empty]
runs: 1
"""))
    run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    rec = records_of(the_run(root / "runs"))[0]
    assert rec["status"] == "error"
    assert rec["error"] == {"kind": kind, "message": message.format(exe=sys.executable),
                            "status": None}


def test_a_program_that_does_not_answer_in_time(tmp_path: Path) -> None:
    script = write(tmp_path / "slow.py", """
import sys, time
sys.stdin.readline()
print("thinking", file=sys.stderr, flush=True)
time.sleep(30)
""")
    root = suite(tmp_path, {"cmd": {"kind": "command", "command": [sys.executable,
                                                                   str(script)],
                                    "timeout_ms": 500}}, HOURS)
    started = time.monotonic()
    run_cli("run", ".", "--out", "runs", "--runs", "1", cwd=root)
    assert time.monotonic() - started < 20
    rec = records_of(the_run(root / "runs"))[0]
    assert rec["error"]["kind"] == "timeout"
    assert rec["error"]["message"] == (f"the program {sys.executable} did not answer turn 1 "
                                       "within 0.5 s (timeout_ms); its standard error ends: "
                                       "'thinking'")
    assert rec["stderr"] == "thinking\n"


def test_the_whole_process_group_is_ended_with_the_attempt(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    script = write(tmp_path / "parent.py", f"""
import json, subprocess, sys
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
open({str(pidfile)!r}, "w").write(str(child.pid))
for line in sys.stdin:
    print(json.dumps({{"answer": "hi"}}), flush=True)
""")
    root = suite(tmp_path, {"cmd": {"kind": "command",
                                    "command": [sys.executable, str(script)]}}, ("hi", """
given:
  at: 2026-09-29T10:00:00-03:00
when: "hello"
then: [non_empty]
runs: 1
"""))
    run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    assert records_of(the_run(root / "runs"))[0]["status"] == "pass"
    pid = int(pidfile.read_text())
    end = time.monotonic() + 5
    while time.monotonic() < end and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split()[2] != "Z"
    except FileNotFoundError:
        return False


def test_record_then_replay_with_the_service_stopped(tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "OWNAGENT_LOG": "/dev/null"})
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    targets = {"svc": http_target(f"http://127.0.0.1:{port}"),
               "again": {"kind": "replay", "cassette": "cassettes/svc.jsonl"}}
    root = suite(tmp_path, targets, HOURS, CONFIRM, CANCEL, MODIFIES, MEMORY)
    try:
        run_cli("run", ".", "--target", "svc", "--record", "cassettes/svc.jsonl", "--out",
                "live", "--no-early-stop", cwd=root)
    finally:
        proc.terminate()
        proc.wait()
    cassette = (root / "cassettes" / "svc.jsonl").read_text()
    assert TOKEN not in cassette
    assert json.loads(cassette.splitlines()[0])["agent"] == "http"
    result = run_cli("run", ".", "--target", "again", "--out", "replayed", "--no-early-stop",
                     cwd=root)
    live, replayed = records_of(the_run(root / "live")), records_of(the_run(root / "replayed"))

    def seen(records: list[dict[str, Any]]) -> list[Any]:
        return sorted((r["scenario"], r["run"], r["status"], r["answer"],
                       [(c["name"], c["args"], c["output"], c.get("decision"))
                        for c in r["calls"]]) for r in records)

    assert seen(replayed) == seen(live), result.output
    assert verdicts(the_run(root / "replayed"))["modifies"] == ["fail"]


def test_a_run_without_such_targets_never_loads_the_mcp_sdk(tmp_path: Path) -> None:
    code = f"""
import os, sys
from click.testing import CliRunner
from dsl.cli import main
os.chdir({str(REPO / "scenarios")!r})
result = CliRunner().invoke(main, ["run", ".", "--out", {str(tmp_path)!r}, "--quiet"])
print(result.exit_code, sorted(m for m in ("mcp", "uvicorn", "starlette", "pydantic")
                              if m in sys.modules))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=REPO, check=True).stdout
    assert out.split(" ", 1)[1].strip() == "[]"


def test_the_report_shows_what_the_program_wrote_on_its_standard_error_as_text(
        tmp_path: Path) -> None:
    """kind: command keeps the program's standard error with the attempt: in results.jsonl
    and, as text (never markup), in the report beside the transcript."""
    import re

    script = write(tmp_path / "talks.py", """
import json, sys
line = sys.stdin.readline()
print("<img src=x onerror=alert(1)> thinking", file=sys.stderr, flush=True)
print(json.dumps({"answer": "Abrimos hasta las 18:00."}), flush=True)
sys.stdin.readline()
""")
    root = suite(tmp_path, {"cmd": {"kind": "command", "command": [sys.executable,
                                                                   str(script)]}}, HOURS)
    run_cli("run", ".", "--out", "runs", "--runs", "1", cwd=root)
    run_dir = the_run(root / "runs")
    rec = records_of(run_dir)[0]
    assert rec["stderr"] == "<img src=x onerror=alert(1)> thinking\n"
    html = (run_dir / "report.html").read_text()
    assert "<img src=x" not in html
    blobs = re.findall(r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)
    data = [json.loads(b) for b in blobs if '"attempts"' in b]
    (attempt,) = [a for d in data for a in d["attempts"]]
    strings = next(d["strings"] for d in data if d["attempts"])
    stderr = attempt[13]
    assert (strings[stderr] if isinstance(stderr, int) else stderr) == rec["stderr"]
    assert attempt[11:13] == [None, None]


def test_arguments_sent_over_mcp_are_checked_by_the_one_schema_engine(tmp_path: Path) -> None:
    """The calls an own-loop agent makes over MCP are judged by ``valid_args`` as the agent
    loop's are (dsl/source/schemacheck.py: jsonschema-rs says no, jsonschema words it)."""
    root = suite(tmp_path, {"cmd": command_target()}, ("args", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [book_appointment]
when: 'CALL book_appointment {"date": 20261001, "time": "10:00"}'
then:
  - valid_args
runs: 1
"""), ("fine", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [book_appointment]
when: 'CALL book_appointment {"date": "2026-10-01", "time": "10:00"}'
then:
  - valid_args
runs: 1
"""))
    run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=root)
    got = {r["scenario"]: (r["status"], r["checks"][0]["reason"])
           for r in records_of(the_run(root / "runs"))}
    assert got == {
        "args": ("fail", "the call to book_appointment has invalid arguments: 'date': "
                         "20261001 is not of type 'string' (arguments: date=20261001, "
                         "time=\"10:00\")"),
        "fine": ("pass", "the arguments of all 1 call(s) fit their tools' schemas")}
