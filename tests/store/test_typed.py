"""dsl/store/typed.py: a run folder's typed files decoded and encoded by msgspec — the same
JSON as the hand-written readers and writers before it (issue 31 item 3), every field
checked as it is read, and a wrong value said in one sentence with its place.

``data/results-4daf5b2.jsonl`` and ``data/summary-4daf5b2.json`` were written by main at
4daf5b2 (the last commit before msgspec) through its own ``record_line`` and
``write_summary``, from values that use every optional key those files have."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsl.errors import RunDirError
from dsl.store import read_record, read_summary, write_summary
from dsl.store.planfile import (
    PlanFile,
    PlannedScenario,
    PlannedTarget,
    plan_from_json,
    plan_json,
)
from dsl.store.records import AttemptRecord, record_from_json, record_json, record_line
from dsl.store.runfile import EarlyStop, Refused, RunInfo, run_json
from dsl.store.summaryfile import summary_from_json
from dsl.store.typed import file_bytes

DATA = Path(__file__).parent / "data"
BEFORE = DATA / "results-4daf5b2.jsonl"


def _lines() -> list[bytes]:
    return BEFORE.read_bytes().splitlines(keepends=True)


def test_lines_written_before_msgspec_read_and_write_back_the_same_json() -> None:
    for n, line in enumerate(_lines(), 1):
        record = read_record(line, f"{BEFORE}:{n}")
        assert json.loads(record_line(record)) == json.loads(line)
    first, error, judge_down = (read_record(line, "x") for line in _lines())
    assert (first.seed, first.history, first.goal_reached, first.stderr) == (
        1, 2, True, "Traceback? no: a warning\n")
    assert [c.raw_args for c in first.calls] == ["", '{"day": ', "", ""]
    assert [(c.error, c.decision, c.pending) for c in first.calls] == [
        (None, None, False), ("invalid-json", None, False), (None, "confirmed", False),
        (None, None, True)]
    faithful, criteria, unplayed = first.checks[1:]
    assert faithful.always
    assert faithful.evidence is not None
    assert not faithful.evidence.per_item
    assert faithful.evidence.answers[0].replies == ("SCORE: 0.9", "SCORE: 0.9 again")
    assert faithful.evidence.p_pass == 0.92
    assert criteria.evidence is not None
    assert criteria.evidence.per_item
    assert [a.verdict for a in criteria.evidence.answers] == ["pass", "fail"]
    assert [i.label for i in criteria.items] == ["polite", "short"]
    assert (criteria.turn, unplayed.status) == (2, "not_evaluated")
    assert [t.simulated for t in first.turns] == [False, True]
    assert first.world_turns[1][0]["table"] == "cards"
    assert first.user_messages[-1] == "Gracias. GOAL_REACHED"
    assert error.error is not None
    assert error.error.kind == "timeout"
    assert (error.answer, error.calls, error.world) == ("", (), None)
    assert judge_down.world == ()  # a world that nothing changed is kept as []


def test_a_record_redacted_is_written_as_the_record_itself() -> None:
    # the redacted path reads the record as plain data (builtins) and writes that: the same
    # bytes, keys left out and in order, as the record written straight from its Struct
    for line in _lines():
        record = read_record(line, "x")
        assert record_line(record, lambda data: data) == record_line(record)


def test_what_a_record_writes_only_when_set_stays_out() -> None:
    line = json.loads(_lines()[1])  # an endpoint error: no call, no conversation, no world
    assert set(line) == {"schema_version", "scenario", "target", "run", "seed", "status",
                         "reason", "started_at", "answer", "calls", "messages", "steps",
                         "latency_ms", "tokens", "retries", "model_calls", "checks", "error"}
    written = record_json(read_record(_lines()[1], "x"))
    assert written == line
    assert list(written)[:4] == ["schema_version", "scenario", "target", "run"]


def test_summary_json_is_written_byte_for_byte_as_before(tmp_path: Path) -> None:
    before = DATA / "summary-4daf5b2.json"
    summary = read_summary(before)
    assert file_bytes(summary) == before.read_bytes()
    write_summary(tmp_path, summary)
    assert (tmp_path / "summary.json").read_bytes() == before.read_bytes()
    row, other = summary.scenarios
    assert (row.passed, row.runs_asked, row.unsure_rate) == (False, 10, 1 / 8)
    assert (other.passed, other.runs_asked) == (True, 3)
    assert row.checks[1].always
    assert row.checks[1].not_evaluated == 2
    assert [i.label for i in row.checks[2].items] == ["polite", "short"]
    assert summary.tool_calls.by_target["other"].relevant == 0
    assert summary.targets[0].settings["model"] == "qwen"


def test_older_lines_read_as_they_always_did() -> None:
    """Lines written before a key existed, or in another order: each key's default, and
    the words of what was kept then."""
    older = {"schema_version": 1, "scenario": "s", "target": "t", "run": 3, "seed": 3,
             "status": "fail", "answer": "no",
             "checks": [
                 {"check": "contains", "label": "", "status": "pass", "reason": "ok"},
                 {"check": "non_empty", "label": "non_empty", "status": "error",
                  "reason": "not evaluated: its turn was never played"},
                 {"check": "faithful", "label": "faithful", "status": "fail",
                  "evidence": {"raw_reply": "SCORE: 0.1", "reason": "made up"}},
                 {"check": "criteria", "label": "criteria", "status": "fail",
                  "evidence": {"items": [{"raw_reply": "7"}, {"replies": ["3", "4"]}]}}],
             "failure": "reached max_steps (6 model calls) without a text answer"}
    record = record_from_json(older)
    contains, unplayed, faithful, criteria = record.checks
    assert contains.label == "contains"
    assert unplayed.status == "not_evaluated"
    assert faithful.evidence is not None
    assert faithful.evidence.answers[0].replies == ("SCORE: 0.1",)
    assert criteria.evidence is not None
    assert [a.replies for a in criteria.evidence.answers] == [("7",), ("3", "4")]
    assert record.failure_kind == "max_steps"
    assert (record.reason, record.calls, record.tokens.total, record.latency_ms) == (
        "", (), 0, None)
    again = record_json(record)
    assert "raw_reply" not in again["checks"][2]["evidence"]
    assert again["failure_kind"] == "max_steps"
    reordered = json.dumps(dict(reversed(list(older.items())))).encode() + b"\n"
    assert read_record(reordered, "x") == record


@pytest.mark.parametrize(("line", "said"), [
    ({"scenario": "s", "target": "t", "run": 1, "status": "pass"},
     "x:1 has schema_version None; this Scenarist reads version 1 (upgrade Scenarist, or "
     "re-run to regenerate it)"),
    ({"schema_version": "1", "scenario": "s", "target": "t", "run": 1, "status": "pass"},
     "x:1 has schema_version '1'; this Scenarist reads version 1 (upgrade Scenarist, or "
     "re-run to regenerate it)"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass",
      "calls": [{"id": "c", "name": "x", "step": "2"}]},
     "x:1 is not an attempt record: 'calls[0].step' is text, not a whole number"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass",
      "checks": [{"check": "c", "label": "c", "status": "done"}]},
     "x:1 is not an attempt record: 'checks[0].status' is 'done', not pass, fail, unsure, "
     "error or not_evaluated"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass",
      "checks": [{"label": "c", "status": "pass"}]},
     "x:1 is not an attempt record: 'checks[0].check' is missing"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass",
      "tokens": {"prompt": True}},
     "x:1 is not an attempt record: 'tokens.prompt' is true/false, not a whole number"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass",
      "latency_ms": "fast"},
     "x:1 is not an attempt record: 'latency_ms' is text, not a number"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass",
      "world": [{"id": "C-1"}]},
     "x:1 is not an attempt record: 'world' has a change with no 'table'"),
    ({"schema_version": 1, "scenario": "s", "target": "t", "run": 1e400, "status": "pass"},
     "x:1 is not valid JSON: Infinity is not a number JSON allows"),
])
def test_a_wrong_record_is_one_sentence_with_its_place(line: dict[str, Any], said: str
                                                       ) -> None:
    raw = json.dumps(line).encode() + b"\n"
    with pytest.raises(RunDirError) as exc:
        read_record(raw, "x:1")
    assert str(exc.value) == said


def test_a_summary_with_impossible_counts_is_refused_with_the_place() -> None:
    row = {"scenario": "s", "target": "t", "verdict": "pass", "passes": 1, "decided": 1}
    for data, said in [
        ({"scenarios": [{**row, "ci_high": 1.5}]},
         "scenarios[0].ci_high is 1.5, not a rate between 0 and 1"),
        ({"scenarios": [{**row, "not_run": -2}]}, "scenarios[0].not_run is -2, not a count"),
        ({"scenarios": [{**row, "error_kinds": {"timeout": "x"}}]},
         "scenarios[0].error_kinds (a value) is text, not a whole number"),
        ({"scenarios": [row], "shard": [1]}, "shard is not [I, N], two whole numbers"),
        ({"scenarios": [{**row, "passes": 2}]},
         "scenarios[0].passes is 2, more than its decided attempts (1)"),
    ]:
        with pytest.raises(RunDirError) as exc:
            summary_from_json(data, "summary.json")
        assert str(exc.value) == f"summary.json is not a run summary: {said}"


def test_run_json_keeps_its_keys_for_a_run_a_recheck_and_a_merge() -> None:
    running = run_json(RunInfo("r1", suite="s.yaml", started_at="t0"))
    assert list(running) == ["schema_version", "run_id", "suite", "started_at", "targets",
                             "git", "history"]
    ended = run_json(RunInfo("r1", finished_at="t1", interrupted=False))
    assert (ended["early_stop"], ended["stopped"]) == (None, None)
    recheck = run_json(RunInfo("r2", recheck_of="r1", refused=(Refused("s", "why"),)))
    assert recheck["finished_at"] is None
    assert recheck["refused"] == [
        {"scenario": "s", "why": "why"}]
    merged = run_json(RunInfo("r3", merged_from=("a", "b"), early_stop=EarlyStop(),
                              finished_at="t1"))
    assert "git" not in merged
    assert "history" not in merged
    assert "stopped" not in merged


def test_a_target_keeps_its_settings_beside_its_name_and_kind() -> None:
    target = PlannedTarget("local", "openai", {"model": "qwen", "params": {"seed": 1}})
    plan = PlanFile(targets=(target,), scenarios=(PlannedScenario("s", "s.yaml", 1, 2, 1),))
    data = plan_json(plan)
    assert data["targets"] == [{"name": "local", "kind": "openai", "model": "qwen",
                                "params": {"seed": 1}}]
    assert plan_from_json(data).targets == (target,)
    for written, said in [({"name": "x"}, "targets[0].kind is missing"),
                          ({"name": "x", "kind": 5}, "targets[0].kind is a whole number, "
                                                     "not text"),
                          ("local", "targets[0] is text, not an object")]:
        with pytest.raises(RunDirError) as exc:
            plan_from_json({"targets": [written], "scenarios": []}, "plan.json")
        assert str(exc.value) == f"plan.json is not a run's plan: {said}"


def test_a_record_and_its_parts_are_frozen() -> None:
    record = read_record(_lines()[0], "x")
    assert isinstance(record, AttemptRecord)
    with pytest.raises(AttributeError):
        record.status = "fail"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        record.calls[0].name = "other"  # type: ignore[misc]


def test_what_an_own_loop_agent_leaves_is_kept_only_when_known() -> None:
    line = {"schema_version": 1, "scenario": "s", "target": "http", "run": 1,
            "status": "pass", "tokens": None, "ended_by": "transfer_to_human",
            "mcp": "never"}
    record = record_from_json(line)
    assert (record.tokens, record.ended_by, record.mcp) == (None, "transfer_to_human",
                                                            "never")
    written = record_json(record)
    assert (written["tokens"], written["ended_by"], written["mcp"]) == (
        None, "transfer_to_human", "never")
    plain = record_json(record_from_json({**line, "tokens": {"prompt": 3}, "ended_by": None,
                                          "mcp": "a word of another version"}))
    assert plain["tokens"] == {"prompt": 3, "completion": 0, "total": 3}
    assert "ended_by" not in plain
    assert "mcp" not in plain


def test_a_number_that_is_not_one_is_written_as_null_even_beside_a_lone_surrogate() -> None:
    # issue 32 item 8: results.jsonl never holds a bare NaN (it is not JSON); a lone
    # surrogate sends the line through the json module, which would write one
    nan = float("nan")
    change = {"table": "t", "id": "A-1", "set": {"balance": [nan, 1]}}
    for answer in ("plain", "\ud83d"):
        line = record_line(AttemptRecord(scenario="a", target="t", run=1, status="pass",
                                         reason="", started_at="x", answer=answer,
                                         world=(change,)))
        assert "NaN" not in line
        data = json.loads(line, parse_constant=lambda c: pytest.fail(f"bare {c}"))
        assert data["world"][0]["set"] == {"balance": [None, 1]}
    assert b"NaN" not in file_bytes({"x": ["\ud83d", nan]})
