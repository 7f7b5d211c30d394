"""Issue 32 item 9: ``expect: latency_ms < 300`` gave fail live, pass on replay and fail on
recheck, and lint said nothing. Now lint warns (W414) unless the check is marked
``allow: {W414: why}``, and a replay reports the latency its cassette recorded, so live,
replay and recheck give the same verdict — against the scripted server process, through
``scenarist lint``, ``run --record``, a ``kind: replay`` target and ``recheck``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.conftest import FakeServer, records_of, run_cli, the_run, write

SCENARIO = """\
given:
  at: 2026-09-29T10:00:00-03:00
when: "slow"
then:
  - expect: "latency_ms < 300"
{allow}"""


def suite(tmp_path: Path, server: FakeServer, allow: str = "") -> None:
    server.script({"rules": [{"match": "slow", "replies": [
        {"text": "Abrimos a las 9.", "delay_ms": 450}]}]})
    write(tmp_path / "scenarist.yaml", json.dumps({
        "targets": {
            "live": {"kind": "openai", "base_url": server.url, "model": "m",
                     "timeout_ms": 10000, "retry": {"max_attempts": 1}},
            "recorded": {"kind": "replay", "cassette": "c.jsonl"}},
        "defaults": {"runs": 1, "min_pass_rate": 1, "target": "live"}}))
    write(tmp_path / "slow.yaml", SCENARIO.format(allow=allow))


def verdict(run_dir: Path) -> tuple[str, float]:
    (rec,) = records_of(run_dir)
    (check,) = rec["checks"]
    return check["status"], rec["latency_ms"]


def test_lint_warns_of_latency_ms_unless_the_check_is_marked(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite(tmp_path, server)
    r = run_cli("lint", "--strict", ".", cwd=tmp_path)
    assert r.exit_code == 1
    assert r.output.splitlines()[:4] == [
        "slow.yaml:5:14: error W414 latency_ms is measured only when the attempt runs live: "
        "the verdict depends on how fast the endpoint was that day, not on what the agent "
        "did (a replay checks the latency its cassette recorded, a recheck the run's)",
        '  5 |   - expect: "latency_ms < 300"',
        "    |              ^",
        "  hint: check what the agent did instead (steps, calls); or, for a latency budget, "
        'mark the check: allow: {W414: "why"} beside expect:']
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 0
    assert "warning W414" in r.output
    write(tmp_path / "slow.yaml", SCENARIO.format(
        allow='    allow: {W414: "a latency budget, measured live"}\n'))
    r = run_cli("lint", "--strict", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert "W414" not in r.output
    # a named check under checks: is warned of where a scenario uses it
    write(tmp_path / "scenarist.yaml", (tmp_path / "scenarist.yaml").read_text()[:-1]
          + ', "checks": {"fast": "latency_ms < 300"}}')
    write(tmp_path / "slow.yaml", SCENARIO.format(allow="  - expect: fast\n"))
    r = run_cli("lint", "--strict", "-q", ".", cwd=tmp_path)
    assert r.output.splitlines() == [
        "slow.yaml:5:14: error W414 latency_ms is measured only when the attempt runs live: "
        "the verdict depends on how fast the endpoint was that day, not on what the agent "
        "did (a replay checks the latency its cassette recorded, a recheck the run's)",
        "slow.yaml:6:13: error W414 the check 'fast' reads latency_ms, which is measured only "
        "when the attempt runs live: the verdict depends on how fast the endpoint was that "
        "day, not on what the agent did (a replay checks the latency its cassette recorded, "
        "a recheck the run's)"]


def test_live_replay_and_recheck_give_one_verdict_on_latency(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite(tmp_path, server, allow='    allow: {W414: "a latency budget"}\n')
    live = run_cli("run", ".", "--out", "live", "--record", "c.jsonl", cwd=tmp_path)
    assert live.exit_code == 1, live.output
    status, latency = verdict(the_run(tmp_path / "live"))
    assert status == "fail"
    assert latency >= 450
    (exchange,) = [json.loads(x) for x in (tmp_path / "c.jsonl").read_text().splitlines()[1:]]
    assert exchange["latency_ms"] >= 450
    server.script({"rules": []})
    replay = run_cli("run", ".", "--target", "recorded", "--out", "replay", cwd=tmp_path)
    assert replay.exit_code == 1, replay.output
    assert server.requests() == []
    status, replayed = verdict(the_run(tmp_path / "replay"))
    assert status == "fail"
    assert exchange["latency_ms"] <= replayed < exchange["latency_ms"] + 250
    (rec,) = records_of(the_run(tmp_path / "replay"))
    assert rec["model_calls"][0]["latency_ms"] == exchange["latency_ms"]
    for folder in ("live", "replay"):
        again = run_cli("recheck", str(the_run(tmp_path / folder)), "--out",
                        f"re-{folder}", cwd=tmp_path)
        assert again.exit_code == 1, again.output
        assert verdict(the_run(tmp_path / f"re-{folder}"))[0] == "fail"


def test_a_cassette_without_latencies_still_replays(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    suite(tmp_path, server, allow='    allow: {W414: "a latency budget"}\n')
    assert run_cli("run", ".", "--out", "live", "--record", "c.jsonl",
                   cwd=tmp_path).exit_code == 1
    lines = (tmp_path / "c.jsonl").read_text().splitlines()
    older: list[dict[str, Any]] = [json.loads(x) for x in lines[1:]]
    for e in older:
        del e["latency_ms"]
    (tmp_path / "c.jsonl").write_text("\n".join([lines[0], *map(json.dumps, older)]) + "\n")
    r = run_cli("run", ".", "--target", "recorded", "--out", "replay", cwd=tmp_path)
    assert r.exit_code == 0, r.output  # the replay's own time: no latency was recorded
    (tmp_path / "c.jsonl").write_text(
        "\n".join([lines[0], *(json.dumps({**e, "latency_ms": "slow"}) for e in older)])
        + "\n")
    r = run_cli("run", ".", "--target", "recorded", "--out", "bad", cwd=tmp_path)
    assert r.exit_code == 2
    assert ("c.jsonl:2: its 'latency_ms' is not a number of milliseconds; record the "
            "cassette again") in r.output


def test_an_own_loop_agent_replays_with_the_latency_it_was_recorded_with(
        tmp_path: Path, cli_env: dict[str, str]) -> None:
    agent = Path(__file__).resolve().parents[1] / "ownagent.py"
    write(tmp_path / "scenarist.yaml", json.dumps({
        "targets": {
            "agent": {"kind": "command", "command": [sys.executable, str(agent), "stdio"],
                      "timeout_ms": 20000},
            "again": {"kind": "replay", "cassette": "agent.jsonl"}},
        "defaults": {"runs": 1, "min_pass_rate": 1, "target": "agent"}}))
    write(tmp_path / "slow.yaml", """\
given:
  at: 2026-09-29T10:00:00-03:00
when: "SLEEP 1 then hello"
then:
  - expect: "latency_ms < 900"
    allow: {W414: "a latency budget"}
""")
    r = run_cli("run", ".", "--record", "agent.jsonl", "--out", "live", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    status, latency = verdict(the_run(tmp_path / "live"))
    assert status == "fail"
    assert latency >= 1000
    (turn,) = [json.loads(x) for x in (tmp_path / "agent.jsonl").read_text().splitlines()[1:]]
    assert turn["latency_ms"] >= 1000
    r = run_cli("run", ".", "--target", "again", "--out", "replay", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    status, replayed = verdict(the_run(tmp_path / "replay"))
    assert status == "fail"
    assert replayed >= turn["latency_ms"]
    r = run_cli("recheck", str(the_run(tmp_path / "replay")), "--out", "re", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    assert verdict(the_run(tmp_path / "re"))[0] == "fail"
