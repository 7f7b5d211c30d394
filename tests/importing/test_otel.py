"""``scenarist import`` of OpenTelemetry traces written for real: spans built with the GenAI
semantic conventions by the OpenTelemetry SDK and written by its OTLP JSON file exporter —
two conversations in the attribute form (v1.37+: ``gen_ai.input.messages``,
``gen_ai.output.messages``, ``gen_ai.tool.definitions``, ``execute_tool`` spans), one in
the event form (v1.36: ``gen_ai.*.message`` and ``gen_ai.choice`` span events) — imported,
linted, and run against a model that repeats them."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, run_cli
from tests.importing.replay import as_logged, assert_replays, load, replay, rule, suite

SYSTEM = "You are the assistant of Clínica Sonrisa."
HOURS = '{"monday": "09:00-18:00", "saturday": "09:00-13:00"}'
DEFINITIONS = [
    {"type": "function", "name": "list_business_hours",
     "description": "List the clinic's opening hours.",
     "parameters": {"type": "object", "properties": {}}},
    {"type": "function", "name": "search_slots", "description": "Free slots on a day.",
     "parameters": {"type": "object", "properties": {"day": {"type": "string"}},
                    "required": ["day"]}},
    {"type": "function", "name": "book_appointment", "description": "Book. Ask first.",
     "parameters": {"type": "object", "properties": {"date": {"type": "string"},
                                                     "time": {"type": "string"}},
                    "required": ["date", "time"]}},
]


def _call(call_id: str, name: str, args: Mapping[str, Any]) -> dict[str, Any]:
    return {"id": call_id, "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)}}


# Each conversation as its model calls: (the messages sent, the answer), OpenAI-shaped.
U1 = {"role": "user", "content": "¿Hasta qué hora atienden hoy?"}
A1 = {"role": "assistant", "content": None,
      "tool_calls": [_call("call_h1", "list_business_hours", {})]}
T1 = {"role": "tool", "tool_call_id": "call_h1", "content": HOURS}
A2 = {"role": "assistant", "content": "Hoy atendemos hasta las 18:00."}
HOURS_CALLS = [([U1], A1), ([U1, A1, T1], A2)]

U2 = {"role": "user", "content": "Quiero un turno el sábado a la mañana."}
B1 = {"role": "assistant", "content": None,
      "tool_calls": [_call("call_s1", "search_slots", {"day": "saturday"})]}
S1 = {"role": "tool", "tool_call_id": "call_s1", "content": '["10:00", "11:30"]'}
B2 = {"role": "assistant", "content": "¿Te reservo el sábado 3 de octubre a las 10:00?",
      "tool_calls": [_call("call_b1", "book_appointment",
                           {"date": "2026-10-03", "time": "10:00"})]}
S2 = {"role": "tool", "tool_call_id": "call_b1", "content": "Booked 2026-10-03 at 10:00."}
B3 = {"role": "assistant", "content": "Listo: sábado 3 de octubre, 10:00."}
BOOKING_CALLS = [([U2], B1), ([U2, B1, S1], B2), ([U2, B1, S1, B2, S2], B3)]

U3 = {"role": "user", "content": "Buscá a la paciente P-1042, por favor."}
P1 = {"role": "assistant", "content": None,
      "tool_calls": [_call("call_p1", "find_patient", {"patient_id": "P-1042"})]}
R1 = {"role": "tool", "tool_call_id": "call_p1", "content": "The records system is down."}
P2 = {"role": "assistant", "content": "No puedo consultar la ficha ahora; probá más tarde."}
PATIENT_CALLS = [([U3], P1), ([U3, P1, R1], P2)]


def _parts(m: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI message in the GenAI conventions' shape (role and parts)."""
    parts: list[dict[str, Any]] = []
    if m["role"] == "tool":
        parts.append({"type": "tool_call_response", "id": m["tool_call_id"],
                      "response": m["content"]})
    if m.get("content") and m["role"] != "tool":
        parts.append({"type": "text", "content": m["content"]})
    for c in m.get("tool_calls") or ():
        parts.append({"type": "tool_call", "id": c["id"], "name": c["function"]["name"],
                      "arguments": json.loads(c["function"]["arguments"])})
    out: dict[str, Any] = {"role": m["role"], "parts": parts}
    if m["role"] == "assistant":
        out["finish_reason"] = "tool_calls" if m.get("tool_calls") else "stop"
    return out


