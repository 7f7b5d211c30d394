"""Agent cassettes keep what each tool answered (issue 32, item 2): ``scenarist run
--record`` of an agent that runs its own loop keeps each MCP call with its arguments and
its answer, and a replay whose tools now answer otherwise (the scenario's data changed: a
limit 1500 → 2500) is a cassette miss that names the call — never an attempt scored again
against answers the agent never saw. A cassette of version 1 (no answers) still reads.

Against the scripted agent tests/ownagent.py (``kind: command`` and ``kind: http``),
through ``scenarist run``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, records_of, run_cli, the_run, write

AGENT = REPO / "tests" / "ownagent.py"
AGAIN = "record it again with scenarist run --target <live target> --record FILE"


def suite(root: Path, limit: int, returns: str = "Hours for {{ args.day }} updated.",
          live: dict[str, Any] | None = None) -> Path:
    live = live or {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
                    "timeout_ms": 20000}
    write(root / "scenarist.yaml", json.dumps({
        "targets": {"agent": live,
                    "again": {"kind": "replay", "cassette": "cassettes/agent.jsonl"}},
        "defaults": {"runs": 1, "concurrency": 2},
        "world": {"cards": [{"id": "C-1", "owner": "ana", "limit": limit}]},
        "tools": {
            "get_card": {
                "description": "One card.",
                "input_schema": {"type": "object",
                                 "properties": {"card_id": {"type": "string"}}},
                "table": "cards", "where": {"id": "{{ args.card_id }}"},
                "fields": ["id", "limit"], "one": True},
            "set_business_hours": {
                "description": "Change the opening hours of one day.",
                "input_schema": {"type": "object",
                                 "properties": {"day": {"type": "string"},
                                                "hours": {"type": "string"}},
                                 "required": ["day", "hours"]},
                "action": "update", "confirm": True, "returns": returns},
        }}, indent=2))
    write(root / "limit.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [get_card]
when: 'CALL get_card {"card_id": "C-1"}'
then:
  - calls: get_card
  - contains: "1500"
runs: 1
""")
    write(root / "confirm.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [set_business_hours]
when:
  - say: 'CALL set_business_hours {"day": "saturday", "hours": "closed"}'
  - confirm: set_business_hours
then:
  - calls: {name: set_business_hours, times: 1}
runs: 1
""")
    write(root / "hello.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
when: "hello"
then: [non_empty]
runs: 1
""")
    return root


def record(root: Path) -> list[dict[str, Any]]:
    result = run_cli("run", ".", "--target", "agent", "--record", "cassettes/agent.jsonl",
                     "--out", "live", cwd=root)
    assert {r["scenario"]: r["status"] for r in records_of(the_run(root / "live"))} == {
        "limit": "pass", "confirm": "pass", "hello": "pass"}, result.output
    return [json.loads(line) for line in
            (root / "cassettes" / "agent.jsonl").read_text().splitlines()]


def replay(root: Path) -> dict[str, dict[str, Any]]:
    run_cli("run", ".", "--target", "again", "--out", "replayed", cwd=root)
    return {r["scenario"]: r for r in records_of(the_run(root / "replayed"))}


def test_the_cassette_keeps_what_each_tool_answered(tmp_path: Path) -> None:
    lines = record(suite(tmp_path, 1500))
    assert lines[0]["schema_version"] == 2
    assert lines[0]["agent"] == "command"
    by = {(e["scenario"], e["turn"]): e for e in lines[1:]}
    assert by["limit", 1]["calls"] == [{"name": "get_card", "args": {"card_id": "C-1"},
                                        "output": '{"id": "C-1", "limit": 1500}'}]
    held = by["confirm", 1]["calls"][0]
    assert held["name"] == "set_business_hours"
    assert held["output"].startswith("This call needs the person's confirmation")
    assert by["confirm", 2]["confirmed"] == [{
        "name": "set_business_hours", "args": {"day": "saturday", "hours": "closed"},
        "output": "Hours for saturday updated."}]
    # the same scenario replays as it ran
    got = replay(tmp_path)
    assert {k: r["status"] for k, r in got.items()} == {
        "limit": "pass", "confirm": "pass", "hello": "pass"}


