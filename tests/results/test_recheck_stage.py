"""The recheck stage (dsl/pipeline/recheck.py) as functions, beside the end-to-end tests of
``scenarist recheck`` (tests/results/test_recheck.py): which changes make a different question,
which attempts can be read again, what a stored attempt gives the checks back, the
checks applied again, and the run folder written."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import msgspec
import pytest

from dsl.compiler.compile import build_plan
from dsl.compiler.plan import planned_scenario
from dsl.errors import NotReady
from dsl.model import Call, Plan
from dsl.pipeline.recheck import (
    attempt_data,
    changed_fields,
    has_transcript,
    prepare,
    recheck_records,
    run_recheck,
)
from dsl.store import AttemptError, AttemptRecord, read_plan, read_run_info
from dsl.store.planfile import PlannedCase, PlannedScenario, PlannedTurn, PlannedUser
from dsl.store.records import ModelCallStat
from tests.conftest import HOURS, plain_suite, write


@pytest.fixture
def plan(tmp_path: Path) -> Plan:
    plain_suite(tmp_path, "http://127.0.0.1:9/v1")
    write(tmp_path / "hours.yaml", HOURS + "runs: 2\nmin_pass: 1\n")
    return build_plan([tmp_path])[0]


def test_the_same_question_has_no_changed_field(plan: Plan) -> None:
    s = planned_scenario(plan.scenarios[0])
    assert s.given_when
    assert changed_fields(s, msgspec.structs.replace(s, checks=())) == []


def test_a_changed_given_or_when_is_named() -> None:
    old = PlannedScenario("s", "s.yaml", 1, 2, 1, at="2026-09-29T10:00:00-03:00",
                          system="", message="¿Hasta qué hora?")
    assert changed_fields(old, msgspec.structs.replace(old, message="¿Y mañana?")) == ["message"]
    assert changed_fields(old, msgspec.structs.replace(old,
        turns=(PlannedTurn("say", "hola", 3),),
        user=PlannedUser("goal", "", "fake", 3))) == ["the turns", "the simulated user"]
    with_case = msgspec.structs.replace(old, case=PlannedCase("es", 1, "c.csv", 2,
                                              {"day": "lunes", "closes": "18"}))
    other_case = msgspec.structs.replace(old, case=PlannedCase("es", 1, "c.csv", 2,
                                               {"day": "martes", "closes": "18"}))
    assert changed_fields(with_case, other_case) == ["the case's values: day"]


def test_a_fingerprint_that_differs_alone_means_the_tools_changed() -> None:
    old = PlannedScenario("s", "s.yaml", 1, 2, 1, given_when="aaaa")
    assert changed_fields(old, msgspec.structs.replace(old, given_when="bbbb")) == [
        "the tools' input_schema or returns"]


def record(status: str = "pass", **kw: object) -> AttemptRecord:
    base = AttemptRecord("hours", "fake", 1, "pass", "", "2026-11-30T10:00:00.000+00:00",
                         answer="Hoy atendemos hasta las 18:00.",
                         calls=(Call("c1", "list_business_hours", {}, "", "ok", "read"),),
                         steps=2, latency_ms=120.0,
                         model_calls=(ModelCallStat(60.0, "tool_calls", 10, 0),))
    return msgspec.structs.replace(base, status=status, **kw)


def test_which_attempts_can_be_read_again() -> None:
    assert has_transcript(record("pass"))
    assert has_transcript(record("error", error=AttemptError("judge", "the judge timed out")))
    assert not has_transcript(record("error", error=AttemptError("timeout", "no answer")))


def test_a_stored_attempt_gives_the_checks_what_it_kept(plan: Plan) -> None:
    scenario = plan.scenarios[0]
    data = attempt_data(record(), scenario)
    assert (data.answer, data.message, data.at) == (
        "Hoy atendemos hasta las 18:00.", scenario.message, scenario.at)
    assert [c.name for c in data.calls] == ["list_business_hours"]
    assert data.model_calls == ({"latency_ms": 60.0, "finish_reason": "tool_calls",
                                 "tokens": 10, "retries": 0},)
    failed = attempt_data(record("fail", reason="the agent reached max_steps (6)"), scenario)
    assert (failed.failure, failed.failure_kind) == ("the agent reached max_steps (6)",
                                                     "max_steps")


def test_the_current_checks_decide_again_and_errors_are_kept(plan: Plan) -> None:
    kept = record("error", answer="", calls=(), error=AttemptError("timeout", "no answer"))
    wrong = record("pass", run=2, answer="Hoy cerramos temprano.")
    out, judge = asyncio.run(recheck_records(plan, [record(), wrong, kept], ask_judge=False))
    assert judge is None
    assert [r.status for r in out] == ["pass", "fail", "error"]
    assert out[1].reason == '1 of 4 checks failed: contains: "18:00"'
    assert out[2] is kept


def test_a_recheck_folder_is_marked_as_one(tmp_path: Path) -> None:
    from dsl.store.runfile import HistoryKept

    plain_suite(tmp_path, "http://127.0.0.1:9/v1")
    write(tmp_path / "hours.yaml", HOURS + "runs: 1\nmin_pass: 1\n")
    old = tmp_path / "runs" / "20261130-100000-000000-abcd"
    old.mkdir(parents=True)
    plan, _ = build_plan([tmp_path])
    from dsl.compiler.plan import plan_json
    from dsl.store import write_json

    write_json(old / "plan.json", plan_json(plan))
    write_json(old / "run.json", {"schema_version": 1, "run_id": old.name,
                                  "settings": {"paths": [str(tmp_path)]},
                                  "history": {"kind": "postgresql",
                                              "target": "postgresql://x@elsewhere/db"}})
    (old / "results.jsonl").write_text(json.dumps(
        {"schema_version": 1, "scenario": "hours", "target": "fake", "run": 1,
         "status": "pass", "answer": "Cerramos a las 18:00.",
         "calls": [{"id": "c", "name": "list_business_hours", "args": {}, "output": "ok",
                    "action": "read"}], "checks": []}) + "\n", "utf-8")
    prepared = prepare(old)
    assert (prepared.refused, prepared.not_in_run) == ((), ())
    here = HistoryKept("sqlite", str(tmp_path / "h.db"))
    folder = run_recheck(prepared, old, tmp_path / "again", False, here)
    info = read_run_info(folder)
    assert (info.recheck_of, info.rechecked_from, info.history) == (
        old.name, str(old.resolve()), here)  # never the history the old folder names
    assert read_plan(folder).target_names == ["fake"]
    (line,) = (folder / "results.jsonl").read_text("utf-8").splitlines()
    assert json.loads(line)["status"] == "pass"


def test_a_folder_that_says_nothing_of_its_files_cannot_be_rechecked(tmp_path: Path) -> None:
    from dsl.store import write_json

    write_json(tmp_path / "plan.json", {"schema_version": 1, "targets": [], "scenarios": []})
    write_json(tmp_path / "run.json", {"schema_version": 1, "run_id": "r"})
    with pytest.raises(NotReady) as exc:
        prepare(tmp_path)
    assert str(exc.value) == (f"cannot recheck {tmp_path}: its run.json does not say which "
                              "files it ran")