def write_traces(path: Path) -> None:
    """The three conversations as the SDK exports them (OTLP JSON Lines)."""
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.trace import Status, StatusCode

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(str(path))))
    tracer = provider.get_tracer("clinic-agent")

    def attribute_form(conversation: str, calls: Sequence[Any], structured: bool,
                       turns: Sequence[int]) -> None:
        """One trace per turn (the indexes of ``calls`` where a turn starts), linked by
        gen_ai.conversation.id; the messages as JSON text, or as structured values."""
        bounds = [*turns, len(calls)]
        for t in range(len(turns)):
            with tracer.start_as_current_span("invoke_agent clinic") as agent:
                agent.set_attribute("gen_ai.operation.name", "invoke_agent")
                agent.set_attribute("gen_ai.conversation.id", conversation)
                if not structured:  # an agent span may hold its turn's messages too
                    agent.set_attribute("gen_ai.input.messages", json.dumps(
                        [_parts(calls[bounds[t]][0][-1])]))
                    agent.set_attribute("gen_ai.output.messages", json.dumps(
                        [_parts(calls[bounds[t + 1] - 1][1])]))
                for sent, answer in calls[bounds[t]:bounds[t + 1]]:
                    with tracer.start_as_current_span("chat clinic-model") as chat:
                        chat.set_attribute("gen_ai.operation.name", "chat")
                        inputs = [_parts(m) for m in sent]
                        outputs = [_parts(answer)]
                        if structured:
                            chat.set_attribute("gen_ai.input.messages", inputs)
                            chat.set_attribute("gen_ai.output.messages", outputs)
                            chat.set_attribute("gen_ai.tool.definitions", DEFINITIONS)
                        else:
                            chat.set_attribute("gen_ai.input.messages", json.dumps(inputs))
                            chat.set_attribute("gen_ai.output.messages", json.dumps(outputs))
                            chat.set_attribute("gen_ai.tool.definitions",
                                               json.dumps(DEFINITIONS))
                        chat.set_attribute("gen_ai.system_instructions",
                                           json.dumps([{"type": "text", "content": SYSTEM}]))
                    for c in answer.get("tool_calls") or ():
                        with tracer.start_as_current_span(
                                f"execute_tool {c['function']['name']}") as tool:
                            tool.set_attribute("gen_ai.operation.name", "execute_tool")
                            tool.set_attribute("gen_ai.tool.name", c["function"]["name"])
                            tool.set_attribute("gen_ai.tool.call.id", c["id"])
                            tool.set_attribute("gen_ai.tool.call.arguments",
                                               c["function"]["arguments"])

    attribute_form("conv-hours", HOURS_CALLS, structured=False, turns=[0])
    attribute_form("conv-booking", BOOKING_CALLS, structured=True, turns=[0, 2])

    # the event form: no conversation id (one trace), body fields as event attributes
    with tracer.start_as_current_span("invoke_agent clinic"):
        for n, (sent, answer) in enumerate(PATIENT_CALLS):
            with tracer.start_as_current_span("chat clinic-model") as chat:
                chat.set_attribute("gen_ai.operation.name", "chat")
                chat.set_attribute("gen_ai.system", "openai")
                chat.add_event("gen_ai.system.message", {"content": SYSTEM})
                for m in sent:
                    if m["role"] == "user":
                        chat.add_event("gen_ai.user.message", {"content": m["content"]})
                    elif m["role"] == "assistant":
                        chat.add_event("gen_ai.assistant.message",
                                       {"tool_calls": json.dumps(m["tool_calls"])})
                    else:  # the body wrapped whole in one attribute
                        chat.add_event("gen_ai.tool.message", {"gen_ai.event.content": json.dumps(
                            {"content": m["content"], "id": m["tool_call_id"]})})
                body = {k: v for k, v in answer.items() if v is not None and k != "role"}
                chat.add_event("gen_ai.choice", {"index": 0, "message": json.dumps(body),
                                                 "finish_reason": "tool_calls" if n == 0
                                                 else "stop"})
            for c in answer.get("tool_calls") or ():
                with tracer.start_as_current_span("execute_tool find_patient") as tool:
                    tool.set_attribute("gen_ai.operation.name", "execute_tool")
                    tool.set_attribute("gen_ai.tool.name", "find_patient")
                    tool.set_attribute("gen_ai.tool.call.id", c["id"])
                    tool.set_status(Status(StatusCode.ERROR, "The records system is down."))
    provider.shutdown()


