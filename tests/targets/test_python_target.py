"""kind: python — your own agent receives an Env, calls fake tools, and is checked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import HOURS, REPO, TOOL_THEN_ANSWER, FakeServer, run_cli, suite_yaml, write


def agent_suite(tmp_path: Path, url: str, code: str) -> None:
    # one module name per test: tests share a process, and Python caches imported modules
    module = "agent_" + tmp_path.name.replace("-", "_").replace(".", "_")
    targets = {"mine": {"kind": "python", "entry": f"{module}:run"},
               "fake": {"kind": "openai", "base_url": url, "model": "fake-model",
                        "temperature": 0.1}}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets,
                                                  defaults={"target": "mine"}))
    write(tmp_path / f"{module}.py", code)


def only_records(tmp_path: Path) -> list[dict[str, Any]]:
    (d,) = (tmp_path / "runs").iterdir()
    return [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]


def test_example_bot_passes_the_example_suite(tmp_path: Path, cli_env: dict[str, str]) -> None:
    r = run_cli("run", str(REPO / "scenarios"), "--target", "bot", "--out", "runs",
                "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    recs = {(x["scenario"], x["run"]): x for x in only_records(tmp_path)}
    change = recs[("clinic.change_hours", 1)]
    assert change["answer"] == "¿Confirmás que cambio el horario del sábado a «closed»?"
    assert change["calls"][0]["pending"] is True
    assert change["calls"][0]["args"] == {"day": "saturday", "hours": "closed"}
    book = recs[("clinic.book_cleaning", 1)]
    assert [c["name"] for c in book["calls"]] == ["search_slots", "book_appointment"]
    assert book["calls"][1]["output"] == '{"booked": true, "date": "2026-10-06", "time": "15:00"}'


SYNC_AGENT = '''
import json

def run(env):
    assert env.seed in (1, 2, 3)
    assert env.at.hour == 10 and env.at.utcoffset().total_seconds() == -3 * 3600
    assert env.clock() >= env.at
    hours = json.loads(env.tools["list_business_hours"]())
    pending = env.tools["set_business_hours"](day="monday", hours="10-19")
    assert pending is None
    return "Hoy hasta las " + hours["tuesday"].split("-")[1]
'''


def test_sync_agent_tools_are_recorded_and_confirm_tools_pend(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    agent_suite(tmp_path, server.url, SYNC_AGENT)
    write(tmp_path / "hours.yaml", HOURS.replace("  - asks_nothing_to_confirm\n",
                                                 "  - asks_to_confirm: set_business_hours\n"))
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    recs = only_records(tmp_path)
    assert len(recs) == 3
    rec = recs[0]
    assert rec["answer"] == "Hoy hasta las 18:00"
    assert [(c["name"], c["pending"]) for c in rec["calls"]] == [
        ("list_business_hours", False), ("set_business_hours", True)]
    assert rec["steps"] == 0
    assert server.requests() == []


ASYNC_AGENT = '''
async def run(env):
    client = env.targets["fake"]
    messages = [{"role": "system", "content": f"Now: {env.at.isoformat()}"},
                {"role": "user", "content": env.message}]
    msg = await client.chat(messages, tools=env.openai_tools())
    for call in msg.get("tool_calls") or []:
        out = env.tools[call["function"]["name"]]()
        messages += [msg, {"role": "tool", "tool_call_id": call["id"], "content": out}]
    final = await client.chat(messages)
    return {"answer": final["content"], "pending": []}
'''


def test_async_agent_uses_the_suites_model_targets(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    agent_suite(tmp_path, server.url, ASYNC_AGENT)
    write(tmp_path / "hours.yaml", HOURS + "runs: 2\nmin_pass: 2\n")
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    recs = only_records(tmp_path)
    assert [x["status"] for x in recs] == ["pass", "pass"]
    assert recs[0]["steps"] == 2
    assert recs[0]["tokens"]["total"] > 0
    reqs = server.requests()
    assert len(reqs) == 4
    assert {q["body"]["seed"] for q in reqs} == {1, 2}
    assert reqs[0]["body"]["temperature"] == 0.1
    assert reqs[0]["body"]["model"] == "fake-model"


def test_agent_errors_are_attempt_errors_with_their_place(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    agent_suite(tmp_path, server.url, "def run(env):\n    return {'oops': 1}['missing']\n")
    write(tmp_path / "hours.yaml", HOURS + "runs: 1\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3
    (rec,) = only_records(tmp_path)
    assert rec["error"] == {"kind": "agent", "status": None,
                            "message": "the agent raised KeyError: 'missing' (at "
                                       f"agent_{tmp_path.name}.py:2 in run)"}


def test_agent_returning_the_wrong_type(tmp_path: Path, server: FakeServer,
                                        cli_env: dict[str, str]) -> None:
    agent_suite(tmp_path, server.url, "def run(env):\n    return 42\n")
    write(tmp_path / "hours.yaml", HOURS + "runs: 1\nmin_pass: 1\n")
    run_cli("run", ".", cwd=tmp_path)
    (rec,) = only_records(tmp_path)
    assert rec["error"]["message"] == (
        "the agent must return the answer as text, or {'answer': text, 'pending': [{'name': "
        "..., 'args': {...}}]}; it returned int")


def test_agent_that_cannot_be_imported(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str]) -> None:
    agent_suite(tmp_path, server.url, "import not_a_module_anywhere\n")
    write(tmp_path / "hours.yaml", HOURS + "runs: 2\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3
    recs = only_records(tmp_path)
    assert recs[0]["error"]["message"] == (
        f"cannot import agent_{tmp_path.name} (from {tmp_path.resolve()}): ModuleNotFoundError: No module "
        "named 'not_a_module_anywhere'")