def test_a_tool_that_now_answers_otherwise_is_a_miss_that_names_the_call(
        tmp_path: Path) -> None:
    root = suite(tmp_path, 1500)
    record(root)
    suite(root, 2500)  # the scenario's data changed since
    got = replay(root)
    limit = got["limit"]
    assert limit["status"] == "error"
    assert limit["error"] == {"kind": "cassette", "status": None, "message": (
        "the cassette agent.jsonl does not match turn 1 of run 1 of limit: the recorded "
        "agent called get_card {\"card_id\": \"C-1\"} and got '{\"id\": \"C-1\", \"limit\": "
        "1500}', but the tool now answers '{\"id\": \"C-1\", \"limit\": 2500}' — the "
        f"scenario's tools or data changed since it was recorded; {AGAIN}")}
    assert not any(c["status"] == "pass" for c in limit["checks"])
    assert got["hello"]["status"] == "pass"  # what no tool answered still replays


def test_a_confirmed_call_that_now_answers_otherwise_is_named(tmp_path: Path) -> None:
    root = suite(tmp_path, 1500)
    record(root)
    suite(root, 1500, returns="Hours for {{ args.day }} changed.")
    rec = replay(root)["confirm"]
    assert rec["status"] == "error"
    assert rec["error"]["message"] == (
        "the cassette agent.jsonl does not match turn 2 of run 1 of confirm: the person "
        "confirmed set_business_hours {\"day\": \"saturday\", \"hours\": \"closed\"}, which "
        "answered 'Hours for saturday updated.' when it was recorded, but now answers "
        "'Hours for saturday changed.' — the scenario's tools or data changed since it was "
        f"recorded; {AGAIN}")


def test_an_http_agent_cassette_misses_too(tmp_path: Path,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "tok-cassette")
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env={**os.environ, "OWNAGENT_LOG": "/dev/null"})
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    live = {"kind": "http", "url": f"http://127.0.0.1:{port}/chat",
            "api_key_env": "AGENT_TOKEN",
            "body": {"message": "{{ message }}", "session": "{{ session }}",
                     "tools_url": "{{ mcp_url }}", "turn": "{{ turn }}",
                     "confirmed": "{{ confirmed }}", "cancelled": "{{ cancelled }}"},
            "answer": "reply.text", "pending": "held", "timeout_ms": 20000}
    try:
        lines = record(suite(tmp_path, 1500, live=live))
    finally:
        proc.terminate()
        proc.wait()
    assert lines[0]["agent"] == "http"
    suite(tmp_path, 2500, live=live)
    rec = replay(tmp_path)["limit"]
    assert rec["error"]["kind"] == "cassette"
    assert "the recorded agent called get_card" in rec["error"]["message"]


def test_a_cassette_of_version_1_reads_and_says_to_record_again(tmp_path: Path) -> None:
    """What Scenarist recorded before calls kept their answers: the header says version 1,
    the calls have no output. A turn without calls replays; one with calls is a miss."""
    root = suite(tmp_path, 1500)
    lines = record(root)
    lines[0]["schema_version"] = 1
    old = [lines[0]]
    for e in lines[1:]:
        e.pop("confirmed", None)
        e["calls"] = [{"name": c["name"], "args": c["args"]} for c in e["calls"]]
        old.append(e)
    (root / "cassettes" / "agent.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in old))
    got = replay(root)
    assert got["hello"]["status"] == "pass"
    assert got["limit"]["error"] == {"kind": "cassette", "status": None, "message": (
        "the cassette agent.jsonl was recorded by an earlier Scenarist (cassette version 1), "
        "which did not keep what the tools answered, so the calls of turn 1 of run 1 of "
        f"limit cannot be checked against what the tools answer now — {AGAIN}")}


def test_a_cassette_of_a_later_version_is_refused_in_words(tmp_path: Path) -> None:
    root = suite(tmp_path, 1500)
    lines = record(root)
    lines[0]["schema_version"] = 3
    (root / "cassettes" / "agent.jsonl").write_text(
        "".join(json.dumps(e) + "\n" for e in lines))
    result = run_cli("run", ".", "--target", "again", "--out", "replayed", cwd=root)
    assert result.exit_code == 2, result.output
    assert ("has schema_version 3; this Scenarist reads versions 1 and 2 of an agent's "
            "cassette; record it again") in result.output