def script() -> dict[str, Any]:
    """A model that repeats the three conversations."""
    return {"rules": [rule(first["content"], [a for _, a in calls])
                      for first, calls in ((U1, HOURS_CALLS), (U2, BOOKING_CALLS),
                                           (U3, PATIENT_CALLS))]}


@pytest.fixture
def traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    write_traces(path)
    return path


def test_an_otlp_export_becomes_one_scenario_per_conversation(
        tmp_path: Path, server: FakeServer, traces: Path) -> None:
    folder = suite(tmp_path / "clinic", server)
    result = run_cli("import", str(traces), "--into", "imported", cwd=folder)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "imported/hasta_que_hora_atienden_hoy.yaml  1 turn, 1 tool call",
        "imported/quiero_un_turno_el_sabado_a.yaml  2 turns, 2 tool calls",
        "imported/busca_a_la_paciente_p_1042.yaml  1 turn, 1 tool call",
        "3 scenarios imported into imported/",
    ]
    hours = load(folder / "imported" / "hasta_que_hora_atienden_hoy.yaml")
    assert hours["when"] == U1["content"]
    assert hours["given"]["system"] == SYSTEM
    assert "conv-hours" in hours["description"]
    tools = {t["name"]: t for t in hours["given"]["tools"]}
    assert tools["list_business_hours"]["answers"] == [
        {"when": {}, "returns": json.loads(HOURS)}]
    assert tools["search_slots"]["input_schema"] == DEFINITIONS[1]["parameters"]

    booking = load(folder / "imported" / "quiero_un_turno_el_sabado_a.yaml")
    assert booking["when"] == [{"say": U2["content"]}, {"confirm": "book_appointment"}]
    booked = {t["name"]: t for t in booking["given"]["tools"]}["book_appointment"]
    assert booked["confirm"] is True
    assert booked["answers"] == [{"when": {"date": "2026-10-03", "time": "10:00"},
                                  "returns": "Booked 2026-10-03 at 10:00."}]
    assert [c["calls"] for c in as_logged(booking)] == [
        {"name": "search_slots", "args": {"day": "saturday"}},
        {"name": "book_appointment", "args": {"date": "2026-10-03", "time": "10:00"}}]

    patient = load(folder / "imported" / "busca_a_la_paciente_p_1042.yaml")
    assert patient["given"]["system"] == SYSTEM
    (tool,) = patient["given"]["tools"]
    # no definitions in the event form: the schema from the arguments, the span's error
    assert tool == {"name": "find_patient",
                    "input_schema": {"type": "object",
                                     "properties": {"patient_id": {"type": "string"}},
                                     "required": ["patient_id"]},
                    "answers": [{"when": {"patient_id": "P-1042"},
                                 "error": "The records system is down."}]}
    assert as_logged(patient) == [
        {"calls": {"name": "find_patient", "args": {"patient_id": "P-1042"}},
         "name": "as logged: called find_patient with patient_id P-1042"}]


def test_the_imported_traces_pass_against_a_model_that_repeats_them(
        tmp_path: Path, server: FakeServer, traces: Path) -> None:
    folder = suite(tmp_path / "clinic", server)
    assert run_cli("import", str(traces), cwd=folder).exit_code == 0
    assert_replays(replay(folder, server, script()), files=3)


def test_one_document_of_otlp_json_reads_as_json_lines_do(
        tmp_path: Path, server: FakeServer, traces: Path) -> None:
    """A collector's single (pretty-printed) document: the same scenarios."""
    batches = [json.loads(x) for x in traces.read_text().splitlines()]
    whole = {"resourceSpans": [rs for b in batches for rs in b["resourceSpans"]]}
    one = tmp_path / "traces.json"
    one.write_text(json.dumps(whole, indent=2, ensure_ascii=False), "utf-8")
    folder = suite(tmp_path / "clinic", server)
    first = run_cli("import", str(traces), "--into", "a", cwd=folder)
    second = run_cli("import", str(one), "--into", "b", cwd=folder)
    assert first.exit_code == second.exit_code == 0
    for f in (folder / "a").iterdir():
        assert load(f)["given"] == load(folder / "b" / f.name)["given"]
        assert load(f)["then"] == load(folder / "b" / f.name)["then"]
