"""``scenarist import`` of a gateway log written for real: an app built on the official
``openai`` client talks to the scripted model server through a logging proxy
(tests/importing/gateway.py), as a gateway logs production traffic; the log is imported,
and each scenario lints clean and passes its "as logged" checks against a model that
repeats the log."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, run_cli
from tests.importing.replay import (
    as_logged,
    assert_replays,
    gateway,
    gateway_transcripts,
    load,
    replay,
    script_of,
    suite,
)

SYSTEM = "Sos el asistente de la Clínica Sonrisa. Respondé breve."
TOOLS = [
    {"type": "function", "function": {
        "name": "list_business_hours", "description": "List the clinic's opening hours.",
        "parameters": {"type": "object", "properties": {}}}},
    {"type": "function", "function": {
        "name": "search_slots", "description": "Free appointment slots on a day.",
        "parameters": {"type": "object", "properties": {"day": {"type": "string"}},
                       "required": ["day"]}}},
    {"type": "function", "function": {
        "name": "book_appointment", "description": "Book an appointment. Ask first.",
        "parameters": {"type": "object", "properties": {"date": {"type": "string"},
                                                        "time": {"type": "string"}},
                       "required": ["date", "time"]}}},
    {"type": "function", "function": {
        "name": "find_patient", "description": "A patient's record, by id.",
        "parameters": {"type": "object", "properties": {"patient_id": {"type": "string"}},
                       "required": ["patient_id"]}}},
]
HOURS = {"monday": "09:00-18:00", "saturday": "09:00-13:00"}
# what the app's real tools return (the planted secrets: a key a pattern knows, and a
# password no pattern knows)
RESULTS: dict[tuple[str, str], str] = {
    ("list_business_hours", "{}"): json.dumps(HOURS, ensure_ascii=False),
    ("search_slots", '{"day": "saturday"}'): '["10:00", "11:30"]',
    ("book_appointment", '{"date": "2026-10-03", "time": "10:00"}'):
        "Booked 2026-10-03 at 10:00.",
    ("find_patient", '{"patient_id": "P-1042"}'): json.dumps(
        {"name": "Ana Gómez", "phone": "+54 11 5555-0101",
         "portal_key": "sk-proj-Q7pL2xV9mN4bR8tK1wZ6",
         "db": {"user": "clinic", "password": "Tr0ub4dor&3-horse"}}, ensure_ascii=False),
    ("find_patient", '{"patient_id": "P-9999"}'): "Error: no patient with id P-9999",
}
HELD = {"book_appointment"}  # the app asks the person before it runs these
CONFIRM = object()  # the person presses "confirm"

SCRIPT = {"rules": [
    {"match": "Hasta qué hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Hoy atendemos hasta las 18:00."}]},
    {"match": "turno el sábado", "replies": [
        {"tool_calls": [{"name": "search_slots", "arguments": {"day": "saturday"}}]},
        {"text": "¿Te reservo el sábado 3 de octubre a las 10:00?",
         "tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-10-03", "time": "10:00"}}]},
        {"text": "Listo: tu turno es el sábado 3 de octubre a las 10:00."}]},
    {"match": "P-1042", "replies": [
        {"tool_calls": [{"name": "find_patient", "arguments": {"patient_id": "P-1042"}},
                        {"name": "find_patient", "arguments": {"patient_id": "P-9999"}}]},
        {"text": "El teléfono de Ana Gómez es +54 11 5555-0101. No encontré a P-9999."}]},
    {"match": "buen día", "replies": [{"text": "¡Hola! ¿En qué te puedo ayudar?"}]},
    {"match": "Abren el sábado", "per_turn": True, "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Sí, el sábado de 09:00 a 13:00."}]},
]}
CONVERSATIONS: list[list[Any]] = [
    ["¿Hasta qué hora atienden hoy?"],
    ["Quiero un turno el sábado a la mañana.", CONFIRM],
    ["Necesito el teléfono de la paciente P-1042 y el de P-9999."],
    ["Hola, buen día.", "¿Abren el sábado?"],
]


def converse(client: Any, turns: Sequence[Any]) -> None:
    """The app: the person's turns, the model's tool calls run by the app's tools — the
    ones in HELD only once the person confirms, in their next turn."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM}]
    waiting: list[Any] = []
    for turn in turns:
        if turn is CONFIRM:
            messages += [_result(c) for c in waiting]
            waiting = []
        else:
            messages.append({"role": "user", "content": turn})
        while True:
            reply = client.chat.completions.create(model="clinic-model", messages=messages,
                                                   tools=TOOLS)
            message = reply.choices[0].message
            messages.append(message.model_dump(exclude_none=True))
            calls = message.tool_calls or []
            if not calls:
                break
            if any(c.function.name in HELD for c in calls):
                waiting = list(calls)
                break
            messages += [_result(c) for c in calls]


def _result(call: Any) -> dict[str, Any]:
    args = json.dumps(json.loads(call.function.arguments), ensure_ascii=False)
    return {"role": "tool", "tool_call_id": call.id,
            "content": RESULTS[(call.function.name, args)]}


