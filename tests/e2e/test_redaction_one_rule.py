"""Redaction is one rule everywhere (issue 32, items 7 and 10): what Scenarist writes or
prints is redacted; the agent, its tools and the checks work on the true values, so live,
replay and recheck give the same verdict.

Item 7, against a real ``kind: command`` program (tests/ownagent.py) over MCP: a card
token the person says, echoed into a tool's arguments, and an integer PIN that a pattern
matches. The call is valid live (``valid_args``), the cassette keeps the arguments
redacted and valid JSON, and the replay calls the tool with the true values (the world
changes as it did live) instead of missing the cassette or failing.

Item 10, against the scripted model server (tests/fakeserver.py): a ``redact.env`` value in
``given.system``, an id that a pattern matches in ``when`` and a ``Bearer sk-…`` header of a
target never reach plan.json, run.json, summary.json, report.html, junit.xml, summary.md,
the history or the terminal (``run``, ``plan --json``, ``try``, ``mcp``)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, FakeServer, records_of, run_cli, the_run, write

AGENT = REPO / "tests" / "ownagent.py"
TOKEN = "tok_BBBB2222"
OTHER = "tok_AAAA1111"
PIN = 9876

CARD_SUITE = {
    "targets": {
        "agent": {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
                  "timeout_ms": 20000},
        "again": {"kind": "replay", "cassette": "cassettes/agent.jsonl"},
    },
    "defaults": {"runs": 1, "target": "agent"},
    "redact": {"patterns": {"card-token": "tok_[A-Za-z0-9]{8,}", "pin": r"\b\d{4}\b"}},
    "world": {"cards": [{"id": OTHER, "owner": "ana", "pin": 4321, "status": "active"},
                        {"id": TOKEN, "owner": "bo", "pin": PIN, "status": "active"}]},
    "tools": {
        "block_card": {
            "description": "Block one card, with its PIN.",
            "input_schema": {"type": "object",
                             "properties": {"card_id": {"type": "string"},
                                            "pin": {"type": "integer"}},
                             "required": ["card_id", "pin"]},
            "action": "update", "table": "cards",
            "where": {"id": "{{ args.card_id }}", "pin": "{{ args.pin }}"},
            "set": {"status": "blocked"}},
    },
}

BLOCK = f"""
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [block_card]
when: 'Please block my card. CALL block_card {{"card_id": "{TOKEN}", "pin": {PIN}}}'
then:
  - calls: {{name: block_card, args: {{card_id: {TOKEN}, pin: {PIN}}}}}
  - valid_args: true
  - world: {{cards: {{{TOKEN}: {{status: blocked}}, {OTHER}: {{status: active}}}}}}
  - contains: "{TOKEN}"
