"""plan.json, run.json and summary.json: each read and written by its one module in
dsl/store/, as frozen types. What is written reads back as the same value; a file of
another version, or with a value of the wrong type, is refused with the file and the
place of the value in it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsl.compiler.compile import build_plan
from dsl.compiler.plan import plan_json
from dsl.errors import RunDirError
from dsl.store import read_plan, read_run_info, read_summary, write_json
from dsl.store.planfile import plan_from_json
from dsl.store.planfile import plan_json as planned_json
from dsl.store.runfile import (
    EarlyStop,
    Git,
    HistoryKept,
    JudgeUse,
    Refused,
    RunInfo,
    RunSettings,
    SavedRuns,
    run_from_json,
    run_json,
)
from dsl.store.summaryfile import summary_from_json, summary_json
from tests.conftest import REPO, plain_suite
from tests.conftest import write as write_file
from tests.results.report_builders import demo_run

TALK = """
id: talk
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
  history:
    - user: hola
    - assistant: ¡Hola! ¿En qué te ayudo?
when:
  user:
    goal: Find out until what time the clinic is open on Saturday.
    persona: Ana, a patient who writes short messages in Spanish.
    target: fake
    max_turns: 3
then:
  - goal_reached
"""

NOTES = """
id: notes
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [set_business_hours]
when:
  - say: "¿Qué dicen mis notas?"
    attachments:
      - {path: notes.txt, kind: file, label: my notes}
    then:
      - {non_empty: true, name: says something, always: true}
  - confirm: all
then:
  - contains: "18:00"
