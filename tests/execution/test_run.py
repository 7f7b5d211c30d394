"""The run stage: every target follows one protocol (``Agent.run(scenario, run_index)``),
each attempt becomes one AttemptRecord, the whole attempt has one timeout, several targets
run side by side. Against the scripted server process, through the same code a run uses."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import (
    HOURS,
    ONE_RUN,
    TOOL_THEN_ANSWER,
    FakeServer,
    plain_suite,
    records_of,
    run_cli,
    start_fake_server,
    suite_yaml,
    the_run,
    write,
)


def test_attempt_timeout_covers_the_whole_loop(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    replies = [{"tool_calls": [{"name": "list_business_hours", "arguments": {}}],
                "delay_ms": 200}, {"text": "18:00", "delay_ms": 200}]
    server.script({"rules": [{"match": "hora", "replies": replies}]})
    plain_suite(tmp_path, server.url, attempt_timeout_ms=300)
    write(tmp_path / "hours.yaml", ONE_RUN)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3
    (rec,) = records_of(the_run(tmp_path / "runs"))
    assert rec["error"] == {"kind": "timeout", "status": None,
                            "message": "the attempt took longer than 0.3 s (attempt_timeout_ms)"}


def test_several_targets_side_by_side(tmp_path: Path, server: FakeServer,
                                      cli_env: dict[str, str]) -> None:
    other = start_fake_server()
    try:
        server.script(TOOL_THEN_ANSWER)
        other.script({"rules": [{"match": "hora", "replies": [{"text": "No sé."}]}]})
        targets = {"good": {"kind": "openai", "base_url": server.url, "model": "a"},
                   "bad": {"kind": "openai", "base_url": other.url, "model": "b"}}
        write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                      defaults={"target": "good"}))
        write(tmp_path / "hours.yaml", HOURS + "runs: 2\nmin_pass: 2\n")
        r = run_cli("run", ".", "--target", "good", "--target", "bad", cwd=tmp_path)
        assert r.exit_code == 1
        s = json.loads((the_run(tmp_path / "runs") / "summary.json").read_text())
        assert [(x["target"], x["verdict"]) for x in s["scenarios"]] == [("bad", "fail"),
                                                                         ("good", "pass")]
    finally:
        other.process.terminate()


AGENT_CODE = """
def run(env):
    hours = env.tools["list_business_hours"]()
    return "Hasta las 18:00" if "18:00" in hours else "no sé"