runs: 1
"""


def _card_suite(root: Path) -> Path:
    write(root / "scenarist.yaml", json.dumps(CARD_SUITE, indent=2))
    write(root / "block.yaml", BLOCK)
    return root


def _checks(run_dir: Path) -> dict[str, str]:
    (rec,) = records_of(run_dir)
    return {c["label"]: f"{c['status']}: {c['reason']}" for c in rec["checks"]}


def _files(*folders: Path) -> list[Path]:
    return [f for d in folders for f in d.rglob("*") if f.is_file()]


def test_a_command_agents_secret_arguments_replay_and_recheck_as_they_ran_live(
        tmp_path: Path) -> None:
    root = _card_suite(tmp_path)
    live = run_cli("run", "--record", "cassettes/agent.jsonl", "--out", "live", cwd=root)
    assert live.exit_code == 0, live.output
    live_checks = _checks(the_run(root / "live"))
    assert [v.split(":")[0] for v in live_checks.values()] == ["pass"] * 4, live_checks
    (rec,) = records_of(the_run(root / "live"))
    (call,) = rec["calls"]
    assert call["args"] == {"card_id": "[REDACTED:card-token]", "pin": "[REDACTED:pin]"}
    assert call.get("error") is None
    assert rec["redacted"]  # which of the scenario's own secrets each mark stands for

    lines = [json.loads(x) for x in
             (root / "cassettes" / "agent.jsonl").read_text().splitlines()]
    (turn,) = [x for x in lines[1:] if "calls" in x]
    assert turn["calls"][0]["args"] == {"card_id": "[REDACTED:card-token]",
                                        "pin": "[REDACTED:pin]"}

    replay = run_cli("run", "--target", "again", "--out", "replayed", cwd=root)
    assert replay.exit_code == 0, replay.output
    recheck = run_cli("recheck", str(the_run(root / "live")), "--out", "rechecked", cwd=root)
    assert recheck.exit_code == 0, recheck.output
    assert _checks(the_run(root / "replayed")) == live_checks
    assert _checks(the_run(root / "rechecked")) == live_checks
    pin = re.compile(rb"(?<![0-9A-Za-z])%d(?![0-9A-Za-z])" % PIN)  # not inside a hash
    for f in _files(root / "live", root / "replayed", root / "rechecked", root / "cassettes"):
        data = f.read_bytes()
        assert TOKEN.encode() not in data, f
        assert not pin.search(data), f


def test_an_answer_that_leaks_a_secret_fails_no_secrets_everywhere(tmp_path: Path) -> None:
    root = _card_suite(tmp_path)
    write(root / "block.yaml", BLOCK.replace("runs: 1", "  - no_secrets\nruns: 1"))
    live = run_cli("run", "--record", "cassettes/agent.jsonl", "--out", "live", cwd=root)
    assert live.exit_code == 1, live.output
    replay = run_cli("run", "--target", "again", "--out", "replayed", cwd=root)
    recheck = run_cli("recheck", str(the_run(root / "live")), "--out", "rechecked", cwd=root)
    assert replay.exit_code == recheck.exit_code == 1
    said = _checks(the_run(root / "live"))["no_secrets"]
    # (the PIN pattern, four digits, finds the year of the moment the agent repeats first)
    assert said == (
        'fail: a configured secret (pin) reached the answer: redaction replaced it with '
        '[REDACTED:pin]: "[turn 1 at [REDACTED:pin]-09-29T10:00:00-03:00] block_card -> '
        '[{\\"id\\": \\"[REDACTED:card-token]\\", \\"owner\\": \\"bo\\", \\"pin\\": '
        '[REDACTED:pin], \\"status\\": \\"blocked\\"}]"'), said
    assert _checks(the_run(root / "replayed")) == _checks(the_run(root / "live")) \
        == _checks(the_run(root / "rechecked"))


# ---- item 10: the scenario's own secrets, in every file and on the terminal --------------

SYSTEM_SECRET = "crm-Tok3n-77aa19"
ORDER = "ORD-123456"
BEARER = "Bearer sk-live-AbCdEfGhIjKlMnOpQrSt"


def _text_suite(root: Path, server: FakeServer) -> Path:
    server.script({"rules": [{"match": "refund", "replies": [
        {"tool_calls": [{"name": "refund", "arguments": {"order": ORDER}}]},
        {"text": f"The refund of {ORDER} is on its way."}]}]})
    write(root / "scenarist.yaml", json.dumps({
        "targets": {"live": {"kind": "openai", "base_url": server.url, "model": "m",
                             "timeout_ms": 5000, "retry": {"max_attempts": 1},
                             "headers": {"Authorization": BEARER}},
                    # an agent service whose header holds a key (written in its settings)
                    "svc": {"kind": "http", "url": "http://127.0.0.1:9/chat",
                            "headers": {"Authorization": BEARER}, "timeout_ms": 2000,
                            "body": {"message": "{{ message }}",
                                     "mcp_url": "{{ mcp_url }}"}}},
        "defaults": {"runs": 1, "target": "live"},
        "history": "history.sqlite",
        "redact": {"env": ["CRM_SECRET"], "patterns": {"order-id": r"ORD-\d{6}"}},
        "tools": {"refund": {
            "description": "Refund an order.",
            "input_schema": {"type": "object", "properties": {"order": {"type": "string"}},
                             "required": ["order"]},
            "returns": "Refunded {{ args.order }}."}},
    }, indent=2))
    write(root / "refund.yaml", f"""
        description: A refund.
        given:
          at: 2026-09-29T10:00:00-03:00
          system: "You are the shop's assistant. The CRM token is {SYSTEM_SECRET}."
          tools: [refund]
        when: "Please refund {ORDER}"
        then:
          - calls: {{name: refund, args: {{order: {ORDER}}}}}
          - contains: "{ORDER}"
        runs: 1
        """)
    return root


@pytest.fixture
def secret_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CRM_SECRET", SYSTEM_SECRET)
    monkeypatch.setenv("NO_COLOR", "1")


SECRETS = (SYSTEM_SECRET, ORDER, "sk-live-AbCdEfGhIjKlMnOpQrSt")


def _clean(text: str | bytes, where: object) -> None:
    data = text.encode() if isinstance(text, str) else text
    for s in SECRETS:
        assert s.encode() not in data, (s, where)


def test_the_scenarios_secrets_reach_no_file_and_no_terminal(
        tmp_path: Path, server: FakeServer, secret_env: None) -> None:
    root = _text_suite(tmp_path, server)
    r = run_cli("run", "--out", "runs", cwd=root)
    assert r.exit_code == 0, r.output
    _clean(r.output, "run's output")
    run_dir = the_run(root / "runs")
    names = {f.name for f in _files(run_dir)}
    assert {"plan.json", "run.json", "summary.json", "report.html", "results.jsonl",
            "junit.xml", "summary.md"} <= names
    assert list(root.glob("history.sqlite*"))
    for f in _files(run_dir) + list(root.glob("history.sqlite*")):
        _clean(f.read_bytes(), f)
    # the agent was told the truth, and the checks saw it
    (request, *_rest) = server.requests()
    assert SYSTEM_SECRET in json.dumps(request["body"])
    assert request["headers"].get("authorization") == BEARER
    plan = json.loads((run_dir / "plan.json").read_text())
    (scenario,) = plan["scenarios"]
    assert scenario["message"] == "Please refund [REDACTED:order-id]"
    assert scenario["system"] == ("You are the shop's assistant. The CRM token is "
                                  "[REDACTED:CRM_SECRET].")
    assert "Please refund [REDACTED:order-id]" in (run_dir / "report.html").read_text()
    summary_md = run_cli("report", str(run_dir), cwd=root)
    _clean(summary_md.output, "report's output")
    for f in _files(run_dir):
        _clean(f.read_bytes(), f)
    plan_json = run_cli("plan", "--json", cwd=root)
    assert plan_json.exit_code == 0
    _clean(plan_json.output, "plan --json")
    plan_text = run_cli("plan", cwd=root)
    _clean(plan_text.output, "plan")
    recheck = run_cli("recheck", str(run_dir), "--out", "rechecked", cwd=root)
    assert recheck.exit_code == 0, recheck.output
    for f in _files(root / "rechecked"):
        _clean(f.read_bytes(), f)
    checks = {c["label"]: c["status"] for c in
              records_of(the_run(root / "rechecked"))[0]["checks"]}
    assert set(checks.values()) == {"pass"}, checks


def test_a_targets_header_is_written_redacted(
        tmp_path: Path, server: FakeServer, secret_env: None) -> None:
    root = _text_suite(tmp_path, server)
    r = run_cli("run", "--target", "svc", "--out", "runs", cwd=root)
    assert r.exit_code == 3, r.output  # nothing listens there: the endpoint failed
    _clean(r.output, "run's output")
    run_dir = the_run(root / "runs")
    for name in ("run.json", "plan.json"):
        (target,) = json.loads((run_dir / name).read_text())["targets"]
        assert target["headers"] == {"Authorization": "Bearer [REDACTED:api-key]"}, name
    for f in _files(run_dir):
        _clean(f.read_bytes(), f)
    shown = run_cli("plan", "--json", "--target", "svc", cwd=root)
    _clean(shown.output, "plan --json")
    assert '"Authorization": "Bearer [REDACTED:api-key]"' in shown.output


def test_try_prints_no_secret(tmp_path: Path, server: FakeServer, secret_env: None) -> None:
    root = _text_suite(tmp_path, server)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run([sys.executable, "-m", "dsl", "try", "refund.yaml"], cwd=root,
                          env=env, input=f"Please refund {ORDER}\n", capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    _clean(done.stdout + done.stderr, "try")
    assert "The scenario's message: Please refund [REDACTED:order-id]" in done.stdout
    assert "agent: The refund of [REDACTED:order-id] is on its way." in done.stdout
    assert "  pass   contains: \"[REDACTED:order-id]\"" in done.stdout


def test_mcp_prints_no_secret(tmp_path: Path, server: FakeServer, secret_env: None) -> None:
    root = _text_suite(tmp_path, server)
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "dsl", "mcp", "refund.yaml"], cwd=root,
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        url = proc.stdout.readline().strip()

        async def call() -> Any:
            from mcp import Client

            async with Client(url) as client:
                return await client.call_tool("refund", {"order": ORDER})

        result = asyncio.run(call())
        assert [b.text for b in result.content] == [f"Refunded {ORDER}."]  # the truth
        line = proc.stdout.readline().rstrip("\n")
        assert line == ('refund({"order": "[REDACTED:order-id]"}) -> '
                        'Refunded [REDACTED:order-id].')
    finally:
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    _clean(out + err, "mcp")


def test_a_models_integer_argument_stays_json_and_replays(
        tmp_path: Path, server: FakeServer) -> None:
    """A model's tool call with an integer a pattern matches: valid live, the cassette's
    arguments still JSON, and the replay calls the tool with the integer."""
    server.script({"rules": [{"match": "block", "replies": [
        {"tool_calls": [{"name": "block_card",
                         "arguments": {"card_id": TOKEN, "pin": PIN}}]},
        {"text": f"Blocked {TOKEN}."}]}]})
    suite = {**CARD_SUITE, "targets": {
        "live": {"kind": "openai", "base_url": server.url, "model": "m", "timeout_ms": 5000,
                 "retry": {"max_attempts": 1}},
        "again": {"kind": "replay", "cassette": "cassettes/model.jsonl"}},
        "defaults": {"runs": 1, "target": "live"}}
    write(tmp_path / "scenarist.yaml", json.dumps(suite, indent=2))
    write(tmp_path / "block.yaml", BLOCK)
    live = run_cli("run", "--record", "cassettes/model.jsonl", "--out", "live", cwd=tmp_path)
    assert live.exit_code == 0, live.output
    lines = [json.loads(x) for x in
             (tmp_path / "cassettes" / "model.jsonl").read_text().splitlines()[1:]]
    (call,) = lines[0]["response"]["choices"][0]["message"]["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {
        "card_id": "[REDACTED:card-token]", "pin": "[REDACTED:pin]"}
    replay = run_cli("run", "--target", "again", "--out", "replayed", cwd=tmp_path)
    assert replay.exit_code == 0, replay.output
    recheck = run_cli("recheck", str(the_run(tmp_path / "live")), "--out", "rechecked",
                      cwd=tmp_path)
    assert recheck.exit_code == 0, recheck.output
    live_checks = _checks(the_run(tmp_path / "live"))
    assert live_checks["valid_args"].startswith("pass"), live_checks
    assert _checks(the_run(tmp_path / "replayed")) == live_checks
    assert _checks(the_run(tmp_path / "rechecked")) == live_checks
