"""Issue 22 item 1: a text attachment that holds a configured secret is redacted like every
other text — the run folder's copy (attachments/<sha>), report.html, results.jsonl,
plan.json and the cassette hold the redacted text, and the hash is of that — while the model
still receives the file as it is."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from tests.conftest import FakeServer, run_cli, suite_yaml, the_run, write

SECRET = "crm-Tok3n-77aa19"

SCENARIO = """
given:
  at: 2026-09-29T10:00:00-03:00
  attachments:
    - {path: files/notes.txt, kind: file, label: notes}
when: "Read my notes, please."
then:
  - contains: "18:00"
runs: 1
min_pass: 1
"""


@pytest.fixture
def suite(tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRM_TOKEN", SECRET)
    monkeypatch.setenv("NO_COLOR", "1")
    server.script({"rules": [{"match": "", "replies": [{"text": "Abrimos hasta las 18:00."}]}]})
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, redact={"env": ["CRM_TOKEN"]}))
    write(tmp_path / "notes.yaml", SCENARIO)
    write(tmp_path / "files" / "notes.txt", f"Patient notes.\nCRM token: {SECRET}\n")
    return tmp_path


def test_the_kept_copy_and_the_report_are_redacted_and_the_hash_is_of_the_redacted_text(
        suite: Path, server: FakeServer) -> None:
    r = run_cli("run", "--record", "c.jsonl", cwd=suite)
    assert r.exit_code == 0, r.output
    run = the_run(suite / "runs")
    kept = list((run / "attachments").iterdir())
    assert len(kept) == 1
    text = kept[0].read_bytes()
    assert text == b"Patient notes.\nCRM token: [REDACTED:CRM_TOKEN]\n"
    assert kept[0].name == hashlib.sha256(text).hexdigest()
    record = json.loads((run / "results.jsonl").read_text())
    (part,) = [p for p in record["messages"][1]["content"] if p.get("type") == "attachment"]
    assert (part["sha256"], part["size"]) == (kept[0].name, len(text))
    assert "[REDACTED:CRM_TOKEN]" in (run / "report.html").read_text()
    for f in [*run.rglob("*"), suite / "c.jsonl"]:
        if f.is_file():
            assert SECRET.encode() not in f.read_bytes(), f
    assert SECRET not in r.output
    # the model received the file as it is, as it receives a tool's answer
    (request,) = server.requests()
    assert SECRET in json.dumps(request)


def test_replay_finds_the_recorded_exchange_and_recheck_keeps_the_hash(
        suite: Path, server: FakeServer) -> None:
    assert run_cli("run", "--record", "c.jsonl", "--out", "live", cwd=suite).exit_code == 0
    live = the_run(suite / "live")
    r = run_cli("recheck", str(live), "--out", "again", cwd=suite)
    assert r.exit_code == 0, r.output
    again = the_run(suite / "again")
    assert [p.name for p in (again / "attachments").iterdir()] == \
        [p.name for p in (live / "attachments").iterdir()]
