"""The command line: plan, targets, usage errors and their exact messages."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import HOURS, FakeServer, run_cli, suite_yaml, write


def two_targets(tmp_path: Path, url: str, default: str | None = None) -> None:
    targets = {"a": {"kind": "openai", "base_url": url, "model": "m1"},
               "b": {"kind": "openai", "base_url": url, "model": "m2"}}
    defaults = {"target": default} if default else {}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets, defaults=defaults))
    write(tmp_path / "hours.yaml", HOURS)


def test_several_targets_and_no_default_is_an_input_error(tmp_path: Path, server: FakeServer,
                                                          cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == (
        "scenarist.yaml:2:3: error E207 scenarist.yaml defines several targets ('a' and 'b') "
        "and no default one\n"
        '  2 |   "targets": {\n'
        "    |   ^\n"
        "  hint: choose one with --target NAME, or set defaults.target in scenarist.yaml\n")
    assert run_cli("plan", ".", "--target", "b", cwd=tmp_path).exit_code == 0


def test_unknown_target_on_the_command_line(tmp_path: Path, server: FakeServer,
                                            cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url, default="a")
    r = run_cli("run", ".", "--target", "bb", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error E206 there is no target 'bb' in scenarist.yaml; did you mean "
                        "'b'?\n  hint: the targets are 'a' and 'b'\n")


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


def test_no_suite(tmp_path: Path, cli_env: dict[str, str]) -> None:
    write(tmp_path / "s" / "hours.yaml", HOURS)
    r = run_cli("run", "s", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error E210 no scenarist.yaml found in 's' or its parent folders\n"
                        "  hint: create scenarist.yaml next to your scenarios with at least "
                        "one target (see docs/suite.md)\n")


def test_missing_path(tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url, default="a")
    r = run_cli("run", "nope.yaml", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error E216 'nope.yaml' does not exist\n"
                        "  hint: check the path: it is relative to the current folder\n")


def test_paths_of_two_suites(tmp_path: Path, server: FakeServer,
                             cli_env: dict[str, str]) -> None:
    for d in ("one", "two"):
        two_targets(tmp_path / d, server.url, default="a")
    r = run_cli("plan", "one", "two", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error E211 these paths belong to different suites: "
                        "'one/scenarist.yaml' and 'two/scenarist.yaml'\n"
                        "  hint: run each suite separately\n")


def test_checks_and_schema_commands(tmp_path: Path, cli_env: dict[str, str]) -> None:
    r = run_cli("checks", cwd=tmp_path)
    assert r.exit_code == 0
    assert "contains" in r.output
    assert "faithful" in r.output
    assert "(judge)" in r.output
    s = run_cli("schema", "--suite", cwd=tmp_path)
    assert json.loads(s.output)["title"] == "Scenarist suite (scenarist.yaml)"


def test_runs_override_scales_min_pass(tmp_path: Path, server: FakeServer,
                                       cli_env: dict[str, str]) -> None:
    two_targets(tmp_path, server.url, default="a")
    write(tmp_path / "hours.yaml", HOURS + "runs: 10\nmin_pass: 9\n")
    plan = json.loads(run_cli("plan", ".", "--json", "--runs", "20", cwd=tmp_path).output)
    assert (plan["scenarios"][0]["runs"], plan["scenarios"][0]["min_pass"]) == (20, 18)


def test_retry_errors_needs_resume(tmp_path: Path, cli_env: dict[str, str]) -> None:
    r = run_cli("run", "--retry-errors", cwd=tmp_path)
    assert r.exit_code == 2
    assert "--retry-errors needs --resume RUNDIR" in r.output
