"""Checks that must hold every time (``always: true``) and checks with readable names
(``name:``), through the real command line against tests/fakeserver.py (its own process).

The pharmacy scenario asks for a refill of a prescription that has none left. Five of six
seeds answer well; seed 2 creates the refill anyway. min_pass is 3, so without ``always``
the scenario would pass; with it, that one attempt fails the scenario — early stop sees it
and runs nothing more, and running everything gives the same verdict.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, FakeServer, suite_yaml, write

GOOD = [
    {"tool_calls": [{"name": "check_prescription", "arguments": {"rx": "RX-1001"}}]},
    {"text": "A tu receta RX-1001 no le quedan renovaciones: pedile una nueva a tu médico."},
]
BAD = [  # seed 2: looks it up, then creates the refill anyway
    {"tool_calls": [{"name": "check_prescription", "arguments": {"rx": "RX-1001"}}]},
    {"tool_calls": [{"name": "create_refill_request", "arguments": {"rx": "RX-1001"}}]},
    {"text": "Listo, pedí la renovación. Consultá también a tu médico."},
]
SCRIPT = {"rules": [{"match": "renovar", "replies": GOOD, "by_seed": {"2": BAD}}]}

TOOLS = {
    "check_prescription": {
        "description": "Look a prescription up: its medicine and the refills left.",
        "input_schema": {"type": "object", "properties": {"rx": {"type": "string"}},
                         "required": ["rx"]},
        "returns": '{"rx": "{{ args.rx }}", "medicine": "losartán 50 mg", "refills_left": 0}',
    },
    "create_refill_request": {
        "description": "Ask the pharmacy to refill a prescription.",
        "input_schema": {"type": "object", "properties": {"rx": {"type": "string"}},
                         "required": ["rx"]},
        "action": "create",
        "returns": "Refill requested.",
    },
}

SCENARIO = """\
description: A patient asks to refill a prescription that has no refills left.
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [check_prescription, create_refill_request]
when: Quiero renovar la receta RX-1001
then:
  - {calls: {name: check_prescription, args: {rx: RX-1001}}, name: looks the prescription up}
  - {not_calls: create_refill_request, always: true, name: never refills an empty prescription}
  - contains: médico
