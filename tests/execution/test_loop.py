"""The agent loop end to end: ``scenarist run`` against a real scripted server process."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    HOURS,
    REPO,
    TOOL_THEN_ANSWER,
    FakeServer,
    make_suite,
    run_cli,
    suite_yaml,
    write,
)


def results(cwd: Path) -> list[dict[str, Any]]:
    (run_dir,) = (cwd / "runs").iterdir()
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def only_run_dir(cwd: Path) -> Path:
    (run_dir,) = (cwd / "runs").iterdir()
    return run_dir


def test_tool_loop_passes_and_sends_what_the_model_needs(tmp_path: Path, server: FakeServer,
                                                         cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    make_suite(tmp_path, server)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "PASS  hours" in r.output
    recs = results(tmp_path)
    assert sorted(x["run"] for x in recs) == [1, 2, 3]
    assert all(x["status"] == "pass" for x in recs)
    first = recs[0]
    assert first["answer"] == "Hoy atendemos hasta las 18:00."
    assert first["calls"][0]["name"] == "list_business_hours"
    assert first["calls"][0]["output"] == '{"monday": "09:00-18:00", "tuesday": "09:00-18:00"}'
    assert [c["status"] for c in first["checks"]] == ["pass"] * 4
    assert first["steps"] == 2
    reqs = server.requests()
    assert len(reqs) == 6  # 3 runs × (tool call + answer)
    assert sorted({q["body"]["seed"] for q in reqs}) == [1, 2, 3]
    body = reqs[0]["body"]
    assert body["model"] == "fake-model"
    assert body["messages"][0] == {
        "role": "system",
        "content": "Current date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00).",
    }
    assert body["messages"][1] == {"role": "user", "content": "¿Hasta qué hora atendemos hoy?"}
    assert body["tools"][0] == {
        "type": "function",
        "function": {"name": "list_business_hours",
                     "description": "List the clinic's opening hours, by day.",
                     "parameters": {"type": "object", "properties": {}}},
    }
    second = next(q["body"] for q in reqs if len(q["body"]["messages"]) == 4)
    assert second["messages"][3]["role"] == "tool"
    assert second["messages"][3]["content"] == '{"monday": "09:00-18:00", "tuesday": "09:00-18:00"}'
    assert second["messages"][3]["tool_call_id"] == second["messages"][2]["tool_calls"][0]["id"]


def test_results_are_written_as_each_attempt_ends(tmp_path: Path, server: FakeServer) -> None:
    import asyncio

    from dsl.clients.open import CLIENTS
    from dsl.compiler.compile import build_plan
    from dsl.execution.run import RunOptions, execute

    server.script(TOOL_THEN_ANSWER)
    make_suite(tmp_path, server)
    plan, _ = build_plan([tmp_path])
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    seen: list[int] = []

    def on_attempt(rec: Any, totals: Any) -> None:
        lines = (run_dir / "results.jsonl").read_text().splitlines()
        seen.append(len(lines))
        assert json.loads(lines[-1])["run"] == rec.run

    asyncio.run(execute(plan, run_dir, RunOptions(1, early_stop=False), on_attempt,
                        clients=CLIENTS))
    assert seen == [1, 2, 3]


def test_failing_scenario_exits_1_and_names_the_failing_check(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Hoy cerramos a las seis."},
    ]}]})
    make_suite(tmp_path, server)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    assert "FAIL  hours" in r.output
    assert '✗ contains: "18:00"  (failed 3 of 3)' in r.output
    rec = results(tmp_path)[0]
    assert rec["status"] == "fail"
    assert rec["reason"] == '1 of 4 checks failed: contains: "18:00"'
    contains = rec["checks"][1]
    assert contains["reason"] == ('expected the answer to contain "18:00"; the answer was '
                                  '"Hoy cerramos a las seis."')


CHANGE = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when: "Cambiá el horario del lunes a 10 a 19"
then:
  - asks_to_confirm: set_business_hours
  - calls: {name: set_business_hours, args: {day: monday}}
  - does_not_modify
runs: 1
min_pass: 1
"""


