"""The scenario written for a conversation (dsl/importing/scenario.py, tools.py): exact
answers whatever the logged text holds, YAML every reader reads alike, the schema inferred
or fitted, ``--world`` tables, and ``max_steps`` — each file linted with --strict, and the
fake tools' answers compared with the log through Scenarist's own compiler."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from dsl.compiler.compile import build_plan
from dsl.compiler.faketools import answer
from tests.conftest import FakeServer, run_cli, write
from tests.importing.replay import assert_replays, load, replay, script_of, suite


def call(call_id: str, name: str, args: dict[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


def gateway_log(path: Path, transcripts: Sequence[Sequence[dict[str, Any]]],
                tools: Sequence[dict[str, Any]] = ()) -> Path:
    """A gateway log of these conversations: one line per model call."""
    lines = []
    for t in transcripts:
        for i, m in enumerate(t):
            if m["role"] == "assistant":
                request: dict[str, Any] = {"model": "m", "messages": list(t[:i])}
                if tools:
                    request["tools"] = list(tools)
                lines.append(json.dumps({"request": request, "response": {
                    "choices": [{"index": 0, "message": m}]}}, ensure_ascii=False))
    write(path, "\n".join(lines) + "\n")
    return path


def tools_of(path: Path) -> dict[str, Any]:
    """The fake tools of an imported file, as Scenarist compiles them."""
    write(path.parent / "scenarist.yaml", json.dumps({"targets": {"m": {
        "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}}}))
    (scenario,) = build_plan([path])[0].scenarios
    return {t.name: t for t in scenario.tools}


AT = dt.datetime(2026, 9, 29, 10, tzinfo=dt.UTC)
TRICKY = ("Your code is {{ code }} — {% raw %}, {# not a comment #}, {{{ triple }}}\n"
          "and a last line without a break")


def test_what_a_tool_returned_is_answered_exactly(tmp_path: Path) -> None:
    transcript = [
        {"role": "system", "content": "Line one.\nLine two:  indented\n\ttabbed\n"},
        {"role": "user", "content": "Dame el código\x1b[31m"},
        {"role": "assistant", "content": None, "tool_calls": [
            call("a", "get_code", {"user": "ana", "when": "15:00", "ok": "yes"}),
            call("b", "get_code", {"user": "bob", "when": "15:00", "ok": "no"}),
            call("c", "get_json", {})]},
        {"role": "tool", "tool_call_id": "a", "content": TRICKY},
        {"role": "tool", "tool_call_id": "b", "content": '{"code":  1,"spaced": true}'},
        {"role": "tool", "tool_call_id": "c", "content": '{"code": "{{ x }}", "n": 1.5}'},
        {"role": "assistant", "content": "Listo."},
    ]
    log = gateway_log(tmp_path / "log.jsonl", [transcript])
    assert run_cli("import", str(log), "--into", "out", cwd=tmp_path).exit_code == 0
    (path,) = (tmp_path / "out").iterdir()
    lint = run_cli("lint", "--strict", "out", cwd=tmp_path)
    assert lint.exit_code == 0, lint.output
    tools = tools_of(path)
    assert answer(tools["get_code"], {"user": "ana", "when": "15:00", "ok": "yes"},
                  AT).output == TRICKY
    assert answer(tools["get_code"], {"user": "bob", "when": "15:00", "ok": "no"},
                  AT).output == '{"code":  1,"spaced": true}'
    assert answer(tools["get_json"], {}, AT).output == '{"code": "{{ x }}", "n": 1.5}'
    data = load(path)
    assert data["given"]["system"] == transcript[0]["content"]
    assert data["when"] == "Dame el código\x1b[31m"
    # a reader of YAML 1.1 (PyYAML, many editors) reads the same values
    old = YAML(typ="safe")
    old.version = (1, 1)
    assert old.load(path.read_text("utf-8"))["then"] == data["then"]
    assert [c["calls"] for c in data["then"]] == [
        {"name": "get_code", "args": {"user": "ana", "when": "15:00", "ok": "yes"}},
        {"name": "get_code", "args": {"user": "bob", "when": "15:00", "ok": "no"}},
        {"name": "get_json", "args": {}}]


def test_a_schema_inferred_and_arguments_the_definition_does_not_allow(
        tmp_path: Path) -> None:
    definition = {"type": "function", "function": {
        "name": "book", "description": "Book.",
        "parameters": {"type": "object", "properties": {"date": {"type": "string"}},
                       "required": ["date"]}}}
    transcript = [
        {"role": "user", "content": "Reservá"},
        {"role": "assistant", "content": None, "tool_calls": [
            call("a", "book", {"date": "2026-10-03", "urgent": True}),
            call("b", "note", {"text": "hola", "n": 2}),
            call("c", "note", {"text": "chau", "n": 2.5})]},
        {"role": "tool", "tool_call_id": "a", "content": "Booked."},
        {"role": "tool", "tool_call_id": "b", "content": "ok"},
        {"role": "tool", "tool_call_id": "c", "content": "ok"},
        {"role": "assistant", "content": "Listo."},
    ]
    log = gateway_log(tmp_path / "log.jsonl", [transcript], tools=[definition])
    assert run_cli("import", str(log), "--into", "out", cwd=tmp_path).exit_code == 0
    (path,) = (tmp_path / "out").iterdir()
    assert run_cli("lint", "--strict", "out", cwd=tmp_path).exit_code == 0
    data = load(path)
    tools = {t["name"]: t for t in data["given"]["tools"]}
    assert tools["note"]["input_schema"] == {  # 2 and 2.5: a number
        "type": "object", "properties": {"text": {"type": "string"}, "n": {"type": "number"}},
        "required": ["text", "n"]}
    assert tools["book"]["answers"] == [{"when": {"date": "2026-10-03"}, "returns": "Booked."}]
    assert data["then"][0]["calls"] == {"name": "book", "args": {"date": "2026-10-03"}}
    text = path.read_text("utf-8")
    assert "# it also sent urgent, which the tool's input_schema does not allow: left out" \
        in text


def test_the_same_arguments_answered_twice(tmp_path: Path, server: FakeServer) -> None:
    transcript = [
        {"role": "user", "content": "¿Hay turnos?"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("a", "slots", {"day": "sat"})]},
        {"role": "tool", "tool_call_id": "a", "content": "10:00"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("b", "slots", {"day": "sat"})]},
        {"role": "tool", "tool_call_id": "b", "content": "none left"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("c", "slots", {"day": "sun", "late": True})]},
        {"role": "tool", "tool_call_id": "c", "content": "18:00"},
        {"role": "assistant", "content": None,
         "tool_calls": [call("d", "slots", {"day": "sun"})]},
        {"role": "tool", "tool_call_id": "d", "content": "09:00"},
        *[x for i in range(3) for x in (
            {"role": "assistant", "content": None,
             "tool_calls": [call(f"e{i}", "slots", {"day": "mon"})]},
            {"role": "tool", "tool_call_id": f"e{i}", "content": "11:00"})],
        {"role": "assistant", "content": "El sábado a las 10:00."},
    ]
    folder = suite(tmp_path / "s", server)
    log = gateway_log(tmp_path / "log.jsonl", [transcript])
    assert run_cli("import", str(log), cwd=folder).exit_code == 0
    (path,) = (folder / "imported").iterdir()
    data = load(path)
    assert data["max_steps"] == 8  # the log's turn made 8 model calls
    (tool,) = data["given"]["tools"]
    assert tool["answers"] == [{"when": {"day": "sun", "late": True}, "returns": "18:00"},
                               {"when": {"day": "sat"}, "returns": "10:00"},
                               {"when": {"day": "sun"}, "returns": "09:00"},
                               {"when": {"day": "mon"}, "returns": "11:00"}]
    assert ('# called again with these arguments, it returned "none left" (an answer is the '
            "same every time: the first is kept)") in path.read_text("utf-8")
    assert [(c["calls"], c["name"]) for c in data["then"]] == [
        ({"name": "slots", "args": {"day": "sat"}, "times": 2},
         "as logged: called slots with day sat, 2 times"),
        ({"name": "slots", "args": {"day": "sun", "late": True}},
         "as logged: called slots with day sun and late true"),
        ({"name": "slots", "args": {"day": "sun"}, "times": 2},
         "as logged: called slots with day sun, 2 times"),
        ({"name": "slots", "args": {"day": "mon"}, "times": 3},
         "as logged: called slots with day mon, 3 times")]
    # the calls are repeated whatever the second answer was: every "as logged" check passes
    assert_replays(replay(folder, server, script_of([transcript])), files=1)


def test_world_tables_from_the_rows_read_tools_returned(tmp_path: Path,
                                                        server: FakeServer) -> None:
    cards = [{"id": "C-1", "owner": "ana", "type": "debit"},
             {"id": "C-2", "owner": "ana", "type": "credit"}]
    transcript = [
        {"role": "user", "content": "Mis tarjetas, y la C-2"},
        {"role": "assistant", "content": None, "tool_calls": [
            call("a", "list_cards", {"owner": "ana"}), call("b", "get_card", {"card_id": "C-2"}),
            call("c", "block_card", {"card_id": "C-2"})]},
        {"role": "tool", "tool_call_id": "a", "content": json.dumps(cards)},
        {"role": "tool", "tool_call_id": "b", "content": json.dumps(cards[1])},
        {"role": "tool", "tool_call_id": "c", "content": json.dumps([cards[1]])},
        {"role": "assistant", "content": "Tenés C-1 y C-2."},
    ]
    folder = suite(tmp_path / "s", server)
    log = gateway_log(tmp_path / "log.jsonl", [transcript])
    result = run_cli("import", str(log), "--world", cwd=folder)
    assert result.exit_code == 0, result.output
    (path,) = (folder / "imported").iterdir()
    data = load(path)
    assert data["given"]["world"] == {"cards": cards, "card": [cards[1]],
                                      "block_card": [cards[1]]}
    tools = {t["name"]: t for t in data["given"]["tools"]}
    assert tools["list_cards"] == {"name": "list_cards", "input_schema": {
        "type": "object", "properties": {"owner": {"type": "string"}}, "required": ["owner"]},
        "table": "cards", "where": {"owner": "{{ args.owner }}"}}
    assert tools["get_card"]["where"] == {"id": "{{ args.card_id }}"}
    assert tools["get_card"]["one"] is True
    assert_replays(replay(folder, server, script_of([transcript])), files=1)


def test_a_conversation_without_calls(tmp_path: Path) -> None:
    log = gateway_log(tmp_path / "log.jsonl", [[
        {"role": "user", "content": "Hola"}, {"role": "assistant", "content": "¡Hola!"}]])
    assert run_cli("import", str(log), "--into", "out", cwd=tmp_path).exit_code == 0
    data = load(tmp_path / "out" / "hola.yaml")
    assert data["then"] == [{"non_empty": True, "name": "as logged: the agent answered"}]
    assert "tools" not in data["given"]
    assert run_cli("lint", "--strict", "out", cwd=tmp_path).exit_code == 0


def test_an_empty_message_of_the_person(tmp_path: Path) -> None:
    log = gateway_log(tmp_path / "log.jsonl", [[
        {"role": "user", "content": ""}, {"role": "assistant", "content": "¿Hola?"}]])
    assert run_cli("import", str(log), "--into", "out", cwd=tmp_path).exit_code == 0
    assert load(tmp_path / "out" / "conversation.yaml")["when"] == "[an empty message]"
    assert run_cli("lint", "--strict", "out", cwd=tmp_path).exit_code == 0
