"""Secrets and ``scenarist import``: the suite's redaction (its patterns, its keys' values)
and the usual key formats applied to everything written — the files, their names, the
terminal — and a value that only looks like a credential left out and named by its place."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli, write
from tests.importing.test_scenario import call, gateway_log

KEY = "sk-proj-9fK2mQ7xL4vB8nR1tZ5wY3"  # the default pattern api-key
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
TOKEN = "mtk_Zq8VbN3xR7pL2wK9sT4yH6jD"  # a key format no pattern knows: random-looking


def test_everything_written_is_redacted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                        ) -> None:
    monkeypatch.setenv("CLINIC_KEY", "clinic-secret-value-42")
    write(tmp_path / "scenarist.yaml", json.dumps({
        "targets": {"m": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                          "api_key_env": "CLINIC_KEY"}},
        "redact": {"patterns": {"card-number": r"\b\d{4}-\d{4}-\d{4}-\d{4}\b"}}}))
    transcript = [
        {"role": "user", "content": f"Mi clave es {KEY}, ¿la guardás?"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "profile", {})]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps(
            {"card": "4111-1111-1111-1111", "aws_secret_key": AWS_SECRET,
             "server": "uses clinic-secret-value-42", "session": TOKEN})},
        {"role": "assistant", "content": f"Listo. Tu tarjeta 4111-1111-1111-1111, {TOKEN}."},
    ]
    log = gateway_log(tmp_path / "log.jsonl", [transcript])
    result = run_cli("import", str(log), cwd=tmp_path)
    assert result.exit_code == 0, result.output
    (path,) = (tmp_path / "imported").iterdir()
    assert path.name == "mi_clave_es_la_guardas.yaml"  # no secret names a file
    text = path.read_text("utf-8")
    for secret in (KEY, "4111-1111-1111-1111", AWS_SECRET, "clinic-secret-value-42", TOKEN):
        assert secret not in text
        assert secret not in result.output
    assert "[REDACTED:api-key]" in text
    assert "[REDACTED:card-number]" in text
    assert "[REDACTED:CLINIC_KEY]" in text
    assert "[REDACTED:credential]" in text
    assert result.stderr == (
        "log.jsonl:2: a value in the result of profile looks like a credential (a "
        "random-looking key) and matches no redaction pattern: it was not written "
        "([REDACTED:credential] stands in its place); if it is one, add a pattern for it to "
        "redact.patterns in scenarist.yaml\n"
        "log.jsonl:2: a value in what the agent said looks like a credential (a "
        "random-looking key) and matches no redaction pattern: it was not written "
        "([REDACTED:credential] stands in its place); if it is one, add a pattern for it to "
        "redact.patterns in scenarist.yaml\n")
    assert run_cli("lint", "--strict", "imported", cwd=tmp_path).exit_code == 0


def test_a_redacted_json_result_stays_json(tmp_path: Path) -> None:
    compact = json.dumps({"aws_secret_key": AWS_SECRET, "ok": True}, separators=(",", ":"))
    transcript = [
        {"role": "user", "content": "¿Qué credenciales hay?"},
        {"role": "assistant", "content": None, "tool_calls": [call("a", "creds", {})]},
        {"role": "tool", "tool_call_id": "a", "content": compact},
        {"role": "assistant", "content": "Ninguna que pueda decirte."},
    ]
    log = gateway_log(tmp_path / "log.jsonl", [transcript])
    assert run_cli("import", str(log), "--into", "out", cwd=tmp_path).exit_code == 0
    (path,) = (tmp_path / "out").iterdir()
    assert AWS_SECRET not in path.read_text("utf-8")
    from tests.importing.replay import load

    (tool,) = load(path)["given"]["tools"]
    returned = tool["answers"][0]["returns"]
    data = json.loads(returned) if isinstance(returned, str) else returned
    assert data == {"aws_secret_key": "[REDACTED:aws-secret-key]", "ok": True}


def test_an_endpoints_error_message_is_redacted_too(tmp_path: Path) -> None:
    write(tmp_path / "log.jsonl", json.dumps({
        "request": {"messages": [{"role": "user", "content": "hola"}]},
        "response": {"error": {"message": f"Incorrect API key provided: {KEY}"}}}) + "\n")
    result = run_cli("import", "log.jsonl", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr == (
        "log.jsonl:1: the response holds no message (the endpoint answered an error: "
        "Incorrect API key provided: [REDACTED:api-key]); skipped\n"
        "No scenario imported: see the problems above\n")
