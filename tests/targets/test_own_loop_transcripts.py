"""The transcript of an agent that runs its own loop is what the agent saw, in order (issue
32, item 3): a call held at its MCP endpoint shows, in turn 1, the held text the agent got
back; the output of the call once the person confirmed it appears at the confirming turn
(turn 2) — in results.jsonl's messages and in the report's transcript. The calls of a turn
keep their order, held or not.

Against the scripted agent tests/ownagent.py (``kind: command``), through ``scenarist
run``."""

from __future__ import annotations

import datetime as dt
import json
import re
import sys
from pathlib import Path
from typing import Any

from dsl.clients.toolserver import HELD
from dsl.judge.ask import conversation_text
from dsl.model import AttemptData
from dsl.store import record_from_json
from tests.conftest import REPO, records_of, run_cli, suite_yaml, the_run, write

AGENT = REPO / "tests" / "ownagent.py"
HOURS = json.dumps({"monday": "09:00-18:00", "tuesday": "09:00-18:00"})


def run(tmp_path: Path, scenario: str) -> tuple[dict[str, Any], list[list[Any]]]:
    target = {"cmd": {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
                      "timeout_ms": 20000}}
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets=target,
                                                  defaults={"runs": 1}))
    write(tmp_path / "s.yaml", scenario)
    result = run_cli("run", ".", "--out", "runs", cwd=tmp_path)
    run_dir = the_run(tmp_path / "runs")
    (rec,) = records_of(run_dir)
    assert rec["status"] == "pass", (result.output, rec["checks"])
    return rec, report_events(run_dir / "report.html")


def report_events(html_file: Path) -> list[list[Any]]:
    """The one attempt's transcript as the report embeds it, its texts resolved."""
    html = html_file.read_text()
    blobs = [json.loads(b) for b in re.findall(
        r'<script type="application/json"[^>]*>(.*?)</script>', html, re.S)]
    (blob,) = [b for b in blobs if isinstance(b, dict) and b.get("attempts")]
    strings = blob["strings"]
    text_at = {"u": (1,), "a": (1,), "A": (1,), "t": (1, 2), "c": (1, 2, 3), "e": (1,),
               "T": (3,)}
    (attempt,) = blob["attempts"]
    return [[strings[v] if i in text_at.get(ev[0], ()) and isinstance(v, int) else v
             for i, v in enumerate(ev)][:4] for ev in attempt[9]]


def test_a_held_call_shows_the_held_text_then_its_output_at_the_confirming_turn(
        tmp_path: Path) -> None:
    rec, events = run(tmp_path, """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when:
  - say: 'CALL set_business_hours {"day": "saturday", "hours": "closed"}'
  - confirm: set_business_hours
then:
  - calls: {name: set_business_hours, args: {day: saturday}, times: 1}
runs: 1
""")
    first, second = rec["turns"]
    turn1 = rec["messages"][:first["messages"]]
    turn2 = rec["messages"][first["messages"]:second["messages"]]
    assert [m["content"] for m in turn1 if m["role"] == "tool"] == [HELD]
    assert "Hours for saturday updated." not in json.dumps(turn1)
    assert [m["content"] for m in turn2 if m["role"] == "tool"] == [
        "Hours for saturday updated."]
    assert rec["calls"][0]["decision"] == "confirmed"  # what became of it, on the call
    said = 'CALL set_business_hours {"day": "saturday", "hours": "closed"}'
    assert events == [
        ["T", 1, "say", said],
        ["u", said],
        ["c", "set_business_hours", '{"day": "saturday", "hours": "closed"}', "update"],
        ["t", "set_business_hours", HELD],
        ["a", f"[turn 1 at 2026-09-29T10:00:00-03:00] set_business_hours -> {HELD}"],
        ["T", 2, "confirm", "set_business_hours"],
        ["t", "set_business_hours", "Hours for saturday updated."],
        ["A", "[turn 2 at 2026-09-29T10:00:00-03:00] confirmed: set_business_hours -> "
              "Hours for saturday updated."],
    ]
    # the messages are OpenAI's format as the agent may forward them: each tool message
    # answers the assistant message with its call just before it
    for i, m in enumerate(rec["messages"]):
        if m["role"] == "tool":
            back = next(p for p in reversed(rec["messages"][:i]) if p["role"] != "tool")
            assert m["tool_call_id"] in [c["id"] for c in back.get("tool_calls") or []]


def test_the_calls_of_a_turn_keep_their_order_held_or_not(tmp_path: Path) -> None:
    rec, events = run(tmp_path, """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when:
  - say: 'CALL list_business_hours {} CALL set_business_hours {"day": "monday", "hours": "closed"} CALL list_business_hours {}'
  - cancel: set_business_hours
then:
  - calls: {name: list_business_hours, times: 2}
runs: 1
""")
    first = rec["turns"][0]["messages"]
    assert [m["content"] for m in rec["messages"][:first] if m["role"] == "tool"] == [
        HOURS, HELD, HOURS]
    assert [e[:3] for e in events if e[0] in "ct"] == [
        ["c", "list_business_hours", "{}"],
        ["c", "set_business_hours", '{"day": "monday", "hours": "closed"}'],
        ["c", "list_business_hours", "{}"],
        ["t", "list_business_hours", HOURS],
        ["t", "set_business_hours", HELD],
        ["t", "list_business_hours", HOURS],
        ["t", "set_business_hours", "The person cancelled this call: it was not run."],
    ]


def test_the_judge_reads_an_own_loop_conversation_from_its_first_message(
        tmp_path: Path) -> None:
    """An own-loop agent's transcript has no system prompt: the judge's conversation
    starts with the person's first message all the same."""
    rec, _ = run(tmp_path, """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when:
  - say: "my name is Ana"
  - say: "MEMORY"
runs: 1
""")
    r = record_from_json(rec)
    data = AttemptData(message=r.turns[-1].text, answer=r.answer, calls=r.calls,
                       at=dt.datetime(2026, 9, 29, 10, tzinfo=dt.UTC), tools=(), steps=2,
                       latency_ms=0.0, tokens=r.tokens, messages=r.messages, turns=r.turns)
    assert conversation_text(data).splitlines()[0] == "The person: my name is Ana"