"""


def _plan(tmp_path: Path, url: str) -> Any:
    from dsl.compiler.compile import build_plan

    module = "proto_" + tmp_path.name.replace("-", "_")
    targets = {"model": {"kind": "openai", "base_url": url, "model": "m",
                         "retry": {"max_attempts": 1}},
               "mine": {"kind": "python", "entry": f"{module}:run"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets))
    write(tmp_path / f"{module}.py", AGENT_CODE)
    write(tmp_path / "hours.yaml", ONE_RUN)
    plan, _ = build_plan([tmp_path], targets=("model", "mine"))
    return plan


def test_every_kind_opens_an_agent_that_follows_one_protocol(tmp_path: Path,
                                                             server: FakeServer) -> None:
    from dsl.clients.open import open_agent
    from dsl.execution.run import run_one
    from dsl.store import AttemptRecord, record_from_json, record_json
    from dsl.targets.base import AgentContext, Reply

    server.script(TOOL_THEN_ANSWER)
    plan = _plan(tmp_path, server.url)
    (scenario,) = plan.scenarios
    replies: list[Reply] = []

    async def go() -> list[AttemptRecord]:
        out = []
        for target in plan.targets:
            agent = open_agent(target, AgentContext(
                max_connections=2, suite_root=Path(plan.suite_root),
                suite_targets=plan.suite_targets, on_reply=replies.append))
            try:
                out.append(await run_one(agent, scenario, target, 1))
            finally:
                await agent.aclose()
        return out

    model, mine = asyncio.run(go())
    for rec in (model, mine):
        assert (rec.status, rec.reason) == ("pass", "all 4 checks passed")
        assert [c.name for c in rec.calls] == ["list_business_hours"]
        assert record_json(record_from_json(json.loads(json.dumps(record_json(rec))))) == \
            record_json(rec)  # read back, written again: the same line
    assert (model.target, mine.target) == ("model", "mine")
    assert model.steps == 2
    assert len(replies) == 2  # the model target's two replies reached the run's meter
    assert mine.answer == "Hasta las 18:00"


def test_an_endpoint_that_fails_half_way_keeps_what_happened(tmp_path: Path,
                                                             server: FakeServer) -> None:
    from dsl.clients.open import open_agent
    from dsl.execution.run import run_one
    from dsl.targets.base import AgentContext

    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"status": 503, "body": "busy"}]}]})
    plan = _plan(tmp_path, server.url)
    target = plan.targets[0]

    async def go() -> Any:
        agent = open_agent(target, AgentContext(max_connections=1,
                                                suite_root=Path(plan.suite_root)))
        try:
            return await run_one(agent, plan.scenarios[0], target, 1)
        finally:
            await agent.aclose()

    rec = asyncio.run(go())
    assert rec.status == "error"
    assert rec.error is not None
    assert (rec.error.kind, rec.error.status) == ("status", 503)
    assert rec.reason == f"status: HTTP 503 from {server.url}: 'busy'"
    assert [c.name for c in rec.calls] == ["list_business_hours"]  # the call before it
    assert rec.steps == 1
    assert rec.checks == ()  # an endpoint error is not checked


@pytest.mark.parametrize(("line", "message"), [
    ('{"schema_version": 1, "scenario": "s", "target": "t", "run": "1", "status": "pass"}',
     "'run' is text, not a whole number"),
    ('{"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "maybe"}',
     "'status' is 'maybe', not pass, fail, unsure or error"),
    ('{"schema_version": 1, "target": "t", "run": 1, "status": "pass"}',
     "'scenario' is missing"),
    ('{"schema_version": 1, "scenario": "s", "target": "t", "run": 1, "status": "pass", '
     '"calls": [5]}', "'calls[0]' is a whole number, not an object"),
    ('[1, 2]', "the line is a list, not an object"),
])
def test_a_line_that_is_not_a_record_is_said_so_with_its_place(
        tmp_path: Path, line: str, message: str) -> None:
    from dsl.errors import RunDirError
    from dsl.store import iter_results

    write(tmp_path / "results.jsonl", line + "\n")
    with pytest.raises(RunDirError) as info:
        list(iter_results(tmp_path))
    assert str(info.value) == f"{tmp_path / 'results.jsonl'}:1 is not an attempt record: {message}"


def test_a_line_of_another_version_is_refused_with_its_place(tmp_path: Path) -> None:
    from dsl.errors import RunDirError
    from dsl.store import iter_results

    write(tmp_path / "results.jsonl", '{"schema_version": 9, "scenario": "s"}\n')
    with pytest.raises(RunDirError) as info:
        list(iter_results(tmp_path))
    assert str(info.value) == (f"{tmp_path / 'results.jsonl'}:1 has schema_version 9; this "
                               "Scenarist reads version 1 (upgrade Scenarist, or re-run to "
                               "regenerate it)")


def test_lines_the_fast_reader_refuses_are_read_by_the_standard_library(tmp_path: Path) -> None:
    """msgspec reads almost every line; a lone surrogate (half an emoji cut by max_tokens),
    kept as a \\ud83d escape, and NaN are read by the json module, the same as before."""
    from dsl.store import iter_results

    base = {"schema_version": 1, "scenario": "s", "target": "t", "status": "pass"}
    rows = [json.dumps({**base, "run": 1, "answer": "half \ud83d"}),
            json.dumps({**base, "run": 2, "latency_ms": float("nan")}),
            json.dumps({**base, "run": 3, "answer": "plain"})]
    write(tmp_path / "results.jsonl", "\n".join(rows) + "\n")
    recs = list(iter_results(tmp_path))
    assert [r.run for r in recs] == [1, 2, 3]
    assert recs[0].answer == "half \ud83d"
    assert recs[1].latency_ms != recs[1].latency_ms  # NaN
    write(tmp_path / "results.jsonl", "[" * 100_000 + "\n")
    from dsl.errors import RunDirError

    with pytest.raises(RunDirError) as info:
        list(iter_results(tmp_path))
    assert str(info.value) == f"{tmp_path / 'results.jsonl'}:1 is not valid JSON"
