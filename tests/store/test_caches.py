"""Every cache Scenarist keeps is checked before use (issue 32, item 16): a damaged one is
ignored — the run and the report go on — and written again, with one line that says so.
Each cache is damaged for real, through the command line users run:

* the report's compiled template (Jinja's bytecode cache, in the temp folder): before, a
  damaged file made every ``run`` and ``report`` die with ``UnpicklingError``;
* the judge's answers (``.scenarist/judge-cache/``).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from dsl.store.cachefile import damaged_line
from tests.conftest import (
    HOURS,
    REPO,
    TOOL_THEN_ANSWER,
    FakeServer,
    run_cli,
    start_fake_server,
    suite_yaml,
    write,
)


def scenarist(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    full = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **env}
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=full,
                          capture_output=True, text=True, timeout=120)


# ---- the report's compiled template --------------------------------------------------------

def _garbled_checksum(b: bytes) -> bytes:
    return b[:15] + b"\x00garbage\x00" * 3 + b[42:]  # Jinja's pickle.load: UnpicklingError


def _truncated_code(b: bytes) -> bytes:
    return b[:80]


def _not_jinja(b: bytes) -> bytes:
    return b"\x00" * 64


DAMAGES: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "checksum": (_garbled_checksum, "its header is not one Jinja writes"),
    "code": (_truncated_code, "its compiled code cannot be read: marshal data too short"),
    "garbage": (_not_jinja, "it does not start as a Jinja bytecode file"),
}


@pytest.mark.parametrize("damage", [*DAMAGES, "fifo"])
def test_a_damaged_report_template_cache_is_ignored_written_again_and_said(
        tmp_path: Path, server: FakeServer, damage: str) -> None:
    server.script(TOOL_THEN_ANSWER)
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "hours.yaml", HOURS + "runs: 1\nmin_pass: 1\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    first = scenarist(tmp_path, "run", ".", TMPDIR=str(temp))
    assert first.returncode == 0, first.stderr
    (cache,) = (temp / f"_jinja2-cache-{os.getuid()}").iterdir()
    if damage == "fifo":
        cache.unlink()
        os.mkfifo(cache)
        why = "it is a FIFO (named pipe), not a regular file"
    else:
        change, why = DAMAGES[damage]
        cache.write_bytes(change(cache.read_bytes()))
    (run_dir,) = (tmp_path / "runs").iterdir()
    (run_dir / "report.html").unlink()
    again = scenarist(tmp_path, "report", str(run_dir), TMPDIR=str(temp))
    assert again.returncode == 0, again.stderr
    assert again.stderr.splitlines() == [damaged_line(
        "the report's compiled template in the cache", cache, why)]
    assert again.stderr == (f"warning: the report's compiled template in the cache ({cache}) "
                            f"is damaged ({why}); it was ignored and is written again\n")
    assert "Traceback" not in again.stderr
    assert "Scenarist report" in (run_dir / "report.html").read_text()
    assert cache.is_file()  # written again: the next command says nothing
    third = scenarist(tmp_path, "run", ".", TMPDIR=str(temp))
    assert third.returncode == 0
    assert "damaged" not in third.stderr


# ---- the judge's answers --------------------------------------------------------------------

@pytest.fixture(scope="module")
def judge_server() -> object:
    s = start_fake_server()
    yield s
    s.process.terminate()


PASS = {"text": json.dumps({"verdict": "pass", "score": 1, "confidence": 0.95,
                            "reason": "18:00 is in the tool result"})}


@pytest.mark.parametrize(("damage", "why"), [
    (b"{not json", "it is not JSON"),
    (b"[1, 2]", "it is not a JSON object"),
    (None, "its field 'status' is missing or of the wrong type"),
    (b"fifo", "it is a FIFO (named pipe), not a regular file"),
])
def test_a_damaged_judge_cache_file_is_ignored_asked_again_and_said(
        tmp_path: Path, server: FakeServer, judge_server: FakeServer,
        cli_env: dict[str, str], damage: bytes | None, why: str) -> None:
    server.script(TOOL_THEN_ANSWER)
    judge_server.script({"rules": [{"match": "FAITHFUL", "replies": [PASS]}]})
    targets = {"agent": {"kind": "openai", "base_url": server.url, "model": "agent-model",
                         "retry": {"max_attempts": 1}},
               "grader": {"kind": "openai", "base_url": judge_server.url, "model": "j",
                          "retry": {"max_attempts": 1}}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                  defaults={"target": "agent"},
                                                  judge={"target": "grader"}))
    write(tmp_path / "hours.yaml", HOURS.split("then:")[0] + "then:\n  - faithful\n"
          "runs: 1\nmin_pass: 1\n")
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0
    (cached,) = (tmp_path / ".scenarist" / "judge-cache").rglob("*.json")
    if damage == b"fifo":
        cached.unlink()
        os.mkfifo(cached)
    elif damage is None:  # JSON of the right question, a field of the wrong type
        data = json.loads(cached.read_text())
        data["status"] = 1
        cached.write_text(json.dumps(data))
    else:
        cached.write_bytes(damage)
    judge_server.script({"rules": [{"match": "FAITHFUL", "replies": [PASS]}]})
    r = run_cli("run", ".", "--out", "again", cwd=tmp_path)  # returns: the FIFO is not read
    assert r.exit_code == 0, r.output
    line = (f"warning: the judge's answer in its cache ({cached}) is damaged ({why}); it was "
            "ignored and is written again")
    assert r.output.splitlines().count(line) == 1
    assert len(judge_server.requests()) == 1  # asked again
    assert json.loads(cached.read_text())["status"] == "pass"  # and written again
    quiet = run_cli("run", ".", "--out", "third", cwd=tmp_path)
    assert "damaged" not in quiet.output
