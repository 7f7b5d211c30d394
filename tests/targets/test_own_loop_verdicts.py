"""Verdicts on agents that run their own loop that say what happened (issue 32, item 4):
an agent that never opened its MCP endpoint, a held call the agent never asked the person
about, tokens no one counted — live, on replay and on recheck, through the command line,
against real programs that take their tools with the official MCP client."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import records_of, run_cli, suite_yaml, the_run, write

# A program whose behaviour the person's words choose: OWN (answer from its own tools,
# never opening the MCP endpoint), CONNECT (open it, never list the tools), HOLD (call the
# confirm tool there, then answer with the rest of the words).
PROGRAM = """
import asyncio, json, os, sys
from mcp import Client

async def turn(message):
    if message.startswith("OWN"):
        return "Hoy atendemos hasta las 18:00."
    async with Client(os.environ["SCENARIST_MCP_URL"]) as client:
        if message.startswith("CONNECT"):
            return "connected"
        held = await client.call_tool("set_business_hours", {"day": "saturday",
                                                             "hours": "closed"})
        return message.split(" ", 1)[1]

for line in sys.stdin:
    said = json.loads(line)["message"]
    print(json.dumps({"answer": asyncio.run(turn(said))}), flush=True)
"""


def suite(tmp_path: Path, *scenarios: tuple[str, str]) -> Path:
    program = write(tmp_path / "agent.py", PROGRAM)
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets={
        "cmd": {"kind": "command", "command": [sys.executable, str(program)],
                "timeout_ms": 30000},
        "again": {"kind": "replay", "cassette": "cassettes/cmd.jsonl"}},
        defaults={"runs": 1, "target": "cmd"}))
    for name, text in scenarios:
        write(tmp_path / f"{name}.yaml", text)
    return tmp_path


def scenario(said: str, *checks: str) -> str:
    then = "\n".join(f"  - {c}" for c in checks)
    return f"""
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when: "{said}"
then:
{then}
runs: 1
"""


def reasons(run_dir: Path) -> dict[str, list[tuple[str, str]]]:
    return {r["scenario"]: [(c["status"], c["reason"]) for c in r["checks"]]
            for r in records_of(run_dir)}


def live_replay_recheck(root: Path) -> list[dict[str, list[tuple[str, str]]]]:
    """The checks' verdicts and reasons live (recorded), on replay and on recheck."""
    run_cli("run", ".", "--record", "cassettes/cmd.jsonl", "--out", "live", cwd=root)
    live = the_run(root / "live")
    run_cli("run", ".", "--target", "again", "--out", "replayed", cwd=root)
    result = run_cli("recheck", str(live), "--out", str(root / "rechecked"), cwd=root)
    assert result.exit_code in (0, 1), result.output
    return [reasons(live), reasons(the_run(root / "replayed")),
            reasons(the_run(root / "rechecked"))]


NEVER = ("expected a call to list_business_hours; it was never called (calls made: none); "
         "the agent never connected to its MCP endpoint, so it never listed the scenario's "
         "tools (it used tools of its own, or was not given mcp_url / SCENARIST_MCP_URL)")


def test_an_agent_that_never_opens_its_mcp_endpoint_is_told_so(tmp_path: Path) -> None:
    root = suite(tmp_path, ("own", scenario("OWN", "calls: list_business_hours",
                                            "contains: '18:00'")),
                 ("connect", scenario("CONNECT", "calls: list_business_hours")))
    for seen in live_replay_recheck(root):
        assert seen == {
            "own": [("fail", NEVER), ("pass", 'the answer contains "18:00"')],
            "connect": [("fail", "expected a call to list_business_hours; it was never "
                                 "called (calls made: none); the agent connected to its MCP "
                                 "endpoint but never listed the scenario's tools")]}
    (own,) = [r for r in records_of(the_run(root / "live")) if r["scenario"] == "own"]
    assert own["mcp"] == "never"


REFUSES = "I'm sorry, but I can't assist with that"


@pytest.mark.parametrize(("said", "status", "reason"), [
    (REFUSES, "fail",
     'the agent called set_business_hours with day="saturday", hours="closed" and the call '
     "was held for confirmation, but its answer asks the person nothing: \"I'm sorry, but I "
     "can't assist with that\"; asking is a question, or a request to confirm"),
    ("¿Confirma que cierro los sábados?", "pass",
     'the agent asked to confirm set_business_hours with day="saturday", hours="closed"'),
    ("Please confirm: Saturday closed.", "pass",
     'the agent asked to confirm set_business_hours with day="saturday", hours="closed"'),
])
def test_asks_to_confirm_passes_only_when_the_answer_asks_the_person(
        tmp_path: Path, said: str, status: str, reason: str) -> None:
    root = suite(tmp_path, ("held", scenario(f"HOLD {said}",
                                             "asks_to_confirm: set_business_hours")))
    for seen in live_replay_recheck(root):
        assert seen == {"held": [(status, reason)]}


def test_tokens_no_one_counted_are_never_printed_as_zero(tmp_path: Path) -> None:
    """A command agent's tokens are unknown: the terminal, summary.md and the report never
    say "0 tokens", and results.jsonl and summary.json keep null, not 0."""
    root = suite(tmp_path, ("own", scenario("OWN", "contains: '18:00'")))
    result = run_cli("run", ".", "--out", "runs", cwd=root)
    run_dir = the_run(root / "runs")
    assert "0 tokens" not in result.output
    assert "tokens unknown" in result.output
    (rec,) = records_of(run_dir)
    assert rec["tokens"] is None
    summary: dict[str, Any] = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["tokens"] is None
    assert summary["scenarios"][0]["tokens"] is None
    (run_dir / "summary.md").unlink(missing_ok=True)
    run_cli("report", str(run_dir), cwd=root)
    for name in ("summary.md", "report.html"):
        text = (run_dir / name).read_text()
        assert "0 tokens" not in text, name
    assert "tokens unknown" in (run_dir / "summary.md").read_text()


def test_the_terminal_quotes_the_end_of_an_agent_s_standard_error(tmp_path: Path) -> None:
    """A program that dies with a long traceback: the terminal's quote of its standard
    error is cut before it, not before the exception."""
    program = write(tmp_path / "dies.py", """
import sys
sys.stdin.readline()
def deep(n):
    if n == 0:
        raise ValueError("the agent fell over: no model at AGENT_MODEL_URL")
    deep(n - 1)
deep(12)
""")
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets={
        "cmd": {"kind": "command", "command": [sys.executable, str(program)]}},
        defaults={"runs": 1}))
    write(tmp_path / "own.yaml", scenario("hello", "non_empty"))
    result = run_cli("run", ".", "--out", "runs", cwd=tmp_path)
    lines = result.output.splitlines()
    at = lines.index(f"        what happened: the program {sys.executable} exited with status "
                     "1 before it answered turn 1")
    quote = lines[at + 1]
    assert quote.startswith("        its standard error ends: …")
    assert quote.endswith("ValueError: the agent fell over: no model at AGENT_MODEL_URL'")
    summary = json.loads((the_run(tmp_path / "runs") / "summary.json").read_text())
    said = summary["scenarios"][0]["error_messages"]["agent"]
    assert said.endswith("ValueError: the agent fell over: no model at AGENT_MODEL_URL'")