def test_confirm_tool_is_held_pending_and_ends_the_loop(tmp_path: Path, server: FakeServer,
                                                         cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "lunes", "replies": [
        {"text": "Voy a cambiarlo.", "tool_calls": [
            {"name": "set_business_hours", "arguments": {"day": "monday", "hours": "10-19"}}]},
        {"text": "should never be asked"},
    ]}]})
    make_suite(tmp_path, server, CHANGE)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = results(tmp_path)
    assert rec["steps"] == 1
    assert rec["answer"] == "Voy a cambiarlo."
    assert rec["calls"] == [{"id": "call_1_0", "name": "set_business_hours",
                             "args": {"day": "monday", "hours": "10-19"}, "output": None,
                             "action": "update", "pending": True, "step": 1}]
    assert [c["status"] for c in rec["checks"]] == ["pass", "pass", "pass"]
    assert rec["checks"][0]["reason"] == ('the agent asked to confirm set_business_hours with '
                                          'day="monday", hours="10-19"')
    assert len(server.requests()) == 1


def test_max_steps_fails_the_attempt_with_its_reason(tmp_path: Path, server: FakeServer,
                                                     cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]}]}]})
    make_suite(tmp_path, server, HOURS + "max_steps: 3\nruns: 1\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1
    (rec,) = results(tmp_path)
    assert rec["status"] == "fail"
    assert rec["reason"] == "reached max_steps (3 model calls) without a text answer"
    assert rec["steps"] == 3
    assert len(rec["calls"]) == 3
    assert len(server.requests()) == 3


ARGS = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [book_appointment]
when: "Reservame el 6 de octubre a las 15"
then:
  - valid_args
  - calls: {name: book_appointment, args: {date: "2026-10-06"}}
  - contains: Booked
runs: 1
min_pass: 1
"""


def test_invalid_json_arguments_are_recorded_answered_and_fail_valid_args(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "octubre", "replies": [
        {"tool_calls": [{"name": "book_appointment", "arguments": '{"date": "2026-10-06",'}]},
        {"tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-10-06", "time": "15:00"}}]},
        {"text": "Booked for 6 October at 15:00."},
    ]}]})
    make_suite(tmp_path, server, ARGS)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1
    (rec,) = results(tmp_path)
    bad, good = rec["calls"]
    assert bad["args"] is None
    assert bad["raw_args"] == '{"date": "2026-10-06",'
    assert bad["error"] == "invalid-json"
    assert good["output"] == "Booked 2026-10-06 at 15:00."
    assert rec["checks"][0]["status"] == "fail"
    assert rec["checks"][0]["reason"] == ("the arguments of the call to book_appointment are "
                                          "not valid JSON: '{\"date\": \"2026-10-06\",'")
    assert [c["status"] for c in rec["checks"][1:]] == ["pass", "pass"]
    second = server.requests()[1]["body"]["messages"]
    assert second[-1]["role"] == "tool"
    assert second[-1]["content"].startswith("error: the arguments are not valid JSON (")


def test_unknown_tool_is_recorded_and_the_model_told(tmp_path: Path, server: FakeServer,
                                                     cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "get_hours", "arguments": {}}]},
        {"text": "Hasta las 18:00."},
    ]}]})
    make_suite(tmp_path, server, HOURS + "  - valid_args\nruns: 1\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1
    (rec,) = results(tmp_path)
    assert rec["calls"][0]["error"] == "unknown-tool"
    assert rec["calls"][0]["action"] is None
    assert rec["checks"][0]["reason"] == ("expected a call to list_business_hours; it was never "
                                          "called (calls made: get_hours)")
    valid_args = next(c for c in rec["checks"] if c["check"] == "valid_args")
    assert (valid_args["status"], valid_args["reason"]) == (
        "fail", "the call to get_hours fits no schema: the scenario has no tool named "
                "get_hours (its tools: list_business_hours, set_business_hours)")
    tool_msg = server.requests()[1]["body"]["messages"][-1]
    assert tool_msg["content"] == ("error: there is no tool named 'get_hours'. The tools are: "
                                   "list_business_hours, set_business_hours.")


@pytest.mark.parametrize(("reply", "kind", "message"), [
    ({"json": {"choices": []}}, "malformed", "the reply has no choices (an empty completion)"),
    ({"status": 500, "body": "<html><body>Internal error</body></html>"}, "status",
     "HTTP 500 from {url}: '<html><body>Internal error</body></html>'"),
    ({"raw": "this is not json"}, "malformed",
     "the reply from {url} is not JSON: 'this is not json'"),
    ({"status": 400, "body": {"error": {"message": "max_tokens is too large"}}}, "status",
     "HTTP 400 from {url}: '{{\"error\": {{\"message\": \"max_tokens is too large\"}}}}'"),
])
def test_endpoint_failures_are_errors_not_model_failures(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str],
        reply: dict[str, Any], kind: str, message: str) -> None:
    server.script({"rules": [{"match": "hora", "replies": [reply]}]})
    make_suite(tmp_path, server, HOURS + "runs: 2\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    assert "????  hours" in r.output
    assert f"2 errors ({kind})" in r.output
    recs = results(tmp_path)
    assert [x["status"] for x in recs] == ["error", "error"]
    assert recs[0]["error"] == {"kind": kind, "message": message.format(url=server.url),
                                "status": 500 if "500" in message else (
                                    400 if "400" in message else None)}
    summary = json.loads((only_run_dir(tmp_path) / "summary.json").read_text())
    row = summary["scenarios"][0]
    assert (row["runs"], row["errors"], row["decided"], row["verdict"]) == (2, 2, 0, "inconclusive")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_unreachable_endpoint_exits_3_without_hanging(tmp_path: Path, server: FakeServer,
                                                      cli_env: dict[str, str]) -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    write(tmp_path / "scenarist.yaml", suite_yaml(url))
    write(tmp_path / "hours.yaml", HOURS + "runs: 20\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    recs = results(tmp_path)
    assert 0 < len(recs) < 20  # the breaker stopped the rest
    assert recs[0]["error"]["kind"] == "connection"
    assert recs[0]["error"]["message"] == (f"cannot reach {url}: connection refused (is the "
                                           "server running?)")
    assert "target 'fake' was given up on" in r.output


def test_api_key_is_sent_and_never_written(tmp_path: Path, server: FakeServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-test-0123456789abcdef"
    monkeypatch.setenv("MY_KEY", secret)
    server.script(TOOL_THEN_ANSWER)
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "m",
                        "api_key_env": "MY_KEY", "temperature": 0.2,
                        "params": {"top_p": 0.5, "max_tokens": 64}}}
    make_suite(tmp_path, server, targets=targets)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    reqs = server.requests()
    assert reqs[0]["headers"]["authorization"] == f"Bearer {secret}"
    body = reqs[0]["body"]
    assert (body["temperature"], body["top_p"], body["max_tokens"]) == (0.2, 0.5, 64)
    for f in only_run_dir(tmp_path).iterdir():
        assert secret not in f.read_text(), f.name
    assert "MY_KEY" in (only_run_dir(tmp_path) / "run.json").read_text()


def test_missing_api_key_is_an_input_error(tmp_path: Path, server: FakeServer,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NOPE_KEY", raising=False)
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "m",
                        "api_key_env": "NOPE_KEY"}}
    make_suite(tmp_path, server, targets=targets)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error: the target 'fake' reads its API key from the environment "
                        "variable NOPE_KEY, which is not set\n")
    assert not (tmp_path / "runs").exists()


def test_record_then_replay_offline(tmp_path: Path, server: FakeServer,
                                    cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    make_suite(tmp_path, server)
    r = run_cli("run", ".", "--record", "cassettes/fake.jsonl", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    live = sorted((x["run"], x["answer"], x["status"]) for x in results(tmp_path))
    cassette = (tmp_path / "cassettes/fake.jsonl").read_text().splitlines()
    header = json.loads(cassette[0])
    assert header["kind"] == "scenarist-cassette"
    assert header["settings"]["model"] == "fake-model"
    assert len(cassette) == 1 + 6
    entry = json.loads(cassette[1])
    assert set(entry["request"]) == {"messages", "model", "seed", "tools"}

    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "fake-model"},
               "recorded": {"kind": "replay", "cassette": "cassettes/fake.jsonl"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                  defaults={"target": "recorded"}))
    for d in (tmp_path / "runs").iterdir():
        import shutil

        shutil.rmtree(d)
    server.script({"rules": []})
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    replayed = sorted((x["run"], x["answer"], x["status"]) for x in results(tmp_path))
    assert replayed == live
    assert server.requests() == []  # offline: nothing reached the server


def test_replay_of_an_unrecorded_request_fails_clearly(tmp_path: Path, server: FakeServer,
                                                       cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    make_suite(tmp_path, server)
    assert run_cli("run", ".", "--record", "c.jsonl", cwd=tmp_path).exit_code == 0
    targets = {"rec": {"kind": "replay", "cassette": "c.jsonl"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets))
    write(tmp_path / "hours.yaml", HOURS.replace("atendemos", "abrimos"))
    r = run_cli("run", ".", "--out", "r2", cwd=tmp_path)
    assert r.exit_code == 3
    (run_dir,) = (tmp_path / "r2").iterdir()
    rec = json.loads((run_dir / "results.jsonl").read_text().splitlines()[0])
    assert rec["error"]["kind"] == "cassette"
    assert rec["error"]["message"] == (
        f"the cassette c.jsonl has no recorded reply for this request (run {rec['run']}, model "
        "call 1); the scenario, its tools or the run count changed since it was recorded — "
        "record it again with scenarist run --target <live target> --record FILE")


def test_run_as_a_real_process_exit_codes(tmp_path: Path, server: FakeServer) -> None:
    server.script(TOOL_THEN_ANSWER)
    make_suite(tmp_path, server)
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    ok = subprocess.run([sys.executable, "-m", "dsl", "run", "."], cwd=tmp_path, env=env,
                        capture_output=True, text=True, timeout=60)
    assert ok.returncode == 0, ok.stderr
    assert "1/1 passed" in ok.stdout
    write(tmp_path / "bad.yaml", "given: {}\n")
    bad = subprocess.run([sys.executable, "-m", "dsl", "run", "."], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert bad.stderr.startswith("bad.yaml:1:1: error S104 the scenario is missing 'when'")


def test_unparsable_model_output_is_a_model_failure_not_retried(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    body = {"error": {"code": 500, "type": "server_error", "message": "The model produced "
                      "output that does not match the expected peg-native format"}}
    server.script({"rules": [{"match": "hora", "replies": [{"status": 500, "body": body}]}]})
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "m",
                        "retry": {"max_attempts": 3, "backoff_ms": 1}}}
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n", targets=targets)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (rec,) = results(tmp_path)
    assert rec["status"] == "fail"
    assert rec["error"] is None
    assert rec["reason"] == (
        "the server could not parse the model's reply as a tool call or answer (HTTP 500: "
        "'{\"error\": {\"code\": 500, \"type\": \"server_error\", \"message\": \"The model "
        "produced output that does not match the expected peg-native format\"}}')")
    assert len(server.requests()) == 1


EVERY_CHECK = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - list_business_hours
    - book_appointment
    - name: search_slots
      description: Free slots on a date.
      input_schema: {type: object, properties: {date: {type: string}}, required: [date]}
      returns: {free: ["15:00", "16:30"]}
    - name: cancel_appointment
      description: Cancel an appointment.
      action: delete
      confirm: true
when: "Turno el 6 de octubre a las 15"
then:
  - contains: "15:00"
  - not_contains: "error"
  - equals: '{"date": "2026-10-06", "time": "15:00", "status": "booked"}'
  - matches: '"time": "1[5-6]:[0-9]{2}"'
  - non_empty
  - json: {fields: [date, time], values: {status: booked}}
  - calls: search_slots
  - calls: {name: book_appointment, args: {time: "15:00"}, times: 1}
  - not_calls: [list_business_hours]
  - calls_only: [search_slots, book_appointment]
  - calls_in_order: [search_slots, book_appointment]
  - tool_correctness: {tools: [search_slots, book_appointment], mode: exact}
  - valid_args
  - does_not_modify
  - asks_nothing_to_confirm
  - expect: "call('book_appointment').args.date == '2026-10-06' and count(calls) == 2"
runs: 1
min_pass: 1
"""


def test_every_deterministic_check_through_the_real_loop(tmp_path: Path, server: FakeServer,
                                                        cli_env: dict[str, str]) -> None:
    answer = '{"date": "2026-10-06", "time": "15:00", "status": "booked"}'
    server.script({"rules": [{"match": "octubre", "replies": [
        {"tool_calls": [{"name": "search_slots", "arguments": {"date": "2026-10-06"}}]},
        {"tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-10-06", "time": "15:00"}}]},
        {"text": answer},
    ]}]})
    make_suite(tmp_path, server, EVERY_CHECK)
    r = run_cli("run", ".", cwd=tmp_path)
    (rec,) = results(tmp_path)
    statuses = {c["label"].split(":")[0]: c["status"] for c in rec["checks"]}
    # every check passes but one: a create tool ran, so does_not_modify fails
    assert [k for k, v in statuses.items() if v != "pass"] == ["does_not_modify"]
    assert len(rec["checks"]) == 16
    assert r.exit_code == 1
    assert rec["checks"][13]["reason"] == ('expected no changes; book_appointment (create) was '
                                           'executed with date="2026-10-06", time="15:00"')