"""


@pytest.mark.parametrize("where", ["examples", "conversations"])
def test_a_plan_reads_back_as_it_was_written(where: str, tmp_path: Path) -> None:
    if where == "examples":  # cases (a CSV file and inline), tools, judge checks
        plan, _ = build_plan([REPO / "scenarios"])
    else:  # a simulated user, given history, turns with their checks and attachments
        plain_suite(tmp_path, "http://127.0.0.1:9/v1")
        write_file(tmp_path / "talk.yaml", TALK)
        write_file(tmp_path / "notes.yaml", NOTES)
        write_file(tmp_path / "notes.txt", "Cierra a las 18:00.")
        plan, _ = build_plan([tmp_path])
    data = json.loads(json.dumps(plan_json(plan), ensure_ascii=False))
    read = plan_from_json(data)
    assert planned_json(read) == data
    if where == "examples":
        assert any(s.case for s in read.scenarios)
    else:
        assert [s.id for s in read.scenarios] == ["notes", "talk"]
        notes, talk = read.scenarios
        assert notes.turns[0].attachments[0]["label"] == "my notes"
        assert (notes.checks[0].always, notes.checks[0].named) == (True, True)
        assert talk.user is not None
        assert talk.user.target == "fake"
        assert len(talk.history) == 2


def test_a_planned_scenario_knows_where_it_runs_and_its_always_checks() -> None:
    plan = plan_from_json({"suite": None, "targets": [{"name": "a", "kind": "openai"}],
                           "scenarios": [
        {"id": "s", "file": "s.yaml", "line": 3, "runs": 2, "min_pass": 1,
         "targets": ["b"], "checks": [{"check": "contains", "label": "x", "always": True}]},
        {"id": "t", "file": "t.yaml", "line": 1, "runs": 2, "min_pass": 1, "file_runs": 5,
         "expected_tools": ["search"], "checks": []}]})
    s, t = plan.scenarios
    assert (s.runs_on("a"), s.runs_on("b"), t.runs_on("a")) == (False, True, True)
    assert (s.always, t.always) == (True, False)
    assert (s.runs_asked, t.runs_asked) == (2, 5)
    assert s.tool_expectation is None
    assert t.tool_expectation is not None
    assert t.tool_expectation.expected == ("search",)
    assert plan.keys() == [("s", "a"), ("t", "a")]


def test_a_summary_reads_back_as_it_was_written(tmp_path: Path) -> None:
    data = json.loads((demo_run(tmp_path / "run") / "summary.json").read_text("utf-8"))
    summary = summary_from_json(data)
    assert summary_json(summary) == data
    row = summary.scenarios[0]
    assert (row.scenario, row.target, row.verdict, row.passes, row.decided) == (
        "clinic.book_cleaning", "fake", "fail", 3, 5)
    assert row.checks[0].label == 'asks_to_confirm: "book_appointment"'


def test_run_info_reads_back_as_it_was_written() -> None:
    info = RunInfo(
        "r1", suite="scenarist.yaml", started_at="2026-11-30T10:00:00+00:00",
        scenarist="1.0", python="3.11.9", argv=("run",),
        settings=RunSettings(("/s",), ("/x.yaml",), ("t",), 3, (2, 4), False, "j", ("a",),
                             ("k*",)),
        compare=(("old", "new"),), git=Git("abc", "main", "yes"),
        history=HistoryKept("sqlite", "/s/.scenarist/history.db"),
        resumed_at=("2026-11-30T11:00:00+00:00",), reran_errors=True,
        finished_at="2026-11-30T11:01:00+00:00", duration_s=61.5, interrupted=False,
        early_stop=EarlyStop(2, 4, (SavedRuns("s", "t", 2),)), stopped="max_calls",
        targets_down={"t": "5 connection errors in a row"}, throttled={"t": 2},
        judge=JudgeUse(3, 1, 900, None, True, "j", {"kappa": 0.7}))
    data = json.loads(json.dumps(run_json(info)))
    assert run_from_json(data) == info
    assert data["settings"]["shard"] == [2, 4]
    assert data["compare"] == [["old", "new"]]


def test_a_recheck_and_a_merge_keep_their_own_fields() -> None:
    recheck = RunInfo("r2", recheck_of="r1", rechecked_from="/runs/r1", compare=(),
                      refused=(Refused("s", "its given changed"),), interrupted=False)
    merged = RunInfo("r3", merged_from=("a", "b"), early_stop=EarlyStop(), interrupted=True)
    for info in (recheck, merged):
        assert run_from_json(json.loads(json.dumps(run_json(info)))) == info
    assert "git" not in run_json(merged)
    assert run_json(recheck)["refused"] == [{"scenario": "s", "why": "its given changed"}]


def write(path: Path, data: dict[str, Any]) -> Path:
    write_json(path, {"schema_version": 1, **data})
    return path


def test_a_wrong_value_is_refused_with_its_file_and_place(tmp_path: Path) -> None:
    write(tmp_path / "plan.json", {"targets": [], "scenarios": [
        {"id": "s", "file": "s.yaml", "line": 1, "runs": 2, "min_pass": 1, "checks": []},
        {"id": "t", "file": "t.yaml", "line": 1, "runs": "5", "min_pass": 1, "checks": []}]})
    with pytest.raises(RunDirError) as plan:
        read_plan(tmp_path)
    assert str(plan.value) == (f"{tmp_path / 'plan.json'} is not a run's plan: "
                               "scenarios[1].runs is text, not a whole number")
    write(tmp_path / "run.json", {"run_id": "r", "settings": {"paths": ["/s"], "shard": [1]}})
    with pytest.raises(RunDirError) as run:
        read_run_info(tmp_path)
    assert str(run.value) == (f"{tmp_path / 'run.json'} is not a run's information: "
                              "settings.shard is not [I, N], two whole numbers")
    write(tmp_path / "summary.json", {"scenarios": [
        {"scenario": "s", "target": "t", "verdict": "pass", "passes": 1, "decided": 1,
         "checks": [{"check": "c", "label": "c", "passes": None, "evaluated": 1}]}]})
    with pytest.raises(RunDirError) as summary:
        read_summary(tmp_path / "summary.json")
    assert str(summary.value) == (f"{tmp_path / 'summary.json'} is not a run summary: "
                                  "scenarios[0].checks[0].passes is null, not a whole number")


@pytest.mark.parametrize("version", [2, None, "1"])
def test_another_version_is_refused(tmp_path: Path, version: object) -> None:
    data: dict[str, object] = {"run_id": "r"}
    if version is not None:
        data["schema_version"] = version
    write_json(tmp_path / "run.json", data)
    with pytest.raises(RunDirError) as exc:
        read_run_info(tmp_path)
    assert str(exc.value) == (f"{tmp_path / 'run.json'} has schema_version {version!r}; this "
                              "Scenarist reads version 1 (upgrade Scenarist, or re-run to "
                              "regenerate it)")
