"""Own-loop turns are never sent again once the agent may have acted (issue 32, item 1):
an ``http`` agent that calls its tools and then answers HTTP 500, stalls past
``timeout_ms`` or drops the connection ends its attempt as an endpoint error with its
reason — not "called twice" after a silent retry — and ``retries: 0`` is true. With
``retry: {turns: true}`` the turn is sent again: the failed try's calls are discarded, the
world is put back as the turn found it, and the record says a retry happened and why.

Against the scripted agent service tests/ownagent.py (``FAIL n``, ``STALL n``, ``DROP``:
the first try of a turn acts, then fails), through ``scenarist run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, records_of, run_cli, the_run, write

AGENT = REPO / "tests" / "ownagent.py"
TOKEN = "tok-retry-never-on-disk"


@pytest.fixture
def service(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A fresh agent service for each test (it remembers which turns it failed once)."""
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    env = {**os.environ, "AGENT_TOKEN": TOKEN, "OWNAGENT_LOG": "/dev/null"}
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait()


def suite(root: Path, url: str, retry: dict[str, Any] | None = None,
          timeout_ms: int = 20000) -> Path:
    target: dict[str, Any] = {
        "kind": "http", "url": url + "/chat", "api_key_env": "AGENT_TOKEN",
        "body": {"message": "{{ message }}", "session": "{{ session }}",
                 "tools_url": "{{ mcp_url }}", "turn": "{{ turn }}",
                 "confirmed": "{{ confirmed }}", "cancelled": "{{ cancelled }}"},
        "answer": "reply.text", "pending": "held", "timeout_ms": timeout_ms}
    if retry is not None:
        target["retry"] = retry
    write(root / "scenarist.yaml", json.dumps({
        "targets": {"svc": target},
        "defaults": {"runs": 1, "concurrency": 2},
        "world": {"cards": [{"id": "C-1", "owner": "ana", "limit": 1500}],
                  "replacements": []},
        "tools": {
            "order_replacement": {
                "description": "Order a replacement card.",
                "input_schema": {"type": "object",
                                 "properties": {"id": {"type": "string"},
                                                "card": {"type": "string"}},
                                 "required": ["id", "card"]},
                "action": "create", "table": "replacements",
                "row": {"id": "{{ args.id }}", "card": "{{ args.card }}",
                        "status": "ordered"}},
            "get_card": {
                "description": "One card.",
                "input_schema": {"type": "object",
                                 "properties": {"card_id": {"type": "string"}}},
                "table": "cards", "where": {"id": "{{ args.card_id }}"}, "one": True},
        }}, indent=2))
    return root


def scenario(root: Path, name: str, directive: str) -> None:
    write(root / f"{name}.yaml", f"""
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [order_replacement, get_card]
when: 'CALL order_replacement {{"id": "R-1", "card": "C-1"}} {directive}'
then:
  - calls: {{name: order_replacement, times: 1}}
  - world: {{replacements: {{R-1: {{status: ordered}}}}}}
runs: 1
""")


def only_record(root: Path) -> dict[str, Any]:
    (rec,) = records_of(the_run(root / "runs"))
    return rec


def test_a_500_after_the_agent_acted_ends_the_attempt_without_a_retry(
        tmp_path: Path, service: str) -> None:
    root = suite(tmp_path, service)  # the default retry: 3 tries, 500 in retry_on_status
    scenario(root, "order", "FAIL 500")
    result = run_cli("run", ".", "--out", "runs", cwd=root)
    rec = only_record(root)
    assert rec["status"] == "error", result.output
    assert rec["error"] == {
        "kind": "status", "status": 500,
        "message": f"HTTP 500 from {service}/chat: "
                   "'{\"error\": \"the agent fell over after it acted\"}'"}
    assert rec["retries"] == 0
    assert "retried" not in rec
    # what the failed turn did is kept, once
    assert [c["name"] for c in rec["calls"]] == ["order_replacement"]
    assert "called twice" not in result.output
    assert "HTTP 500" in result.output


def test_with_turn_retries_the_failed_try_is_discarded_and_the_retry_recorded(
        tmp_path: Path, service: str) -> None:
    root = suite(tmp_path, service, retry={"turns": True, "backoff_ms": 10})
    scenario(root, "order", "FAIL 503")
    result = run_cli("run", ".", "--out", "runs", cwd=root)
    rec = only_record(root)
    assert rec["status"] == "pass", (result.output, rec["checks"])
    assert [(c["id"], c["name"]) for c in rec["calls"]] == [("mcp_1", "order_replacement")]
    # the second try found the world as the turn did: R-1 was free again (not "id taken")
    assert "error" not in rec["calls"][0]
    assert rec["calls"][0]["output"] == '{"id": "R-1", "card": "C-1", "status": "ordered"}'
    assert rec["world"] == [{"table": "replacements", "id": "R-1",
                             "added": {"id": "R-1", "card": "C-1", "status": "ordered"}}]
    assert rec["retries"] == 1
    assert rec["retried"] == [{
        "turn": 1, "kind": "status",
        "reason": f"HTTP 503 from {service}/chat: "
                  "'{\"error\": \"the agent fell over after it acted\"}'",
        "discarded": [{"name": "order_replacement", "args": {"id": "R-1", "card": "C-1"},
                       "output": '{"id": "R-1", "card": "C-1", "status": "ordered"}'}]}]
    # each try was told its own endpoint: the failed one's is closed to the agent
    import httpx

    sent = [r for r in httpx.get(service + "/_requests").json() if r["turn"] == 1]
    assert len(sent) == 2
    assert sent[0]["session"] == sent[1]["session"]
    assert sent[0]["tools_url"] != sent[1]["tools_url"]
    # the report and the terminal say it
    html = (the_run(root / "runs") / "report.html").read_text()
    assert (f"Turn 1 was sent again after a try that failed (status: HTTP 503 from "
            f"{service}/chat: ") in html
    assert ("the 1 call of that try (order_replacement) was discarded and the world put "
            "back as the turn found it.") in html
    assert ("↻ 1 turn was sent again after a failed try (retry: {turns: true}): what that "
            "try did was discarded and the world put back; the report says why"
            in result.output), result.output