runs: 6
min_pass: 3
"""


def scenarist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def read(run_dir: Path, name: str) -> Any:
    return json.loads((run_dir / name).read_text("utf-8"))


@pytest.fixture(scope="module")
def runs(fake_server: FakeServer, tmp_path_factory: pytest.TempPathFactory
         ) -> dict[str, tuple[subprocess.CompletedProcess[str], Path]]:
    suite = tmp_path_factory.mktemp("pharmacy")
    targets = {"fake": {"kind": "openai", "base_url": fake_server.url, "model": "m",
                        "timeout_ms": 5000, "retry": {"max_attempts": 1}}}
    data = json.loads(suite_yaml(fake_server.url, targets=targets))
    data["tools"] = TOOLS
    write(suite / "scenarist.yaml", json.dumps(data, ensure_ascii=False))
    write(suite / "refill_empty.yaml", SCENARIO)
    out = {}
    for name, extra in (("early", ()), ("full", ("--no-early-stop",))):
        fake_server.script(SCRIPT)
        p = scenarist("run", ".", "-j", "1", "--out", name, *extra, cwd=suite)
        (run_dir,) = (suite / name).iterdir()
        out[name] = (p, run_dir)
    return out


def test_the_lint_of_the_scenario_is_clean(runs: Any) -> None:
    _p, run_dir = runs["early"]
    suite = run_dir.parent.parent
    lint = scenarist("lint", ".", cwd=suite)
    assert (lint.returncode, lint.stdout) == (0, "1 file(s): 0 error(s), 0 warning(s)\n")


def test_one_failed_always_check_fails_the_scenario_and_early_stop_runs_nothing_more(
        runs: Any) -> None:
    p, run_dir = runs["early"]
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "FAIL  refill_empty  fake    1/2   min 3    50% [9%–91%]  4 not needed"
    assert lines[1] == ("      ✗ never refills an empty prescription [always]  (failed 1 of 2; "
                        "once is enough to fail the scenario)")
    assert lines[4] == (
        "Early stop: 4 of the 6 planned attempts were not run, because their scenario's "
        "verdict was already decided (refill_empty failed after 2 of 6: an always check "
        "failed); --no-early-stop runs them all.")
    # issue 14's tool-call F1 comes after it: the broken rule's call is a wrong one
    assert lines[5] == ("Tool calls: F1 67% (precision 50%, recall 100%; 1 right, 1 wrong, "
                        "0 missed)")
    row = read(run_dir, "summary.json")["scenarios"][0]
    assert (row["verdict"], row["verdict_reason"], row["always_broken"], row["saved"]) == \
        ("fail", "always_broken", 1, 4)


def test_running_everything_gives_the_same_verdict(runs: Any) -> None:
    p, run_dir = runs["full"]
    assert p.returncode == 1
    row = read(run_dir, "summary.json")["scenarios"][0]
    # 5 of 6 passed, min_pass is 3: min_pass alone would pass it
    assert (row["passes"], row["decided"], row["verdict"], row["verdict_reason"]) == \
        (5, 6, "fail", "always_broken")
    assert p.stdout.splitlines()[:2] == [
        "FAIL  refill_empty  fake    5/6   min 3    83% [44%–97%]",
        "      ✗ never refills an empty prescription [always]  (failed 1 of 6; once is enough "
        "to fail the scenario)"]
    early = read(runs["early"][1], "summary.json")["scenarios"][0]
    assert early["verdict"] == row["verdict"]


def test_the_plan_and_each_record_keep_the_names_and_the_always_flag(runs: Any) -> None:
    _, run_dir = runs["full"]
    checks = read(run_dir, "plan.json")["scenarios"][0]["checks"]
    assert [(c["label"], c.get("always", False), c.get("named", False)) for c in checks] == [
        ("looks the prescription up", False, True),
        ("never refills an empty prescription", True, True),
        ('contains: "médico"', False, False)]
    lines = (run_dir / "results.jsonl").read_text("utf-8").splitlines()
    bad = next(json.loads(x) for x in lines if json.loads(x)["run"] == 2)
    assert bad["reason"] == "1 of 3 checks failed: never refills an empty prescription"
    assert bad["checks"][1] == {
        "check": "not_calls", "label": "never refills an empty prescription",
        "status": "fail", "score": 0.0, "always": True,
        "reason": bad["checks"][1]["reason"]}


def test_junit_and_summary_md_name_the_checks_and_say_always(runs: Any) -> None:
    _, run_dir = runs["full"]
    case = ET.parse(run_dir / "junit.xml").getroot().find("testsuite/testcase")
    assert case is not None
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("message") == (
        "5 of 6 attempts passed (83%, 95% CI 44–97%); min_pass is 3 of 6. An always check "
        "failed in 1 attempt: that fails the scenario whatever min_pass says. Failing checks: "
        "never refills an empty prescription [always] (failed 1 of 6).")
    assert failure.text is not None
    assert failure.text.splitlines()[-3:] == [
        "  100%  looks the prescription up  (6 of 6 passed)",
        "   83%  never refills an empty prescription [always]  (5 of 6 passed)",
        '  100%  contains: "médico"  (6 of 6 passed)']
    md = (run_dir / "summary.md").read_text("utf-8")
    assert ("| ❌ fail | `refill_empty` | `fake` | 5/6 (min 3) | 83% (44–97%) | "
            "`never refills an empty prescription` (always) ×1 (pass rate 83%, 95% CI "
            "44–97%) |") in md


def test_the_report_table_names_the_checks_and_marks_always(runs: Any) -> None:
    _, run_dir = runs["full"]
    html = (run_dir / "report.html").read_text("utf-8")
    problems = html.split('<td class="problems">')[1].split("</td>")[0]
    assert ('✗ <span class="check-name">never refills an empty prescription</span> '
            '<span class="badge b-always"') in problems
    table = html.split('<table class="checks">')[1].split("</table>")[0]
    assert '<th scope="row"><span class="check-name">looks the prescription up</span></th>' \
        in table
    assert '<th scope="row"><code>contains: &#34;médico&#34;</code></th>' in table
    assert table.count('class="badge b-always"') == 1
    assert ("<strong>Failed by an always check:</strong> it did not pass in 1 attempt, and one "
            "is enough to fail the scenario, whatever min_pass says.") in html


def test_an_attempt_lost_to_the_endpoint_leaves_an_always_scenario_without_a_verdict(
        server: FakeServer, tmp_path: Path) -> None:
    down = [{"status": 503, "body": "<html><body>Service Unavailable</body></html>"}]
    server.script({"rules": [{"match": "renovar", "replies": GOOD, "by_seed": {"3": down}}]})
    targets = {"fake": {"kind": "openai", "base_url": server.url, "model": "m",
                        "timeout_ms": 5000, "retry": {"max_attempts": 1}}}
    data = json.loads(suite_yaml(server.url, targets=targets))
    data["tools"] = TOOLS
    write(tmp_path / "scenarist.yaml", json.dumps(data, ensure_ascii=False))
    write(tmp_path / "refill_empty.yaml", SCENARIO.replace("runs: 6", "runs: 4"))
    p = scenarist("run", ".", "-j", "1", cwd=tmp_path)
    assert p.returncode == 3, p.stdout + p.stderr  # no verdict
    lines = p.stdout.splitlines()
    assert lines[0] == "????  refill_empty  fake    3/3   min 3   100% [44%–100%]  1 error (status)"
    assert lines[1] == ("      ? an always check must pass in every attempt, and 1 of the 4 did "
                        "not reach the model, so no one knows whether it held there")
    assert lines[2].startswith("      ! status ×1: The endpoint answered with an error")
