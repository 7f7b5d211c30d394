"""Issue 22 item 6: two runs recording into one cassette at once (``--record c.jsonl``,
``-k alpha`` / ``-k beta``). The cassette is locked like a run folder: the second run
refuses before it starts (exit 2, naming the cassette and the other run) and makes
nothing; the first run's exchanges are all kept. Raced as two real processes, three times."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.conftest import FakeServer, cli_process, plain_suite, write

SLOW = {"rules": [{"match": "", "replies": [{"text": "Hasta las 18:00.", "delay_ms": 3000}]}]}


def _suite(tmp_path: Path, url: str) -> None:
    plain_suite(tmp_path, url, timeout_ms=10000)
    for name in ("alpha", "beta"):
        write(tmp_path / f"{name}.yaml", f"""
            given: {{at: "2026-09-29T10:00:00-03:00"}}
            when: hours {name}
            then: [{{contains: "18:00"}}]
            runs: 2
            min_pass: 1
            """)


def _exchanges(cassette: Path) -> list[str]:
    lines = [json.loads(x) for x in cassette.read_text().splitlines() if x.strip()]
    assert lines[0]["kind"] == "scenarist-cassette"
    return [m["content"] for x in lines[1:] for m in x["request"]["messages"]
            if m["role"] == "user"]


@pytest.mark.parametrize("attempt", [1, 2, 3])
def test_two_runs_racing_for_one_cassette_lose_nothing(
        tmp_path: Path, server: FakeServer, attempt: int) -> None:
    server.script(SLOW)
    _suite(tmp_path, server.url)
    procs = {name: cli_process(tmp_path, "run", ".", "-k", name, "--record", "c.jsonl",
                               "--out", f"runs-{name}")
             for name in ("alpha", "beta")}
    done: dict[str, tuple[int, str, str]] = {}
    for name, p in procs.items():
        try:
            out, err = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:  # pragma: no cover - a hang is the failure
            p.kill()
            raise
        done[name] = (p.returncode, out, err)
    codes = sorted(code for code, _, _ in done.values())
    assert codes == [0, 2], done
    (winner,) = (n for n, (code, _, _) in done.items() if code == 0)
    (loser,) = (n for n, (code, _, _) in done.items() if code == 2)
    _, _, err = done[loser]
    (won_run,) = (tmp_path / f"runs-{winner}").iterdir()
    assert err == (
        f"error: the cassette c.jsonl is being recorded by another run (pid "
        f"{procs[winner].pid}, run runs-{winner}/{won_run.name}); wait for it to end, or "
        "record into another file: two runs recording into one cassette would lose each "
        "other's exchanges\n"), err
    assert "Traceback" not in done[winner][2]
    assert not (tmp_path / f"runs-{loser}").exists()  # refused before it started
    assert _exchanges(tmp_path / "c.jsonl") == [f"hours {winner}"] * 2  # nothing lost
    assert not (tmp_path / "c.jsonl.lock").exists()
    assert not (tmp_path / "c.jsonl.partial").exists()


def test_the_cassette_is_free_again_once_the_run_ends(tmp_path: Path, server: FakeServer
                                                      ) -> None:
    server.script({"rules": [{"match": "", "replies": [{"text": "18:00"}]}]})
    _suite(tmp_path, server.url)
    for name in ("alpha", "beta"):
        p = cli_process(tmp_path, "run", ".", "-k", name, "--record", "c.jsonl")
        _, err = p.communicate(timeout=60)
        assert p.returncode == 0, err
    assert _exchanges(tmp_path / "c.jsonl") == ["hours beta"] * 2  # a new recording replaces