@pytest.fixture
def gateway_log(tmp_path: Path, server: FakeServer) -> Path:
    """A gateway log of the four conversations, written by the openai client."""
    from openai import OpenAI

    server.script(SCRIPT)
    log = tmp_path / "gateway.jsonl"
    with gateway(server.url, log, offset="-03:00") as url:
        client = OpenAI(base_url=url, api_key="sk-test-not-a-real-key-000000", max_retries=0)
        for turns in CONVERSATIONS:
            converse(client, turns)
    return log


def test_a_gateway_log_becomes_one_scenario_per_conversation(
        tmp_path: Path, server: FakeServer, gateway_log: Path) -> None:
    folder = suite(tmp_path / "clinic", server)
    result = run_cli("import", str(gateway_log), cwd=folder)
    assert result.exit_code == 0, result.output
    names = sorted(p.name for p in (folder / "imported").iterdir())
    assert names == ["hasta_que_hora_atienden_hoy.yaml", "hola_buen_dia.yaml",
                     "necesito_el_telefono_de_la_paciente.yaml",
                     "quiero_un_turno_el_sabado_a.yaml"]
    out = result.stdout.splitlines()
    assert out == [
        "imported/hasta_que_hora_atienden_hoy.yaml  1 turn, 1 tool call",
        "imported/quiero_un_turno_el_sabado_a.yaml  2 turns, 2 tool calls",
        "imported/necesito_el_telefono_de_la_paciente.yaml  1 turn, 2 tool calls",
        "imported/hola_buen_dia.yaml  2 turns, 1 tool call",
        "4 scenarios imported into imported/",
    ]
    booking = load(folder / "imported" / "quiero_un_turno_el_sabado_a.yaml")
    assert booking["when"] == [{"say": "Quiero un turno el sábado a la mañana."},
                               {"confirm": "book_appointment"}]
    assert booking["given"]["system"] == SYSTEM
    assert str(booking["given"]["at"]).endswith("-03:00")
    tools = {t["name"]: t for t in booking["given"]["tools"]}
    assert list(tools) == ["list_business_hours", "search_slots", "book_appointment",
                           "find_patient"]
    assert tools["book_appointment"]["confirm"] is True
    assert tools["book_appointment"]["input_schema"] == TOOLS[2]["function"]["parameters"]
    assert tools["search_slots"]["answers"] == [
        {"when": {"day": "saturday"}, "returns": ["10:00", "11:30"]}]
    assert tools["book_appointment"]["answers"] == [
        {"when": {"date": "2026-10-03", "time": "10:00"},
         "returns": "Booked 2026-10-03 at 10:00."}]
    assert "error" in tools["find_patient"]  # offered, never called here: nothing known
    assert [c["calls"] for c in as_logged(booking)] == [
        {"name": "search_slots", "args": {"day": "saturday"}},
        {"name": "book_appointment", "args": {"date": "2026-10-03", "time": "10:00"}}]
    assert [c["name"] for c in as_logged(booking)] == [
        "as logged: called search_slots with day saturday",
        "as logged: called book_appointment with date 2026-10-03 and time 10:00"]
    hours = load(folder / "imported" / "hasta_que_hora_atienden_hoy.yaml")
    assert hours["when"] == "¿Hasta qué hora atienden hoy?"
    answered = {t["name"]: t for t in hours["given"]["tools"]}["list_business_hours"]
    assert answered["answers"] == [{"when": {}, "returns": HOURS}]
    talk = load(folder / "imported" / "hola_buen_dia.yaml")
    assert talk["when"] == [{"say": "Hola, buen día."}, {"say": "¿Abren el sábado?"}]


def test_the_imported_scenarios_pass_against_a_model_that_repeats_the_log(
        tmp_path: Path, server: FakeServer, gateway_log: Path) -> None:
    folder = suite(tmp_path / "clinic", server)
    assert run_cli("import", str(gateway_log), cwd=folder).exit_code == 0
    r = replay(folder, server, script_of(gateway_transcripts(gateway_log)))
    assert_replays(r, files=4)


def test_a_tool_error_and_the_secrets_of_a_result(tmp_path: Path, server: FakeServer,
                                                  gateway_log: Path) -> None:
    folder = suite(tmp_path / "clinic", server)
    result = run_cli("import", str(gateway_log), cwd=folder)
    path = folder / "imported" / "necesito_el_telefono_de_la_paciente.yaml"
    text = path.read_text("utf-8")
    assert "sk-proj-Q7pL2xV9mN4bR8tK1wZ6" not in text
    assert "Tr0ub4dor&3-horse" not in text
    patient = {t["name"]: t for t in load(path)["given"]["tools"]}["find_patient"]
    assert patient["answers"] == [
        {"when": {"patient_id": "P-1042"},
         "returns": {"name": "Ana Gómez", "phone": "+54 11 5555-0101",
                     "portal_key": "[REDACTED:api-key]",
                     "db": {"user": "clinic", "password": "[REDACTED:credential]"}}},
        {"when": {"patient_id": "P-9999"}, "error": "Error: no patient with id P-9999"}]
    assert result.stderr == (  # the line where the result first appears
        f"{gateway_log}:7: a value in the result of find_patient looks like a "
        "credential (Secret Keyword) and matches no redaction pattern: it was not written "
        "([REDACTED:credential] stands in its place); if it is one, add a pattern for it to "
        "redact.patterns in scenarist.yaml\n")


def _first_user(messages: Sequence[Mapping[str, Any]]) -> str:
    return next(str(m["content"]) for m in messages if m["role"] == "user")
