"""The simulated user in plain sight (issue 25, item 5): every message it wrote — the last
one, with its stop marker, included — is in results.jsonl and the report; when the agent
holds a call for confirmation it is told what the agent wants to do, in plain words, and
its reply (CONFIRM, CANCEL or anything else) is recorded like a scripted confirm or cancel
turn; and it talks with agents that run their own loop (kind: http and kind: command).
Against the scripted server processes, through the command line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, FakeServer, run_cli, start_fake_server, suite_yaml, write

AGENT = REPO / "tests" / "ownagent.py"


@pytest.fixture(scope="module")
def user_server() -> Iterator[FakeServer]:
    """A second scripted endpoint: the model that plays the simulated user."""
    s = start_fake_server()
    yield s
    s.process.terminate()
    s.process.wait(timeout=5)


@pytest.fixture
def userver(user_server: FakeServer) -> FakeServer:
    user_server.script({"rules": []})
    return user_server


def suite(tmp_path: Path, agent: dict[str, Any], user_url: str) -> None:
    targets = {"agent": agent,
               "patient": {"kind": "openai", "base_url": user_url, "model": "user-model",
                           "timeout_ms": 5000, "retry": {"max_attempts": 1}}}
    write(tmp_path / "scenarist.yaml", suite_yaml(user_url, targets=targets,
                                                  defaults={"target": "agent"}))


def openai_agent(url: str) -> dict[str, Any]:
    return {"kind": "openai", "base_url": url, "model": "fake-model", "timeout_ms": 5000,
            "retry": {"max_attempts": 1}}


def records(tmp_path: Path) -> list[dict[str, Any]]:
    (d,) = (tmp_path / "runs").iterdir()
    return [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]


def run(tmp_path: Path) -> Any:
    return run_cli("run", ".", "--no-early-stop", cwd=tmp_path)


def user_bodies(s: FakeServer) -> list[dict[str, Any]]:
    return [r["body"] for r in s.requests()]


CLOSE_SATURDAYS = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [set_business_hours, list_business_hours]
when:
  user:
    goal: Close the clinic on Saturdays.
    target: patient
    max_turns: 3
then:
  - goal_reached
  - asks_to_confirm: set_business_hours
runs: 1
min_pass: 1
"""

PROPOSE = {"rules": [
    {"match": "sábados", "replies": [
        {"tool_calls": [{"name": "set_business_hours",
                         "arguments": {"day": "saturday", "hours": "closed"}}],
         "text": "¿Cierro los sábados?"},
        {"text": "Listo, los sábados quedan cerrados."}]},
    {"match": "otra cosa", "replies": [{"text": "Como quieras: no cambio nada."}]}]}


