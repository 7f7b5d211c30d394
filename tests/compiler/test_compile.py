"""Compile: scenario files and their suite become a Plan; what cannot compile is a located
diagnostic."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsl.compiler.plan import most_calls
from tests.conftest import HOURS, FakeServer, run_cli, suite_yaml, two_targets, write


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


def test_a_scenario_compiles_into_its_plan_values(tmp_path: Path, server: FakeServer) -> None:
    from dsl.compiler.compile import build_plan

    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "clinic" / "hours.yaml", HOURS + "runs: 7\nmin_pass_rate: 0.7\n")
    plan, compiled = build_plan([tmp_path])
    (s,) = plan.scenarios
    assert s.id == "clinic.hours"  # from the path, below the suite
    assert (s.runs, s.min_pass, s.max_steps) == (7, 5, 6)  # 0.7 × 7 = 4.9 → 5
    assert [t.name for t in s.tools] == ["list_business_hours", "set_business_hours"]
    assert [c.label for c in s.checks] == ['calls: "list_business_hours"', 'contains: "18:00"',
                                           "does_not_modify", "asks_nothing_to_confirm"]
    assert s.at.isoformat() == "2026-09-29T10:00:00-03:00"
    assert (s.checks[1].span.line, s.checks[1].span.col) == (8, 5)
    assert most_calls(s, plan.targets[0]) == 42
    assert plan.attempts == 7
    assert compiled.diagnostics == []
    again, _ = build_plan([tmp_path], runs=10)
    assert (again.scenarios[0].runs, again.scenarios[0].min_pass) == (10, 8)  # 5 of 7 → 8


def test_what_the_schema_cannot_see_is_located(tmp_path: Path, server: FakeServer,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from dsl.compiler.compile import compile_paths

    monkeypatch.chdir(tmp_path)
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "a.yaml", HOURS + "runs: 3\nmin_pass: 4\n")
    write(tmp_path / "b.yaml", HOURS.replace("2026-09-29T10:00:00-03:00", "2026-09-29T10:00:00"))
    write(tmp_path / "c.yaml", HOURS + "id: same\n")
    write(tmp_path / "d.yaml", HOURS + "id: same\n")
    found = [(str(d.span), d.code, d.message) for d in compile_paths([Path(".")]).diagnostics]
    assert found == [
        ("a.yaml:12:11", "E202", "min_pass is 4 but runs is 3: the scenario could never pass"),
        ("b.yaml:3:7", "E203", "the moment '2026-09-29T10:00:00' has no UTC offset, so the "
                               "agent cannot know the local time"),
        ("d.yaml:11:5", "E205", "the scenario id 'same' is already used by c.yaml"),
    ]
