"""What lint says is true of the run (issue 32, item 15): a warning that a check "can never
fail" only where no attempt can fail it; each mistake said as what it is, located."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import FakeServer, run_cli, suite_yaml, the_run, write

UNOFFERED = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, book_appointment]
when: "book me"
then:
  - not_calls: cancel_appointment
runs: 1
min_pass: 1
"""


def test_not_calls_of_a_tool_the_scenario_lacks_says_so_and_can_fail(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    """Before: W404 "this check can never fail" — yet a model that calls the tool anyway (by
    a name it was not given) fails it."""
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "book.yaml", UNOFFERED)
    lint = run_cli("lint", ".", cwd=tmp_path)
    assert lint.output.splitlines()[0] == (
        "book.yaml:6:16: warning W413 not_calls names 'cancel_appointment', which is not one of "
        "the scenario's tools: the agent is not offered it, so the check guards no tool of "
        "the scenario; did you mean 'book_appointment'?")
    assert "hint: fix the name (the scenario's tools are 'book_appointment' and " \
           "'list_business_hours'), or remove the check" in lint.output
    assert "can never fail" not in lint.output
    server.script({"rules": [{"match": "book me", "replies": [
        {"tool_calls": [{"name": "cancel_appointment", "arguments": {"id": "A-1"}}]},
        {"text": "Cancelled."}]}]})
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (record,) = [json.loads(x) for x in
                 (the_run(tmp_path / "runs") / "results.jsonl").read_text().splitlines()]
    (check,) = record["checks"]
    assert (check["status"], check["reason"]) == (
        "fail", 'expected no call to cancel_appointment; it was called with id="A-1"')
