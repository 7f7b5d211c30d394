"""``defaults.min_pass`` (issue 25, item 3): a count of runs beside ``defaults.min_pass_rate``;
a scenario's own min_pass (or min_pass_rate) wins; both in defaults is a lint error; and W411
when a min_pass_rate below 1 rounds up to every run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsl.compiler.lint import lint_paths
from tests.conftest import FakeServer, run_cli, suite_yaml, write

HOURS = """
given:
  at: 2026-09-29T10:00:00-03:00
when: ¿Hasta qué hora atienden hoy?
then:
  - contains: "18:00"
"""

# seeds 1 and 2 answer well, seed 3 does not: 2 of 3 runs pass
TWO_OF_THREE = {"rules": [{"match": "hora", "replies": [{"text": "Hasta las 18:00."}],
                           "by_seed": {"3": [{"text": "No sé."}]}}]}


def _summary_row(tmp_path: Path) -> dict[str, Any]:
    (d,) = (tmp_path / "runs").iterdir()
    row: dict[str, Any] = json.loads((d / "summary.json").read_text())["scenarios"][0]
    return row


def test_defaults_min_pass_passes_a_scenario_that_passes_two_of_three(
        tmp_path: Path, server: FakeServer) -> None:
    server.script(TWO_OF_THREE)
    suite = json.loads(suite_yaml(server.url))
    suite["defaults"] = {"runs": 3, "min_pass": 2, "concurrency": 1}
    write(tmp_path / "scenarist.yaml", json.dumps(suite))
    write(tmp_path / "hours.yaml", HOURS)
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    row = _summary_row(tmp_path)
    assert (row["verdict"], row["passes"], row["decided"], row["min_pass"]) == ("pass", 2, 3, 2)
    assert [d.code for d in lint_paths([tmp_path]).diagnostics if d.code != "W403"] == []


def test_a_scenarios_own_min_pass_wins_over_defaults_min_pass(
        tmp_path: Path, server: FakeServer) -> None:
    server.script(TWO_OF_THREE)
    suite = json.loads(suite_yaml(server.url))
    suite["defaults"] = {"runs": 3, "min_pass": 2}
    write(tmp_path / "scenarist.yaml", json.dumps(suite))
    write(tmp_path / "hours.yaml", HOURS + "min_pass: 3\n")
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    assert (_summary_row(tmp_path)["verdict"], _summary_row(tmp_path)["min_pass"]) == (
        "fail", 3)


def _lint(tmp_path: Path, defaults: dict[str, Any], scenario: str) -> list[str]:
    suite = json.loads(suite_yaml("http://127.0.0.1:9/v1"))
    suite["defaults"] = defaults
    write(tmp_path / "scenarist.yaml", json.dumps(suite))
    write(tmp_path / "hours.yaml", scenario)
    result = lint_paths([tmp_path / "hours.yaml"])
    return [f"{Path(d.span.file).name}:{d.span.line}:{d.span.col}: {d.code} {d.message}"
            for d in result.diagnostics if d.code != "W403"]


def test_both_min_pass_and_min_pass_rate_in_defaults_is_an_error(tmp_path: Path) -> None:
    got = _lint(tmp_path, {"runs": 3, "min_pass": 2, "min_pass_rate": 0.5}, HOURS)
    assert [g for g in got if " S105 " in g] == [
        "scenarist.yaml:1:192: S105 use either min_pass or min_pass_rate in defaults, not "
        "both"]


def test_a_rate_that_rounds_up_to_every_run_is_said_in_words(tmp_path: Path) -> None:
    got = _lint(tmp_path, {"runs": 5}, HOURS + "runs: 3\nmin_pass_rate: 0.67\n")
    assert got == ["hours.yaml:7:16: W411 min_pass_rate 0.67 of 3 runs means all 3 must pass "
                   "(0.67 × 3 = 2.01, rounded up to a whole run)"]
    # the suite's rate with the scenario's runs: said at runs
    got = _lint(tmp_path, {"runs": 5, "min_pass_rate": 0.67}, HOURS + "runs: 3\n")
    assert got == ["hours.yaml:6:7: W411 min_pass_rate 0.67 of 3 runs means all 3 must pass "
                   "(0.67 × 3 = 2.01, rounded up to a whole run) (the suite's min_pass_rate, "
                   "with this scenario's runs)"]
    # a count, or a share that leaves room: nothing to say
    assert _lint(tmp_path, {"runs": 3, "min_pass": 2}, HOURS + "runs: 3\n") == []
    assert _lint(tmp_path, {"runs": 5}, HOURS + "runs: 3\nmin_pass_rate: 0.66\n") == []


def test_the_suites_defaults_are_warned_about_once_at_the_suite(tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml",
          'targets: {t: {kind: openai, base_url: "http://127.0.0.1:9/v1", model: m}}\n'
          "defaults: {runs: 3, min_pass_rate: 0.67}\n")
    write(tmp_path / "hours.yaml", HOURS)
    result = lint_paths([tmp_path])
    assert [(Path(d.span.file).name, d.span.line, d.span.col, d.code, d.message)
            for d in result.diagnostics if d.code != "W403"] == [
        ("scenarist.yaml", 2, 36, "W411", "min_pass_rate 0.67 of 3 runs means all 3 must pass "
                                          "(0.67 × 3 = 2.01, rounded up to a whole run)")]
