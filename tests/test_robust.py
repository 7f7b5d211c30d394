"""Runs that survive the real world: faults, retries, timeouts, throttling, early stop,
budgets, resume after SIGKILL, Ctrl-C, shards and merge — against real server processes."""

from __future__ import annotations

import json
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from .conftest import (
    HOURS,
    TOOL_THEN_ANSWER,
    FakeServer,
    cli_process,
    run_cli,
    start_fake_server,
    suite_yaml,
    wait_for_lines,
    write,
)

ONE_RUN = HOURS + "runs: 1\nmin_pass: 1\n"


def suite(tmp_path: Path, url: str, **target: Any) -> None:
    t = {"kind": "openai", "base_url": url, "model": "m", "timeout_ms": 2000,
         "retry": {"max_attempts": 2, "backoff_ms": 1}, **target}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets={"fake": t}))


def records(run_dir: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]


def the_run(parent: Path) -> Path:
    (d,) = parent.iterdir()
    return d


# ------------------------------------------------------------------ faults, one by one

FAULTS = [
    # (name, replies, expected status, expected error kind, message start)
    ("html_500", [{"status": 500, "body": "<html><body><h1>502 Bad Gateway</h1></body></html>"}],
     "error", "status", "HTTP 500 from {url}: '<html><body><h1>502 Bad Gateway</h1></body></html>' (after 2 tries)"),
    ("invalid_json", [{"raw": '{"choices": [{"message": '}], "error", "malformed",
     "the reply from {url} is not JSON: '{{\"choices\": [{{\"message\":'"),
    ("close_without_answer", [{"close": True}], "error", "connection",
     "cannot reach {url}: the server closed the connection mid-reply"),
    ("close_mid_response", [{"truncate": True}], "error", "connection",
     "cannot reach {url}: the server closed the connection mid-reply"),
    ("hang_past_timeout", [{"hang": True}], "error", "timeout",
     "no reply from {url} within 0.3 s (after 2 tries)"),
    ("tool_call_as_text", [{"text": '{"name": "list_business_hours", "arguments": {}}'}],
     "error", "tool_call_as_text",
     "the endpoint returned a call to list_business_hours as plain text instead of a tool "
     "call: the server is not parsing this model's tool calls (check its chat template or "
     "tool-call parser)"),
    ("tool_call_as_text_fenced", [{"text": '```json\n{"name": "list_business_hours", '
                                           '"parameters": {}}\n```'}],
     "error", "tool_call_as_text", "the endpoint returned a call to list_business_hours"),
    ("unsupported_tools", [{"status": 400, "body": {"error": "registry.ollama.ai/library/"
                                                             "gemma:2b does not support tools"}}],
     "error", "unsupported_tools",
     "the endpoint does not support tool calls for this model (HTTP 400: "
     "'{{\"error\": \"registry.ollama.ai/library/gemma:2b does not support tools\"}}')"),
]


