"""Issue 22 item 16: replay and recheck never flip a verdict under redaction. Checks see the
redacted text live, on replay and on recheck alike; lint warns (W412) where a check's text
would be redacted before the check sees it; ``no_secrets`` fails when a configured secret
reached the answer or a tool call's arguments — live from the secret, on replay and recheck
from the redaction marks the cassette and results.jsonl keep."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsl.checks.answer import no_secrets
from dsl.model import AttemptData, Call, Tokens
from tests.conftest import FakeServer, run_cli, suite_yaml, the_run, write

SECRET = "crm-Tok3n-77aa19"
KEY = "sk-live-AbCdEfGhIjKlMnOpQrSt"

SCENARIOS = {
    "says_id": 'contains: "PAT-123456"',
    "no_key_prefix": 'not_contains: "sk-live-"',
    "leaks": "no_secrets",
    "books": "no_secrets",
    "clean": "no_secrets",
}

REPLIES = {"rules": [
    {"match": "says_id", "replies": [{"text": f"Su ficha es PAT-123456; clave {KEY}."}]},
    {"match": "no_key_prefix", "replies": [{"text": f"La clave es {KEY}."}]},
    {"match": "leaks", "replies": [{"text": f"El token del CRM es {SECRET}."}]},
    {"match": "books", "replies": [
        {"tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-10-06", "time": SECRET}}]},
        {"text": "Reservado."}]},
    {"match": "clean", "replies": [{"text": "Abrimos hasta las 18:00."}]},
]}


@pytest.fixture
def suite(tmp_path: Path, server: FakeServer, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("CRM_TOKEN", SECRET)
    monkeypatch.setenv("NO_COLOR", "1")
    server.script(REPLIES)
    targets = {
        "live": {"kind": "openai", "base_url": server.url, "model": "m", "timeout_ms": 5000,
                 "retry": {"max_attempts": 1}},
        "replay": {"kind": "replay", "cassette": "c.jsonl"},
    }
    write(tmp_path / "scenarist.yaml", suite_yaml(
        server.url, targets=targets, defaults={"target": "live", "runs": 1},
        redact={"env": ["CRM_TOKEN"], "patterns": {"patient-id": r"PAT-\d{6}"}}))
    for name, check in SCENARIOS.items():
        write(tmp_path / f"{name}.yaml", f"""
            given:
              at: 2026-09-29T10:00:00-03:00
              tools: [book_appointment]
            when: "{name}"
            then:
              - {check}
            runs: 1
            min_pass: 1
            """)
    return tmp_path


def _verdicts(run_dir: Path) -> dict[str, tuple[str, str]]:
    out = {}
    for line in (run_dir / "results.jsonl").read_text().splitlines():
        r = json.loads(line)
        (c,) = r["checks"]
        out[r["scenario"]] = (c["status"], c["reason"])
    return out


EXPECTED = {
    "says_id": "fail",  # the answer keeps [REDACTED:patient-id]: so does every mode
    "no_key_prefix": "pass",  # sees the redacted key: W412 says so, no_secrets catches it
    "leaks": "fail",
    "books": "fail",
    "clean": "pass",
}


def test_live_replay_and_recheck_give_the_same_verdicts(suite: Path) -> None:
    live = run_cli("run", "--record", "c.jsonl", "--out", "live", cwd=suite)
    assert live.exit_code == 1, live.output
    replay = run_cli("run", "--target", "replay", "--out", "replay", cwd=suite)
    assert replay.exit_code == 1, replay.output
    recheck = run_cli("recheck", str(the_run(suite / "live")), "--out", "recheck", cwd=suite)
    assert recheck.exit_code == 1, recheck.output
    runs = {name: _verdicts(the_run(suite / name)) for name in ("live", "replay", "recheck")}
    for name, verdicts in runs.items():
        assert {k: v[0] for k, v in verdicts.items()} == EXPECTED, name
    assert runs["live"] == runs["recheck"]
    assert runs["live"]["leaks"][1] == (
        "a configured secret (CRM_TOKEN) reached the answer: redaction replaced it with "
        "[REDACTED:CRM_TOKEN]: \"El token del CRM es [REDACTED:CRM_TOKEN].\"")
    assert runs["replay"]["books"][1].startswith(
        "a configured secret (CRM_TOKEN) reached the arguments of the call to "
        "book_appointment: redaction replaced it with [REDACTED:CRM_TOKEN]: ")
    for name in ("live", "replay", "recheck"):
        for f in (suite / name).rglob("*"):
            if f.is_file():
                assert SECRET.encode() not in f.read_bytes(), f
                assert KEY.encode() not in f.read_bytes(), f


def test_lint_warns_where_a_checks_text_would_be_redacted(suite: Path) -> None:
    r = run_cli("lint", "--format", "json", cwd=suite)
    found = {(d["file"], d["line"], d["col"], d["code"]): (d["message"], d.get("hint"))
             for d in json.loads(r.output)["diagnostics"] if d["code"] == "W412"}
    assert found == {
        ("says_id.yaml", 6, 15, "W412"): (
            'the text "PAT-123456" of contains would be redacted ([REDACTED:patient-id]) '
            "before the check sees it — checks see the answer as results.jsonl and cassettes "
            "keep it — so it could never pass",
            'check for what the answer keeps: contains: "[REDACTED:patient-id]"; to catch a '
            "leaked secret, use no_secrets"),
        ("no_key_prefix.yaml", 6, 19, "W412"): (
            'the text "sk-live-" of not_contains would be redacted ([REDACTED:api-key]) '
            "before the check sees it — checks see the answer as results.jsonl and cassettes "
            "keep it — so it could never fail, and a leaked secret would go unseen",
            "to catch a secret that reaches the answer or a tool call's arguments, use the "
            "no_secrets check"),
    }
    assert run_cli("lint", "--strict", "clean.yaml", "leaks.yaml", cwd=suite).exit_code == 0


def _data(answer: str, *calls: Call, **extra: Any) -> AttemptData:
    import datetime as dt

    return AttemptData(message="m", answer=answer, calls=calls,
                       at=dt.datetime(2026, 9, 29, tzinfo=dt.UTC), tools=(), steps=1,
                       latency_ms=1.0, tokens=Tokens(), **extra)


def test_no_secrets_reads_the_answer_and_the_arguments_not_a_tools_answer() -> None:
    assert no_secrets(True, _data("ok")).status == "pass"
    tool_said = Call("1", "crm", {}, "{}", "token [REDACTED:CRM_TOKEN]", "read")
    assert no_secrets(True, _data("ok", tool_said)).status == "pass"
    sent = Call("2", "crm", {"q": "[REDACTED:CRM_TOKEN]"}, "", "ok", "read")
    assert no_secrets(True, _data("ok", sent)).status == "fail"
    unparsed = Call("3", "crm", None, '{"q": "[REDACTED:api-key]"', None, "read")
    assert no_secrets(True, _data("ok", unparsed)).reason.startswith(
        "a configured secret (api-key) reached the arguments of the call to crm")


def test_a_pattern_that_starts_with_a_key_prefix_is_warned_about(suite: Path) -> None:
    write(suite / "pattern.yaml", """
        given: {at: 2026-09-29T10:00:00-03:00}
        when: pattern
        then:
          - matches: "sk-live-[A-Za-z0-9]+"
          - matches: {pattern: "18:00|6 pm"}
        """)
    r = run_cli("lint", "--format", "json", "pattern.yaml", cwd=suite)
    found = [(d["line"], d["col"], d["message"]) for d in json.loads(r.output)["diagnostics"]
             if d["code"] == "W412"]
    assert found == [(4, 14, 'the text "sk-live-" of matches would be redacted '
                             "([REDACTED:api-key]) before the check sees it — checks see the "
                             "answer as results.jsonl and cassettes keep it — so the pattern "
                             "could never match it")]
