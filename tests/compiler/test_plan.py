"""scenarist plan: the compiled plan as text and JSON, the upper bound of model calls, --runs."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import HOURS, FakeServer, plain_suite, run_cli, suite_yaml, two_targets, write


def test_plan_shows_the_upper_bound_of_calls(tmp_path: Path, server: FakeServer,
                                             cli_env: dict[str, str]) -> None:
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS + "runs: 10\nmax_steps: 3\n")
    r = run_cli("plan", ".", cwd=tmp_path)
    assert r.exit_code == 0
    assert r.output.endswith("= 10 attempts; at most 30 model calls\n")


def test_plan_json_is_the_compiled_plan(tmp_path: Path, server: FakeServer,
                                        cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url, default="a")
    r = run_cli("plan", ".", "--json", "--target", "a", "--target", "b", "--runs", "4",
                cwd=tmp_path)
    assert r.exit_code == 0
    plan = json.loads(r.output)
    assert plan["schema_version"] == 1
    assert [t["name"] for t in plan["targets"]] == ["a", "b"]
    (s,) = plan["scenarios"]
    assert (s["id"], s["runs"], s["min_pass"], s["max_steps"]) == ("hours", 4, 3, 6)
    assert s["at"] == "2026-09-29T10:00:00-03:00"
    assert [c["label"] for c in s["checks"]] == ['calls: "list_business_hours"',
                                                 'contains: "18:00"', "does_not_modify",
                                                 "asks_nothing_to_confirm"]
    assert (plan["attempts"], plan["max_model_calls"]) == (8, 48)
    assert "Bearer" not in r.output


def test_plan_text(tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url, default="a")
    r = run_cli("plan", ".", cwd=tmp_path)
    assert r.output == (
        "scenario  runs  min_pass  max_steps  checks  most calls\n"
        "hours        3         2          6       4          18\n\n"
        f"1 scenarios × 1 target(s) [a (m1 at {server.url})] = 3 attempts; at most 18 model "
        "calls\n")


def test_runs_override_scales_min_pass(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url, default="a")
    write(tmp_path / "hours.yaml", HOURS + "runs: 10\nmin_pass: 9\n")
    plan = json.loads(run_cli("plan", ".", "--json", "--runs", "20", cwd=tmp_path).output)
    assert (plan["scenarios"][0]["runs"], plan["scenarios"][0]["min_pass"]) == (20, 18)


def test_the_plan_s_fingerprint_takes_any_text() -> None:
    """Half a surrogate pair (which lint refuses in every file) never crashes the hash."""
    from dsl.compiler.plan import plan_hash

    one = plan_hash({"scenarios": [{"message": "q\ud800"}]})
    assert one != plan_hash({"scenarios": [{"message": "q\ud801"}]})
    assert len(one) == 16


def test_plan_of_agents_that_run_their_own_loop_counts_turns_not_model_calls(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """An http or command agent is sent turns; its model calls are its own, so the plan
    shows turns (and, beside a model target, counts model calls for that target only)."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets={
        "service": {"kind": "http", "url": "http://127.0.0.1:9/chat"},
        "program": {"kind": "command", "command": ["node", "agent.js"]},
        "model": {"kind": "openai", "base_url": server.url, "model": "m1"}},
        defaults={"target": "service"}))
    write(tmp_path / "hours.yaml", HOURS + "runs: 4\nmin_pass: 3\n")
    write(tmp_path / "talk.yaml",
          "given:\n  at: 2026-09-29T10:00:00-03:00\n  tools: [list_business_hours]\n"
          "when:\n  - say: hola\n  - say: chau\nthen:\n  - contains: '18:00'\nruns: 2\n")
    r = run_cli("plan", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output == (
        "scenario  runs  min_pass  turns  checks\n"
        "hours        4         3      1       4\n"
        "talk         2         2      2       1\n\n"
        "2 scenarios × 1 target(s) [service (agent service at http://127.0.0.1:9/chat)] = "
        "6 attempts; 8 turns sent to an agent that runs its own loop (its model calls are its "
        "own)\n")
    r = run_cli("plan", ".", "-t", "program", "-t", "model", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert r.output.splitlines()[-1] == (
        f"2 scenarios × 2 target(s) [program (command node agent.js), model (m1 at "
        f"{server.url})] = 12 attempts; at most 48 model calls; 8 turns sent to an agent "
        "that runs its own loop (its model calls are its own)")


SIMULATED = """
given:
  at: 2026-09-29T10:00:00-03:00
when:
  user:
    goal: Book a cleaning.
    target: local
    max_turns: 3
then:
  - goal_reached
runs: 3
min_pass: 1
"""


def test_plan_text_and_json_count_the_same_model_calls_for_an_agent_service(
        tmp_path: Path) -> None:
    """Issue 32, item 13: a simulated user against an `http` agent — the JSON said 66 model
    calls (as if Scenarist ran the agent's loop), the text said none; the real maximum is
    the simulated user's: 3 attempts × (3 messages + 1 question whether the goal was
    reached) = 12."""
    targets = {"local": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"},
               "service": {"kind": "http", "url": "http://127.0.0.1:9/chat",
                           "body": {"message": "{{ message }}", "tools": "{{ mcp_url }}"}}}
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1", targets=targets))
    write(tmp_path / "talk.yaml", SIMULATED)
    text = run_cli("plan", ".", "-t", "service", cwd=tmp_path)
    assert text.exit_code == 0, text.output
    assert text.output.splitlines()[-1] == (
        "1 scenarios × 1 target(s) [service (agent service at http://127.0.0.1:9/chat)] = 3 "
        "attempts; at most 12 model calls (the simulated user's); at most 9 turns sent to an "
        "agent that runs its own loop (its model calls are its own)")
    data = json.loads(run_cli("plan", ".", "-t", "service", "--json", cwd=tmp_path).output)
    assert data["max_model_calls"] == 12
    # against both: the model target's loop (3 × (3 × 6 + 3 + 1) = 66) and the user's 12
    both = run_cli("plan", ".", "-t", "local", "-t", "service", cwd=tmp_path)
    assert both.output.splitlines()[1].split()[-1] == "78"
    assert "at most 78 model calls;" in both.output
    data = json.loads(run_cli("plan", ".", "-t", "local", "-t", "service", "--json",
                              cwd=tmp_path).output)
    assert data["max_model_calls"] == 78