@pytest.mark.parametrize(("name", "replies", "status", "kind", "message"), FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_each_fault_ends_the_attempt_with_the_right_status_and_reason(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str], name: str,
        replies: list[dict[str, Any]], status: str, kind: str, message: str) -> None:
    server.script({"rules": [{"match": "hora", "replies": replies}]})
    suite(tmp_path, server.url, timeout_ms=300)
    write(tmp_path / "hours.yaml", HOURS + "runs: 2\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    recs = records(the_run(tmp_path / "runs"))
    assert len(recs) == 2
    for rec in recs:
        assert rec["status"] == status
        assert rec["error"]["kind"] == kind
        assert rec["error"]["message"].startswith(message.format(url=server.url)), \
            rec["error"]["message"]
    requests = len(server.requests())
    retried = kind in ("status", "connection", "timeout")
    assert requests == (4 if retried else 2)


def test_all_faults_in_one_run_none_crashes_it(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    rules = []
    for i, (name, replies, *_rest) in enumerate(FAULTS):
        rules.append({"match": f"fault-{i}", "replies": replies})
        write(tmp_path / f"{name}.yaml", HOURS.replace("¿Hasta qué hora atendemos hoy?",
                                                       f"fault-{i}") + "runs: 1\nmin_pass: 1\n")
    rules.append({"match": "ok-", "replies": TOOL_THEN_ANSWER["rules"][0]["replies"]})
    write(tmp_path / "fine.yaml", HOURS.replace("¿Hasta qué hora atendemos hoy?", "ok-1")
          + "runs: 1\nmin_pass: 1\n")
    server.script({"rules": rules})
    suite(tmp_path, server.url, timeout_ms=300)
    r = run_cli("run", ".", "-j", "8", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    recs = {x["scenario"]: x for x in records(the_run(tmp_path / "runs"))}
    assert len(recs) == len(FAULTS) + 1
    assert recs["fine"]["status"] == "pass"
    for name, _replies, status, kind, _message in FAULTS:
        assert (recs[name]["status"], recs[name]["error"]["kind"]) == (status, kind)


def test_429_with_retry_after_is_retried_and_counted(tmp_path: Path, server: FakeServer,
                                                     cli_env: dict[str, str]) -> None:
    rule = dict(TOOL_THEN_ANSWER["rules"][0])
    rule["first"] = [{"status": 429, "body": {"error": "slow down"},
                      "headers": {"Retry-After": "0.3"}}]
    server.script({"rules": [rule]})
    suite(tmp_path, server.url, retry={"max_attempts": 3, "backoff_ms": 1})
    write(tmp_path / "hours.yaml", ONE_RUN)
    t0 = time.monotonic()
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert time.monotonic() - t0 >= 0.3  # Retry-After was honoured, not the 1 ms backoff
    (rec,) = records(the_run(tmp_path / "runs"))
    assert rec["retries"] == 1
    assert rec["model_calls"][0]["retries"] == 1
    assert len(server.requests()) == 3


def test_attempt_timeout_covers_the_whole_loop(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    replies = [{"tool_calls": [{"name": "list_business_hours", "arguments": {}}],
                "delay_ms": 200}, {"text": "18:00", "delay_ms": 200}]
    server.script({"rules": [{"match": "hora", "replies": replies}]})
    suite(tmp_path, server.url, attempt_timeout_ms=300)
    write(tmp_path / "hours.yaml", ONE_RUN)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3
    (rec,) = records(the_run(tmp_path / "runs"))
    assert rec["error"] == {"kind": "timeout", "status": None,
                            "message": "the attempt took longer than 0.3 s (attempt_timeout_ms)"}


def test_throttling_halves_the_targets_concurrency(tmp_path: Path, server: FakeServer,
                                                   cli_env: dict[str, str]) -> None:
    rule = dict(TOOL_THEN_ANSWER["rules"][0])
    rule["first"] = [{"status": 429, "body": "{}", "headers": {"Retry-After": "0"}}] * 3
    server.script({"rules": [rule]})
    suite(tmp_path, server.url, retry={"max_attempts": 5, "backoff_ms": 1}, concurrency=8)
    write(tmp_path / "hours.yaml", HOURS + "runs: 16\nmin_pass: 1\n")
    r = run_cli("run", ".", "-j", "8", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    info = json.loads((the_run(tmp_path / "runs") / "run.json").read_text())
    # a burst of 429s from requests already in flight halves once (8 → 4), then grows back
    assert info["throttled"] == {"fake": 4}
    assert all(x["status"] == "pass" for x in records(the_run(tmp_path / "runs")))


# ------------------------------------------------------------------ early stop

EARLY = {  # by seed: pass (18:00) or fail (no hours) — deterministic per run index
    "rules": [
        {"match": "always", "replies": [{"text": "Abrimos hasta las 18:00."}]},
        {"match": "never", "replies": [{"text": "No sé."}]},
        {"match": "odd", "by_seed": {str(i): [{"text": "18:00" if i % 2 else "no"}]
                                     for i in range(1, 11)}},
    ]
}


def early_suite(tmp_path: Path, url: str) -> None:
    suite(tmp_path, url)
    for name, runs, min_pass in (("always", 10, 8), ("never", 10, 2), ("odd", 9, 5)):
        write(tmp_path / f"{name}.yaml", f"""
            given: {{at: "2026-09-29T10:00:00-03:00"}}
            when: {name}
            then: [{{contains: "18:00"}}]
            runs: {runs}
            min_pass: {min_pass}
            """)


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


# ------------------------------------------------------------------ budgets


def test_max_calls_stops_cleanly_with_a_partial_report(tmp_path: Path, server: FakeServer,
                                                       cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS + "runs: 10\nmin_pass: 8\n")
    r = run_cli("run", ".", "--max-calls", "4", "-j", "1", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    assert "Stopped early: the budget of 4 model calls was reached" in r.output
    run_dir = the_run(tmp_path / "runs")
    assert len(records(run_dir)) == 2
    s = json.loads((run_dir / "summary.json").read_text())
    assert (s["scenarios"][0]["not_run"], s["stopped"]) == \
        (8, "the budget of 4 model calls was reached")
    assert (run_dir / "report.html").exists()


def test_plan_shows_the_upper_bound_of_calls(tmp_path: Path, server: FakeServer,
                                             cli_env: dict[str, str]) -> None:
    suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS + "runs: 10\nmax_steps: 3\n")
    r = run_cli("plan", ".", cwd=tmp_path)
    assert r.exit_code == 0
    assert r.output.endswith("= 10 attempts; at most 30 model calls\n")


# ------------------------------------------------------------------ resume after SIGKILL

SLOW = {"rules": [{"match": "case", "replies": [
    {"tool_calls": [{"name": "list_business_hours", "arguments": {}}], "delay_ms": 60},
    {"text": "Hasta las 18:00.", "delay_ms": 60}]}]}


def slow_suite(tmp_path: Path, url: str) -> None:
    suite(tmp_path, url)
    for i in range(6):
        write(tmp_path / f"case{i}.yaml", HOURS.replace("¿Hasta qué hora atendemos hoy?",
                                                        f"case {i}") + "runs: 4\nmin_pass: 3\n")


def totals(run_dir: Path) -> dict[str, tuple[int, int, int]]:
    s = json.loads((run_dir / "summary.json").read_text())
    return {r["scenario"]: (r["runs"], r["passes"], r["errors"]) for r in s["scenarios"]}


def test_sigkill_then_resume_gives_the_same_totals(tmp_path: Path, server: FakeServer) -> None:
    server.script(SLOW)
    slow_suite(tmp_path, server.url)
    ref = cli_process(tmp_path, "run", ".", "--no-early-stop", "--out", "ref", "-j", "2")
    assert ref.wait(60) == 0, ref.stderr.read() if ref.stderr else ""
    expected = totals(the_run(tmp_path / "ref"))

    victim = cli_process(tmp_path, "run", ".", "--no-early-stop", "--out", "killed", "-j", "2")
    while not (tmp_path / "killed").exists() or not any((tmp_path / "killed").iterdir()):
        time.sleep(0.01)
    run_dir = the_run(tmp_path / "killed")
    wait_for_lines(run_dir / "results.jsonl", 5)
    victim.send_signal(signal.SIGKILL)
    victim.wait(10)
    before = (run_dir / "results.jsonl").read_text().count("\n")
    assert 5 <= before < 24
    assert not (run_dir / "summary.json").exists()
    with (run_dir / "results.jsonl").open("a") as f:  # as if killed in the middle of a write
        f.write('{"schema_version": 1, "scenario": "case0", "tar')

    resumed = cli_process(tmp_path, "run", "--resume", str(run_dir))
    assert resumed.wait(60) == 0, resumed.stderr.read() if resumed.stderr else ""
    assert totals(run_dir) == expected
    lines = (run_dir / "results.jsonl").read_text().splitlines()
    assert len(lines) == 24
    keys = [(json.loads(x)["scenario"], json.loads(x)["run"]) for x in lines]
    assert len(set(keys)) == 24  # nothing ran twice


def test_resume_refuses_a_plan_that_changed(tmp_path: Path, server: FakeServer,
                                            cli_env: dict[str, str]) -> None:
    server.script(TOOL_THEN_ANSWER)
    suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", ONE_RUN)
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0
    run_dir = the_run(tmp_path / "runs")
    write(tmp_path / "hours.yaml", ONE_RUN.replace('contains: "18:00"', 'contains: "19:00"'))
    write(tmp_path / "new.yaml", ONE_RUN)
    r = run_cli("run", "--resume", str(run_dir), cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == (f"error: cannot resume {run_dir}: the plan changed since it started: "
                        "scenario new was added; scenario hours changed (checks). Start a new "
                        "run instead.\n")


def test_resume_retry_errors_reruns_only_the_errors(tmp_path: Path, server: FakeServer,
                                                    cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "hora", "by_seed": {
        "2": [{"status": 503, "body": "down"}]},
        "replies": TOOL_THEN_ANSWER["rules"][0]["replies"]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "hours.yaml", HOURS + "runs: 3\nmin_pass: 3\n")
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 3
    run_dir = the_run(tmp_path / "runs")
    assert totals(run_dir) == {"hours": (3, 2, 1)}
    assert run_cli("run", "--resume", str(run_dir), cwd=tmp_path).exit_code == 3  # nothing new
    server.script(TOOL_THEN_ANSWER)
    r = run_cli("run", "--resume", str(run_dir), "--retry-errors", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert totals(run_dir) == {"hours": (3, 3, 0)}
    assert len(server.requests()) == 2  # only run 2, a tool call and an answer


# ------------------------------------------------------------------ Ctrl-C


def test_ctrl_c_finishes_in_flight_attempts_and_reports(tmp_path: Path,
                                                        server: FakeServer) -> None:
    server.script(SLOW)
    slow_suite(tmp_path, server.url)
    p = cli_process(tmp_path, "run", ".", "--no-early-stop", "-j", "2")
    while not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir()):
        time.sleep(0.01)
    run_dir = the_run(tmp_path / "runs")
    wait_for_lines(run_dir / "results.jsonl", 3)
    p.send_signal(signal.SIGINT)
    _out, err = p.communicate(timeout=30)
    assert p.returncode == 130, err
    assert "Interrupted: finishing 2 attempt(s) in flight" in err
    assert f"Finish the run with: scenarist run --resume {Path('runs') / run_dir.name}" in err
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["interrupted"] is True
    assert summary["totals"]["attempts"] == len(records(run_dir)) < 24
    assert (run_dir / "report.html").exists()
    assert "Traceback" not in err


# ------------------------------------------------------------------ shards, merge, targets


def test_shards_merge_into_the_same_verdicts(tmp_path: Path, server: FakeServer,
                                             cli_env: dict[str, str]) -> None:
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    whole = run_cli("run", ".", "--out", "whole", "--no-early-stop", cwd=tmp_path)
    for i in (1, 2):
        run_cli("run", ".", "--shard", f"{i}/2", "--out", f"shard{i}", "--no-early-stop",
                cwd=tmp_path)
    shard_ids = [{s["id"] for s in json.loads((the_run(tmp_path / f"shard{i}") / "plan.json")
                                               .read_text())["scenarios"]} for i in (1, 2)]
    assert shard_ids == [{"always", "odd"}, {"never"}]
    r = run_cli("merge", str(the_run(tmp_path / "shard1")), str(the_run(tmp_path / "shard2")),
                "--out", "merged", cwd=tmp_path)
    assert r.exit_code == whole.exit_code == 1
    assert totals(the_run(tmp_path / "merged")) == totals(the_run(tmp_path / "whole"))
    again = run_cli("merge", str(the_run(tmp_path / "shard1")), str(the_run(tmp_path / "shard1")),
                    "--out", "bad", cwd=tmp_path)
    assert again.exit_code == 2
    assert "error: cannot merge: the scenario always is in both" in again.output
    partial = run_cli("merge", str(the_run(tmp_path / "shard1")), "--out", "partial",
                      cwd=tmp_path)
    assert "warning: shard(s) 2/2 are missing" in partial.output


def test_merge_refuses_runs_of_different_plans(tmp_path: Path, server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    server.script(EARLY)
    early_suite(tmp_path, server.url)
    run_cli("run", ".", "--shard", "1/2", "--out", "a", cwd=tmp_path)
    write(tmp_path / "extra.yaml", ONE_RUN)
    run_cli("run", ".", "--shard", "2/2", "--out", "b", cwd=tmp_path)
    r = run_cli("merge", str(the_run(tmp_path / "a")), str(the_run(tmp_path / "b")), cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error: cannot merge: these runs come from different plans (or "
                        "different versions of the files); merge only the shards of one run\n")


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


def test_adaptive_limit_halves_once_per_cooldown_and_grows_back(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import asyncio

    from dsl import schedule

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