def test_the_last_message_with_its_stop_marker_is_in_the_results_and_the_report(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script({"default": [{"text": "Atendemos hasta las 18:00."}]})
    userver.script({"rules": [
        {"match": "The chat opens", "replies": [{"text": "¿Hasta qué hora abren?"}]},
        {"match": "18:00", "replies": [{"text": "Perfecto, gracias. GOAL_REACHED"}]}]})
    suite(tmp_path, openai_agent(server.url), userver.url)
    write(tmp_path / "hours.yaml", CLOSE_SATURDAYS.replace(
        "  - asks_to_confirm: set_business_hours\n", ""))
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert rec["user_messages"] == ["¿Hasta qué hora abren?", "Perfecto, gracias. GOAL_REACHED"]
    assert [t["text"] for t in rec["turns"]] == ["¿Hasta qué hora abren?"]
    html = next((tmp_path / "runs").iterdir()).joinpath("report.html").read_text()
    assert "Perfecto, gracias. GOAL_REACHED" in html
    from dsl.results.report import attempt
    from dsl.store import latest_records

    (stored,) = latest_records(next((tmp_path / "runs").iterdir()))
    events = attempt(stored, lambda v: v)[9]
    assert events[-2:] == [["U", "Perfecto, gracias. GOAL_REACHED", 1],
                           ["e", "The simulated user said its goal was reached."]]


@pytest.mark.parametrize(("reply", "kind", "decision", "said_to_agent"), [
    ("Sí, dale. CONFIRM", "confirm", "confirmed", None),
    ("CANCEL", "cancel", "cancelled", None),
    ("cancel", "cancel", "cancelled", None),
    ("Mejor otra cosa: dejalo como está.", "say", "dismissed",
     "Mejor otra cosa: dejalo como está."),
])
def test_the_simulated_user_is_told_what_the_agent_wants_to_do_and_decides(
        tmp_path: Path, server: FakeServer, userver: FakeServer, cli_env: dict[str, str],
        reply: str, kind: str, decision: str, said_to_agent: str | None) -> None:
    server.script(PROPOSE)
    userver.script({"rules": [
        {"match": "The chat opens", "replies": [{"text": "Cerrá los sábados, por favor."}]},
        {"match": "waiting for your confirmation", "replies": [{"text": reply}]},
        {"match": "Listo", "replies": [{"text": "GOAL_REACHED"}]},
        {"match": "no cambio", "replies": [{"text": "GOAL_REACHED"}]}],
        "default": [{"text": "GOAL_REACHED"}]})
    suite(tmp_path, openai_agent(server.url), userver.url)
    write(tmp_path / "close.yaml", CLOSE_SATURDAYS)
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    told = user_bodies(userver)[1]["messages"][-1]["content"]
    assert told == (
        "¿Cierro los sábados?\n\n"
        "(The assistant is waiting for your confirmation before it does this:\n"
        "- set_business_hours (Change the opening hours of one day), with day = "
        '"saturday", hours = "closed"\n'
        "To let it go ahead, write CONFIRM. To stop it, write CANCEL. Or answer in your "
        "own words: then it is not done.)")
    second = rec["turns"][1]
    assert (second["kind"], second["simulated"]) == (kind, True)
    assert second["text"] == ("set_business_hours" if kind != "say" else said_to_agent)
    assert second["decided"] == [0]
    assert rec["calls"][0]["decision"] == decision
    assert rec["user_messages"] == ["Cerrá los sábados, por favor.", reply, "GOAL_REACHED"]
    # what the agent was sent in the second turn: the tool's result, never the words
    agent_second = [req["body"]["messages"] for req in server.requests()][1]
    if kind == "confirm":
        assert agent_second[-1] == {"role": "tool", "tool_call_id": rec["calls"][0]["id"],
                                    "content": "Hours for saturday updated."}
        assert rec["turns"][1]["answer"] == "Listo, los sábados quedan cerrados."
    elif kind == "cancel":
        assert agent_second[-1]["content"] == "The person cancelled this call: it was not run."
    else:
        assert agent_second[-1] == {"role": "user", "content": said_to_agent}
    from dsl.results.report import attempt
    from dsl.store import latest_records

    (stored,) = latest_records(next((tmp_path / "runs").iterdir()))
    events = attempt(stored, lambda v: v)[9]
    head = next(i for i, e in enumerate(events) if e[0] == "T" and e[1] == 2)
    assert events[head] == ["T", 2, kind,
                            "set_business_hours" if kind != "say" else said_to_agent, 1]
    if kind != "say":
        assert events[head + 1] == ["U", reply, 0]


def test_decision_reads_the_markers() -> None:
    from dsl.execution.conversation import decision

    assert decision("CONFIRM") == decision("confirm.") == decision("Ok, CONFIRM") == "confirm"
    assert decision("CANCEL") == decision("Cancel!") == decision("No. CANCEL") == "cancel"
    assert decision("Can you confirm the hours?") == "say"
    assert decision("CONFIRM or CANCEL?") == "say"
    assert decision("CONFIRMED") == "say"


# ---- agents that run their own loop --------------------------------------------------------

OWN = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when:
  user:
    goal: Close the clinic on Saturdays.
    target: patient
    max_turns: 3
then:
  - goal_reached
  - calls: {name: set_business_hours, args: {day: saturday}}
runs: 1
min_pass: 1
"""


def own_user_script() -> dict[str, Any]:
    return {"rules": [
        {"match": "The chat opens", "replies": [
            {"text": 'HOLD set_business_hours {"day": "saturday", "hours": "closed"}'}]},
        {"match": "waiting for your confirmation", "replies": [{"text": "CONFIRM"}]},
        {"match": "confirmed: set_business_hours", "replies": [{"text": "GOAL_REACHED"}]}]}


@pytest.fixture(scope="module")
def service() -> Iterator[str]:
    env = {**os.environ, "AGENT_TOKEN": "tok", "OWNAGENT_LOG": "/dev/null"}
    proc = subprocess.Popen([sys.executable, str(AGENT), "serve"], stdout=subprocess.PIPE,
                            text=True, env=env)
    assert proc.stdout is not None
    port = int(proc.stdout.readline().split()[1])
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    proc.wait()


@pytest.mark.parametrize("kind", ["http", "command"])
def test_a_simulated_user_talks_with_an_agent_that_runs_its_own_loop(
        tmp_path: Path, userver: FakeServer, cli_env: dict[str, str], service: str,
        monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
    monkeypatch.setenv("AGENT_TOKEN", "tok")
    agent: dict[str, Any] = (
        {"kind": "http", "url": service + "/chat", "api_key_env": "AGENT_TOKEN",
         "body": {"message": "{{ message }}", "session": "{{ session }}",
                  "tools_url": "{{ mcp_url }}", "turn": "{{ turn }}", "now": "{{ at }}",
                  "confirmed": "{{ confirmed }}", "cancelled": "{{ cancelled }}"},
         "answer": "reply.text", "pending": "held", "timeout_ms": 20000,
         "retry": {"max_attempts": 1}}
        if kind == "http" else
        {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
         "timeout_ms": 20000})
    userver.script(own_user_script())
    suite(tmp_path, agent, userver.url)
    write(tmp_path / "own.yaml", OWN)
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert rec["status"] == "pass", rec["reason"]
    assert rec["goal_reached"] is True
    assert [(t["kind"], t["text"], t["simulated"]) for t in rec["turns"]] == [
        ("say", 'HOLD set_business_hours {"day": "saturday", "hours": "closed"}', True),
        ("confirm", "set_business_hours", True)]
    assert rec["calls"][0]["decision"] == "confirmed"
    assert rec["user_messages"][-1] == "GOAL_REACHED"
    assert "confirmed: set_business_hours -> Hours for saturday updated." in \
        rec["turns"][1]["answer"]


def test_a_recorded_own_loop_conversation_with_a_simulated_user_replays_offline(
        tmp_path: Path, userver: FakeServer, cli_env: dict[str, str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``--record`` keeps the simulated user's replies in the agent's cassette; the replay
    answers both from it, asking neither the agent nor the user's model."""
    agent = {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
             "timeout_ms": 20000}
    userver.script(own_user_script())
    suite(tmp_path, agent, userver.url)
    write(tmp_path / "own.yaml", OWN)
    r = run_cli("run", ".", "--no-early-stop", "--record", "own.jsonl", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (live,) = records(tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "own.jsonl").read_text().splitlines()[1:]]
    assert sum(1 for x in lines if x.get("user") is True) == 3  # the user was asked 3 times
    assert sum(1 for x in lines if "answer" in x) == 2  # the agent's two turns
    data = json.loads((tmp_path / "scenarist.yaml").read_text())
    data["targets"]["again"] = {"kind": "replay", "cassette": "own.jsonl"}
    data["targets"]["agent"]["command"] = ["/nonexistent/agent"]  # never started again
    (tmp_path / "scenarist.yaml").write_text(json.dumps(data))
    userver.script({"rules": []})
    r = run_cli("run", ".", "--no-early-stop", "--target", "again", "--out", "replayed",
                cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert user_bodies(userver) == []
    (d,) = (tmp_path / "replayed").iterdir()
    (again,) = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
    assert again["status"] == "pass"
    assert again["turns"] == live["turns"]
    assert again["user_messages"] == live["user_messages"]
