"""The scheduler: adaptive concurrency on HTTP 429, early stop that never changes a verdict,
budgets."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import (
    EARLY,
    HOURS,
    TOOL_THEN_ANSWER,
    FakeServer,
    early_suite,
    plain_suite,
    records_of,
    run_cli,
    the_run,
    write,
)


def test_throttling_halves_the_targets_concurrency(tmp_path: Path, server: FakeServer,
                                                   cli_env: dict[str, str]) -> None:
    rule = dict(TOOL_THEN_ANSWER["rules"][0])
    rule["first"] = [{"status": 429, "body": "{}", "headers": {"Retry-After": "0"}}] * 3
    server.script({"rules": [rule]})
    plain_suite(tmp_path, server.url, retry={"max_attempts": 5, "backoff_ms": 1}, concurrency=8)
    write(tmp_path / "hours.yaml", HOURS + "runs: 16\nmin_pass: 1\n")
    r = run_cli("run", ".", "-j", "8", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    info = json.loads((the_run(tmp_path / "runs") / "run.json").read_text())
    # a burst of 429s from requests already in flight halves once (8 → 4), then grows back
    assert info["throttled"] == {"fake": 4}
    assert all(x["status"] == "pass" for x in records_of(the_run(tmp_path / "runs")))


def test_early_stop_saves_runs_and_never_changes_a_verdict(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    full = run_cli("run", ".", "--no-early-stop", "--out", "full", "-j", "1", cwd=tmp_path)
    full_requests = len(server.requests())
    server.script(EARLY)
    early = run_cli("run", ".", "--out", "early", "-j", "1", cwd=tmp_path)
    early_requests = len(server.requests())
    assert full.exit_code == early.exit_code == 1

    def verdicts(d: str) -> dict[str, str]:
        s = json.loads((the_run(tmp_path / d) / "summary.json").read_text())
        return {r["scenario"]: r["verdict"] for r in s["scenarios"]}

    assert verdicts("full") == verdicts("early") == {"always": "pass", "never": "fail",
                                                      "odd": "pass"}
    s = json.loads((the_run(tmp_path / "early") / "summary.json").read_text())
    saved = {r["scenario"]: r["saved"] for r in s["scenarios"]}
    assert saved == {"always": 2, "never": 1, "odd": 0}
    assert s["early_stop"]["runs"] == 3
    assert (full_requests, early_requests) == (29, 26)
    assert "early stop saved 3 runs (~3 model calls)" in early.output


def test_max_calls_stops_cleanly_with_a_partial_report(tmp_path: Path, server: FakeServer,
                                                       cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    plain_suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS + "runs: 10\nmin_pass: 8\n")
    r = run_cli("run", ".", "--max-calls", "4", "-j", "1", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    assert "Stopped early: the budget of 4 model calls was reached" in r.output
    run_dir = the_run(tmp_path / "runs")
    assert len(records_of(run_dir)) == 2
    s = json.loads((run_dir / "summary.json").read_text())
    assert (s["scenarios"][0]["not_run"], s["stopped"]) == \
        (8, "the budget of 4 model calls was reached")
    assert (run_dir / "report.html").exists()


def test_adaptive_limit_halves_once_per_cooldown_and_grows_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from dsl.execution import schedule

    now = [100.0]
    monkeypatch.setattr(schedule.time, "monotonic", lambda: now[0])

    async def scenario() -> list[int]:
        lim = schedule.AdaptiveLimit(16)
        seen = []
        lim.throttled()
        lim.throttled()  # same burst: ignored
        seen.append(lim.limit)
        now[0] += 1.5
        lim.throttled()
        seen.append(lim.limit)
        for _ in range(2):  # one step up after limit // 4 = 1 success... then 2 at 5
            lim.succeeded()
        seen.append(lim.limit)
        for _ in range(100):
            lim.succeeded()
        seen.append(lim.limit)
        seen.append(lim.lowest)
        return seen

    assert asyncio.run(scenario()) == [8, 4, 6, 16, 4]