def test_a_timeout_after_the_agent_acted_is_an_error_and_a_retry_when_asked(
        tmp_path: Path, service: str) -> None:
    root = suite(tmp_path / "once", service, timeout_ms=1500)
    scenario(root, "order", "STALL 4")
    run_cli("run", ".", "--out", "runs", cwd=root)
    rec = only_record(root)
    assert rec["status"] == "error"
    assert rec["error"] == {"kind": "timeout", "status": None,
                            "message": f"no reply from {service}/chat within 1.5 s"}
    assert rec["retries"] == 0
    assert [c["name"] for c in rec["calls"]] == ["order_replacement"]

    again = suite(tmp_path / "again", service, timeout_ms=1500,
                  retry={"turns": True, "max_attempts": 2, "backoff_ms": 10})
    scenario(again, "order", "STALL 4")
    run_cli("run", ".", "--out", "runs", cwd=again)
    rec = only_record(again)
    assert rec["status"] == "pass", rec["checks"]
    assert rec["retries"] == 1
    assert [(r["turn"], r["kind"]) for r in rec["retried"]] == [(1, "timeout")]
    assert [c["name"] for c in rec["retried"][0]["discarded"]] == ["order_replacement"]


@pytest.mark.parametrize("retry", [None, {"max_attempts": 1}])
def test_a_post_the_service_may_have_processed_is_never_sent_again(
        tmp_path: Path, service: str, retry: dict[str, Any] | None) -> None:
    """The service acts, then closes the connection without a word: the plain-HTTP client
    does not send the POST again on a fresh connection."""
    root = suite(tmp_path, service, retry=retry)
    scenario(root, "order", "DROP")
    run_cli("run", ".", "--out", "runs", cwd=root)
    rec = only_record(root)
    assert rec["status"] == "error"
    assert rec["error"]["kind"] == "connection"
    assert rec["error"]["message"].startswith(f"cannot reach {service}/chat: ")
    assert [c["name"] for c in rec["calls"]] == ["order_replacement"]
    assert rec["retries"] == 0
    import httpx

    assert [r["turn"] for r in httpx.get(service + "/_requests").json()] == [1]


def test_turn_retries_keep_to_the_retry_policy(tmp_path: Path, service: str) -> None:
    """``max_attempts: 1`` leaves no second try, and a status outside ``retry_on_status``
    is never retried, ``turns: true`` or not."""
    root = suite(tmp_path, service, retry={"turns": True, "max_attempts": 1})
    scenario(root, "order", "FAIL 500")
    run_cli("run", ".", "--out", "runs", cwd=root)
    rec = only_record(root)
    assert rec["status"] == "error"
    assert rec["retries"] == 0
    assert "retried" not in rec

    other = suite(tmp_path / "b", service, retry={"turns": True, "backoff_ms": 10})
    scenario(other, "order", "FAIL 418")  # not in retry_on_status
    run_cli("run", ".", "--out", "runs", cwd=other)
    rec = only_record(other)
    assert rec["status"] == "error"
    assert rec["error"]["status"] == 418
    assert rec["retries"] == 0


def test_lint_knows_the_setting(tmp_path: Path, service: str) -> None:
    root = suite(tmp_path, service, retry={"turn": True})
    scenario(root, "order", "")
    result = run_cli("lint", ".", cwd=root)
    assert result.exit_code != 0
    assert ("unknown key 'turn' in 'retry' in targets.svc; did you mean 'turns'?"
            in result.output), result.output


def test_a_failed_try_still_at_work_records_nothing(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The failed try calls a tool once more after its 500, while the turn's second try is
    still running: its endpoint has moved, so the late call is refused, not recorded."""
    monkeypatch.setenv("AGENT_TOKEN", TOKEN)
    log = tmp_path / "late.log"
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "OWNAGENT_LOG": str(log)})
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    try:
        root = suite(tmp_path / "suite", f"http://127.0.0.1:{port}",
                     retry={"turns": True, "backoff_ms": 10})
        scenario(root, "order", "FAIL 500 SLEEP 3 LATE get_card")
        run_cli("run", ".", "--out", "runs", cwd=root)
    finally:
        proc.terminate()
        proc.wait()
    rec = only_record(root)
    assert rec["status"] == "pass", rec["checks"]
    assert [c["name"] for c in rec["calls"]] == ["order_replacement"]
    # the first try's late call came during the second try (which sleeps 3 s): refused
    first = log.read_text().splitlines()[0]
    assert first == ("get_card: refused (MCPError: no such endpoint (or its attempt has "
                     "ended))"), first
