"""Bad input to ``scenarist import``, word for word: each problem named at its place
(``file:line``, or the span's id) on stderr, the rest of the file still imported, nothing
half-written, and the exit codes of docs/cli.md."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsl.importing import sources
from tests.conftest import run_cli, write

ASK = {"role": "user", "content": "¿Abren hoy?"}
ANSWER = {"role": "assistant", "content": "Sí, hasta las 18:00."}
CANCEL = {"role": "user", "content": "Quiero cancelar mi turno."}
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function",
     "function": {"name": "cancel_appointment", "arguments": '{"id": "A-1"}'}}]}


def exchange(messages: list[dict[str, Any]], answer: dict[str, Any] | None) -> str:
    return json.dumps({"request": {"model": "m", "messages": messages},
                       "response": {"choices": [{"index": 0, "message": answer}]}},
                      ensure_ascii=False)


def test_each_bad_line_is_named_and_the_rest_imported(tmp_path: Path) -> None:
    write(tmp_path / "gateway.jsonl", "\n".join([
        exchange([ASK], ANSWER),
        exchange([CANCEL], CALL)[:60],  # cut off where a copy stopped
        exchange([{"role": "system", "content": "Hola"}], ANSWER),  # nobody spoke
        exchange([CANCEL], CALL),  # the log ends before the call's result
        '{"request": {"messages": []}, "response": {"error": {"message": "rate limited"}}}',
        '{"id": 7}',
        "[1, 2",
    ]) + "\n")
    result = run_cli("import", "gateway.jsonl", "--into", "out", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr == (
        "gateway.jsonl:2: the line is cut off: its JSON stops in the middle, at column 60; "
        "skipped\n"
        "gateway.jsonl:3: a conversation with no message from the person (no user message): "
        "no scenario was written for it\n"
        "gateway.jsonl:4: the call call_1 to cancel_appointment has no result in the log: "
        "its fake tool answers an error that says so\n"
        "gateway.jsonl:5: the response holds no message (the endpoint answered an error: "
        "rate limited); skipped\n"
        "gateway.jsonl:6: not a logged exchange: the line has no 'request' and 'response' "
        "(is it an OpenAI gateway log?); skipped\n"
        "gateway.jsonl:7: the line is cut off: its JSON stops in the middle, at column 5; "
        "skipped\n")
    assert result.stdout.splitlines() == [
        "out/abren_hoy.yaml  1 turn, 0 tool calls",
        "out/quiero_cancelar_mi_turno.yaml  1 turn, 1 tool call",
        "2 scenarios imported into out/",
    ]
    text = (tmp_path / "out" / "quiero_cancelar_mi_turno.yaml").read_text("utf-8")
    assert ("answers:\n        - when: {id: A-1}  # log line 4\n"
            "          error: no result was logged for this call\n") in text
    lint = run_cli("lint", "--strict", "out", cwd=tmp_path)
    assert lint.exit_code == 0, lint.output


def test_a_trace_with_a_cut_line_and_a_span_without_its_attributes(tmp_path: Path) -> None:
    def span(span_id: str, attributes: list[dict[str, Any]]) -> dict[str, Any]:
        return {"traceId": "0af7651916cd43dd8448eb211c80319c", "spanId": span_id,
                "name": "chat gpt-4o", "startTimeUnixNano": "1790000000000000000",
                "attributes": attributes}

    def batch(*spans: dict[str, Any]) -> str:
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": list(spans)}]}]})

    messages = [{"role": "user", "parts": [{"type": "text", "content": "¿Abren hoy?"}]}]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "Sí."}]}]
    chat = span("b7ad6b7169203331", [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": json.dumps(messages)}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(answer)}}])
    bare = span("00f067aa0ba902b7", [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}])
    write(tmp_path / "traces.jsonl", "\n".join([batch(chat), batch(bare), batch(chat)[:80]])
          + "\n")
    result = run_cli("import", "traces.jsonl", "--into", "out", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr == (
        "traces.jsonl:2: span 00f067aa0ba902b7: a chat span (chat gpt-4o) without "
        "gen_ai.input.messages, gen_ai.output.messages or message events: nothing of the "
        "conversation to read (is the instrumentation's content capture on?); skipped\n"
        "traces.jsonl:3: the line is cut off: its JSON stops in the middle, at column 80; "
        "skipped\n")
    assert result.stdout.splitlines()[-1] == "1 scenario imported into out/"


def test_one_otlp_document_cut_off(tmp_path: Path) -> None:
    write(tmp_path / "traces.json", '{\n  "resourceSpans": [\n    {"scopeSpans": [\n')
    result = run_cli("import", "traces.json", "--into", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr == ("traces.json:4: the file is cut off: the JSON ends in the "
                             "middle\nNo scenario imported: see the problems above\n")
    assert not (tmp_path / "out").exists()


def test_a_huge_file_is_read_up_to_the_bound(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    line = exchange([ASK], ANSWER)
    write(tmp_path / "big.jsonl", "\n".join(
        exchange([{"role": "user", "content": f"pregunta {i}"}], ANSWER) for i in range(40))
        + "\n")
    bound = 10 * (len(line) + 1)
    monkeypatch.setattr(sources, "MAX_FILE_BYTES", bound)
    result = run_cli("import", "big.jsonl", "--into", "out", cwd=tmp_path)
    assert result.exit_code == 0
    kept = len(list((tmp_path / "out").iterdir()))
    assert 8 <= kept <= 10
    assert result.stderr == (f"big.jsonl:{kept + 1}: the file is larger than Scenarist "
                             f"reads ({bound:,} bytes): the lines from here on were not "
                             "read\n")


def test_a_huge_line_is_skipped_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long_one = exchange([{"role": "user", "content": "x" * 5000}], ANSWER)
    write(tmp_path / "gateway.jsonl", "\n".join([long_one, exchange([ASK], ANSWER)]) + "\n")
    monkeypatch.setattr(sources, "MAX_LINE_BYTES", 4096)
    result = run_cli("import", "gateway.jsonl", "--into", "out", cwd=tmp_path)
    assert result.exit_code == 0
    assert result.stderr == ("gateway.jsonl:1: the line is longer than Scenarist reads "
                             "(4,096 bytes): skipped\n")
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["abren_hoy.yaml"]


def test_an_existing_file_is_never_replaced(tmp_path: Path) -> None:
    write(tmp_path / "gateway.jsonl", exchange([ASK], ANSWER) + "\n"
          + exchange([CANCEL], ANSWER) + "\n")
    write(tmp_path / "out" / "abren_hoy.yaml", "# mine\n")
    result = run_cli("import", "gateway.jsonl", "--into", "out", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr == (
        "error: out/abren_hoy.yaml already exists: scenarist import never replaces a file "
        "(nothing was written); move or rename it, or import into another folder with "
        "--into\n")
    assert (tmp_path / "out" / "abren_hoy.yaml").read_text() == "# mine\n"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["abren_hoy.yaml"]


def test_what_is_no_log_at_all(tmp_path: Path) -> None:
    write(tmp_path / "notes.csv", "day,hours\nmonday,09-18\n")
    write(tmp_path / "empty.jsonl", "\n")
    result = run_cli("import", "notes.csv", "missing.jsonl", "empty.jsonl", cwd=tmp_path)
    assert result.exit_code == 2
    assert result.stderr == (
        "empty.jsonl: not a format scenarist import reads (an OpenAI gateway log, an "
        "OTLP/JSON trace export, a Scenarist run folder): give --format (openai or otel or "
        "scenarist) if it is one\n"
        "missing.jsonl: no such file or folder\n"
        "notes.csv: not a format scenarist import reads (an OpenAI gateway log, an OTLP/JSON "
        "trace export, a Scenarist run folder): give --format (openai or otel or scenarist) "
        "if it is one\n"
        "No scenario imported: see the problems above\n")
    assert not (tmp_path / "imported").exists()
