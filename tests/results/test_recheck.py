"""``scenarist recheck``: changed checks re-applied to stored transcripts with no model
call; scenarios whose given or when changed refused by name; judge checks from the cache,
asked only with --judge."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from dsl.execution.run import loop_failure
from dsl.store import AttemptRecord
from tests.conftest import (
    HOURS,
    TOOL_THEN_ANSWER,
    FakeServer,
    make_suite,
    run_cli,
    start_fake_server,
    suite_yaml,
    write,
)


def runs_in(parent: Path) -> list[Path]:
    return sorted(parent.iterdir())


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]


def test_changed_checks_are_applied_to_the_stored_transcripts(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 3\nmin_pass: 2\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", "--no-early-stop", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    server.script({"rules": []})  # clears the request log
    # the check changes; the question (given, when) does not
    (tmp_path / "hours.yaml").write_text(
        (tmp_path / "hours.yaml").read_text().replace('contains: "18:00"', 'contains: "19:00"'))
    out = run_cli("recheck", str(old), cwd=tmp_path)
    assert out.exit_code == 1
    assert server.requests() == []  # no model was called
    new = runs_in(tmp_path / "runs")[-1]
    assert new != old
    assert out.output.splitlines()[-2:] == [f"Rechecked {old} into {new}",
                                            f"Report: {new / 'report.html'}"]
    info = json.loads((new / "run.json").read_text())
    assert (info["recheck_of"], info["rechecked_from"]) == (old.name, str(old.resolve()))
    recs = records(new)
    assert [r["status"] for r in recs] == ["fail"] * 3
    assert recs[0]["checks"][1]["label"] == 'contains: "19:00"'
    assert recs[0]["answer"] == records(old)[0]["answer"]  # the same transcript
    assert recs[0]["reason"] == '1 of 4 checks failed: contains: "19:00"'
    summary = json.loads((new / "summary.json").read_text())
    assert summary["scenarios"][0]["verdict"] == "fail"
    listed = run_cli("runs", "list", cwd=tmp_path).output.splitlines()
    assert listed[0].startswith(new.name)
    assert listed[0].endswith(f"(recheck of {old.name})")


def test_recheck_writes_where_asked(tmp_path: Path, server: FakeServer,
                                    cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    out = run_cli("recheck", str(old), "--out", "rechecks", cwd=tmp_path)
    assert out.exit_code == 0, out.output
    (new,) = runs_in(tmp_path / "rechecks")
    assert [r["status"] for r in records(new)] == ["pass"]


TWO = HOURS.replace("description:", "id: {id}\ndescription:") + "runs: 1\nmin_pass: 1\n"


def test_a_scenario_whose_question_changed_is_refused_by_name(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, TWO.format(id="hours"))
    write(tmp_path / "second.yaml", TWO.format(id="second"))
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    second = tmp_path / "second.yaml"
    second.write_text(second.read_text().replace("atendemos hoy", "atendemos mañana"))
    out = run_cli("recheck", str(old), cwd=tmp_path)
    assert out.exit_code == 0
    assert ("refused second: its given or when changed since the run (message): its "
            "transcripts answer a different question; run it again with scenarist run"
            ) in out.output.splitlines()
    new = runs_in(tmp_path / "runs")[-1]
    assert {r["scenario"] for r in records(new)} == {"hours"}
    assert json.loads((new / "run.json").read_text())["refused"] == [
        {"scenario": "second", "why": "its given or when changed since the run (message): "
                                      "its transcripts answer a different question"}]
    # the moment and the tools are the given too
    hours = tmp_path / "hours.yaml"
    hours.write_text(hours.read_text().replace("10:00:00-03:00", "11:00:00-03:00"))
    out = run_cli("recheck", str(old), cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output.splitlines()[-1] == (
        f"error: nothing to recheck in {old}: refused hours: its given or when changed since "
        "the run (at): its transcripts answer a different question; run it again "
        "with scenarist run; refused second: its given or when changed since the run "
        "(message): its transcripts answer a different question; run it again with "
        "scenarist run")


def test_a_changed_tool_is_a_changed_question(tmp_path: Path, server: FakeServer,
                                              cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    suite = json.loads((tmp_path / "scenarist.yaml").read_text())
    suite["tools"]["list_business_hours"]["returns"] = {"monday": "10:00-19:00"}
    (tmp_path / "scenarist.yaml").write_text(json.dumps(suite))
    out = run_cli("recheck", str(old), cwd=tmp_path)
    assert out.exit_code == 2
    assert ("refused hours: its given or when changed since the run (the tools' input_schema "
            "or returns)") in out.output


def test_endpoint_errors_are_kept_as_they_were(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    make_suite(tmp_path, server, HOURS + "runs: 2\nmin_pass: 1\n")
    server.script({"rules": [{"match": "hora", "by_seed": {"2": [{"status": 400,
                                                                    "body": "bad"}]},
                              "replies": TOOL_THEN_ANSWER["rules"][0]["replies"]}]})
    assert run_cli("run", "--no-early-stop", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    assert run_cli("recheck", str(old), cwd=tmp_path).exit_code == 0
    new = runs_in(tmp_path / "runs")[-1]
    before, after = records(old), records(new)
    assert [r["status"] for r in after] == [r["status"] for r in before]
    errored = next(r for r in after if r["status"] == "error")
    assert errored == next(r for r in before if r["status"] == "error")


def test_a_loop_failure_stays_a_failure() -> None:
    base = AttemptRecord("s", "t", 1, "fail", "reached max_steps (2 model calls) without a "
                         "text answer", "2026-01-01T00:00:00.000+00:00")
    assert loop_failure(base) == "reached max_steps (2 model calls) without a text answer"
    kept = AttemptRecord("s", "t", 1, "fail", "x", "", failure="the loop's own words")
    assert loop_failure(kept) == "the loop's own words"
    for reason in ("1 of 2 checks failed: contains: \"x\"", "all 2 checks passed",
                   "no check failed, but the judge was unsure"):
        assert loop_failure(AttemptRecord("s", "t", 1, "fail", reason, "")) is None


# ---- the judge: from its cache; asked only with --judge ------------------------------------

@pytest.fixture(scope="module")
def judge_server() -> Iterator[FakeServer]:
    s = start_fake_server()
    yield s
    s.process.terminate()


@pytest.fixture
def jserver(judge_server: FakeServer) -> FakeServer:
    judge_server.script({"rules": [], "default": [{"text": json.dumps(
        {"verdict": "pass", "score": 1, "confidence": 0.95, "reason": "supported"})}]})
    return judge_server


def judged_suite(tmp_path: Path, server: FakeServer, jserver: FakeServer, checks: str) -> None:
    targets = {
        "agent": {"kind": "openai", "base_url": server.url, "model": "agent-model",
                  "retry": {"max_attempts": 1}},
        "grader": {"kind": "openai", "base_url": jserver.url, "model": "judge-model",
                   "retry": {"max_attempts": 1}},
    }
    write(tmp_path / "scenarist.yaml", suite_yaml(
        server.url, targets=targets, defaults={"target": "agent"}, judge={"target": "grader"}))
    write(tmp_path / "hours.yaml", HOURS.split("then:")[0] + "then:\n" + checks
          + "runs: 2\nmin_pass: 1\n")


def test_judge_checks_come_from_the_cache(tmp_path: Path, server: FakeServer,
                                          jserver: FakeServer, cli_env: dict[str, str]) -> None:
    judged_suite(tmp_path, server, jserver, "  - faithful\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", "--no-early-stop", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    asked = len(jserver.requests())
    assert asked == 1  # both attempts asked the same question: one request, then the cache
    out = run_cli("recheck", str(old), cwd=tmp_path)
    assert out.exit_code == 0, out.output
    assert len(jserver.requests()) == asked  # nothing asked again
    new = runs_in(tmp_path / "runs")[-1]
    checks = [r["checks"][0] for r in records(new)]
    assert [c["status"] for c in checks] == ["pass", "pass"]
    assert all(c["evidence"]["cached"] for c in checks)


NOT_CACHED = ("judge: the judge's answer to this question is not in its cache, and recheck "
              "asks the judge only with --judge")


def test_a_question_not_in_the_cache_is_asked_only_with_judge(
        tmp_path: Path, server: FakeServer, jserver: FakeServer,
        cli_env: dict[str, str]) -> None:
    judged_suite(tmp_path, server, jserver, "  - contains: '18:00'\n")
    server.script(TOOL_THEN_ANSWER)
    assert run_cli("run", "--no-early-stop", cwd=tmp_path).exit_code == 0
    (old,) = runs_in(tmp_path / "runs")
    hours = tmp_path / "hours.yaml"
    hours.write_text(hours.read_text().replace("  - contains: '18:00'\n",
                                               "  - contains: '18:00'\n  - faithful\n"))
    out = run_cli("recheck", str(old), cwd=tmp_path)
    assert out.exit_code == 3  # no verdict: the judge was not asked
    assert jserver.requests() == []
    assert (f"2 judge questions were not in the judge's cache: those attempts have no verdict; "
            f"ask them with: scenarist recheck {old} --judge") in out.output.splitlines()
    new = runs_in(tmp_path / "runs")[-1]
    recs = records(new)
    assert [(r["status"], r["reason"]) for r in recs] == [("error", NOT_CACHED)] * 2
    assert recs[0]["error"]["kind"] == "judge"
    asked = run_cli("recheck", str(old), "--judge", cwd=tmp_path)
    assert asked.exit_code == 0, asked.output
    assert len(jserver.requests()) == 1
    assert [r["status"] for r in records(runs_in(tmp_path / "runs")[-1])] == ["pass", "pass"]


def test_recheck_needs_a_run_folder(tmp_path: Path, cli_env: dict[str, str]) -> None:
    (tmp_path / "empty").mkdir()
    out = run_cli("recheck", "empty", cwd=tmp_path)
    assert out.exit_code == 2
    assert out.output == ("error: cannot recheck: empty/plan.json does not exist; is empty a "
                          "run folder?\n")
