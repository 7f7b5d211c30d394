"""Conversations (issue 12) against the scripted server process: turns, confirm and
cancel, history, a simulated user (a second scripted server), per-turn and final checks,
max_steps per turn, record and replay, resume, the judge, the report and CI outputs."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.conftest import FakeServer, run_cli, start_fake_server, suite_yaml, write

CHANGE = """
description: The owner closes on Saturdays, and confirms in a second turn.
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours, set_business_hours]
when:
  - say: "Los sábados cerramos. Cambialo."
    then:
      - asks_to_confirm: set_business_hours
      - does_not_modify
  - confirm: set_business_hours
    then:
      - contains: "Listo"
then:
  - calls: {name: set_business_hours, args: {day: saturday, hours: closed}, times: 1}
  - asks_to_confirm: set_business_hours
runs: 1
min_pass: 1
"""

PROPOSE_THEN_DONE = {"rules": [{"match": "sábados", "replies": [
    {"tool_calls": [{"name": "set_business_hours",
                     "arguments": {"day": "saturday", "hours": "closed"}}],
     "text": "¿Confirmás que cierro los sábados?"},
    {"text": "Listo, los sábados quedan cerrados."}]}]}


@pytest.fixture(scope="module")
def user_server() -> Iterator[FakeServer]:
    """A second scripted endpoint: the model that plays the simulated user."""
    s = start_fake_server()
    yield s
    s.process.terminate()
    s.process.wait(timeout=5)


@pytest.fixture
def userver(user_server: FakeServer) -> FakeServer:
    user_server.script({"rules": []})
    return user_server


def suite(tmp_path: Path, url: str, user_url: str | None = None, **extra: Any) -> None:
    targets: dict[str, Any] = {
        "fake": {"kind": "openai", "base_url": url, "model": "fake-model", "timeout_ms": 5000,
                 "retry": {"max_attempts": 1}}}
    if user_url is not None:
        targets["patient"] = {"kind": "openai", "base_url": user_url, "model": "user-model",
                              "temperature": 0.9, "timeout_ms": 5000,
                              "retry": {"max_attempts": 1}}
    write(tmp_path / "scenarist.yaml", suite_yaml(url, targets=targets,
                                                  defaults={"target": "fake"}, **extra))


def records(tmp_path: Path, out: str = "runs") -> list[dict[str, Any]]:
    (d,) = (tmp_path / out).iterdir()
    return [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]


def run(tmp_path: Path, *args: str, out: str = "runs") -> Any:
    return run_cli("run", ".", "--out", out, "--no-early-stop", *args, cwd=tmp_path)


def bodies(s: FakeServer) -> list[dict[str, Any]]:
    return [r["body"] for r in s.requests()]


# ---- two and three turns, confirm and cancel -----------------------------------------------


def test_confirm_in_the_second_turn_runs_the_held_call_and_sends_its_result(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(PROPOSE_THEN_DONE)
    suite(tmp_path, server.url)
    write(tmp_path / "change.yaml", CHANGE)
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert rec["status"] == "pass"
    assert rec["reason"] == "all 5 checks passed"
    (call,) = rec["calls"]
    assert call["decision"] == "confirmed"
    assert call["pending"] is False
    assert call["output"] == "Hours for saturday updated."
    assert rec["turns"] == [
        {"kind": "say", "text": "Los sábados cerramos. Cambialo.",
         "answer": "¿Confirmás que cierro los sábados?", "calls": 1, "decided": [], "steps": 1,
         "messages": 3},
        {"kind": "confirm", "text": "set_business_hours",
         "answer": "Listo, los sábados quedan cerrados.", "calls": 0, "decided": [0],
         "steps": 1, "messages": 5}]
    assert [(c["label"], c.get("turn")) for c in rec["checks"]] == [
        ('turn 1 · asks_to_confirm: "set_business_hours"', 1),
        ("turn 1 · does_not_modify", 1),
        ('turn 2 · contains: "Listo"', 2),
        ('calls: {"name": "set_business_hours", "args": {"day": "saturday", "hours": '
         '"closed"}...', None),
        ('asks_to_confirm: "set_business_hours"', None)]
    # the confirm turn sends the fake result back as the tool result of the held call's id
    _, second = bodies(server)
    assert [m["role"] for m in second["messages"]] == ["system", "user", "assistant", "tool"]
    held = second["messages"][2]["tool_calls"][0]
    assert second["messages"][3] == {"role": "tool", "tool_call_id": held["id"],
                                     "content": "Hours for saturday updated."}


def test_cancel_tells_the_agent_and_nothing_is_modified(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "sábados", "replies": [
        {"tool_calls": [{"name": "set_business_hours",
                         "arguments": {"day": "saturday", "hours": "closed"}}]},
        {"text": "De acuerdo, no cambio nada."}]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "cancel.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [set_business_hours]
        when:
          - Los sábados cerramos. Cambialo.
          - cancel: all
        then:
          - does_not_modify
          - asks_to_confirm: set_business_hours
          - contains: no cambio
        runs: 1
        min_pass: 1
        """)
    assert run(tmp_path).exit_code == 0
    (rec,) = records(tmp_path)
    assert rec["calls"][0]["decision"] == "cancelled"
    assert rec["calls"][0]["output"] == "The person cancelled this call: it was not run."
    assert bodies(server)[1]["messages"][-1]["content"] == \
        "The person cancelled this call: it was not run."


def test_three_turns_say_while_a_call_is_held_dismisses_it(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [
        {"match": "sábados", "replies": [
            {"tool_calls": [{"name": "set_business_hours",
                             "arguments": {"day": "saturday", "hours": "closed"}}]}]},
        {"match": "domingos", "per_turn": True, "replies": [
            {"tool_calls": [{"name": "set_business_hours",
                             "arguments": {"day": "sunday", "hours": "closed"}}]},
            {"text": "Listo: los domingos cerrados."}]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "three.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [set_business_hours]
        when:
          - Los sábados cerramos.
          - say: Perdón, quise decir los domingos.
            then:
              - asks_to_confirm: set_business_hours
          - confirm: set_business_hours
            then:
              - contains: domingos
        then:
          - calls: {name: set_business_hours, args: {day: sunday}}
          - expect: "count(calls) == 2 and not call('set_business_hours').pending"
        runs: 1
        min_pass: 1
        """)
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert [c["decision"] for c in rec["calls"]] == ["dismissed", "confirmed"]
    assert [t["kind"] for t in rec["turns"]] == ["say", "say", "confirm"]
    assert rec["turns"][1]["decided"] == [0]
    assert rec["turns"][2]["decided"] == [1]
    second = bodies(server)[1]["messages"]
    assert second[-2] == {"role": "tool", "tool_call_id": "call_1_0", "content": (
        "The person did not confirm this call (they wrote a new message instead): it was "
        "not run.")}
    assert second[-1] == {"role": "user", "content": "Perdón, quise decir los domingos."}


def test_confirm_with_nothing_pending_fails_the_attempt_with_a_reason(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "sábados", "replies": [
        {"text": "Listo, ya está cambiado."}]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "change.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [set_business_hours]
        when:
          - say: Los sábados cerramos. Cambialo.
          - confirm: set_business_hours
            then: [non_empty]
          - say: ¿Quedó?
            then: [non_empty]
        then:
          - non_empty
        runs: 1
        min_pass: 1
        """)
    r = run(tmp_path)
    assert r.exit_code == 1
    (rec,) = records(tmp_path)
    assert rec["status"] == "fail"
    assert rec["reason"] == ("turn 2: the person confirms set_business_hours, but no call is "
                             "waiting for confirmation")
    assert rec["turns"][1] == {
        "kind": "confirm", "text": "set_business_hours", "answer": "", "calls": 0,
        "decided": [], "steps": 0, "messages": 3,
        "failure": "the person confirms set_business_hours, but no call is waiting for "
                   "confirmation"}
    assert [(c["status"], c["reason"]) for c in rec["checks"][:2]] == [
        ("not_evaluated", "not evaluated: turn 2 failed (the person confirms "
                          "set_business_hours, but "
                  "no call is waiting for confirmation)"),
        ("not_evaluated", "not evaluated: the conversation never reached turn 3 (turn 2: the "
                          "person "
                  "confirms set_business_hours, but no call is waiting for confirmation)")]
    assert len(bodies(server)) == 1  # the agent was not asked again
    from dsl.results.report import transcript
    from dsl.store import latest_records

    (d,) = (tmp_path / "runs").iterdir()
    (stored,) = latest_records(d)
    assert transcript(stored, lambda v: v)[-2:] == [
        ["T", 2, "confirm", "set_business_hours", 0],
        ["e", "Turn 2 failed: the person confirms set_business_hours, but no call is "
              "waiting for confirmation"]]


def test_per_turn_checks_see_their_turn_and_final_checks_the_whole_conversation(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [
        {"match": "horario", "replies": [
            {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
            {"text": "Abrimos hasta las 18:00."}]},
        {"match": "reserv", "per_turn": True, "replies": [
            {"tool_calls": [{"name": "book_appointment",
                             "arguments": {"date": "2026-10-06", "time": "15:00"}}]},
            {"text": "Reservado el martes a las 15:00."}]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "two.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [list_business_hours, book_appointment]
        when:
          - say: ¿Cuál es el horario?
            then:
              - calls_only: [list_business_hours]
              - does_not_modify
              - contains: "18:00"
          - say: Quiero reservar el martes a las 15:00.
            then:
              - not_calls: list_business_hours
              - contains: "18:00"
        then:
          - calls_in_order: [list_business_hours, book_appointment]
          - contains: "15:00"
          - not_contains: "18:00"
        runs: 1
        min_pass: 1
        """)
    r = run(tmp_path)
    assert r.exit_code == 1
    (rec,) = records(tmp_path)
    assert [(c["label"], c["status"]) for c in rec["checks"]] == [
        ("turn 1 · calls_only: [\"list_business_hours\"]", "pass"),
        ("turn 1 · does_not_modify", "pass"),
        ('turn 1 · contains: "18:00"', "pass"),
        ('turn 2 · not_calls: "list_business_hours"', "pass"),
        ('turn 2 · contains: "18:00"', "fail"),
        ('calls_in_order: ["list_business_hours", "book_appointment"]', "pass"),
        ('contains: "15:00"', "pass"),
        ('not_contains: "18:00"', "pass")]
    assert rec["reason"] == '1 of 8 checks failed: turn 2 · contains: "18:00"'
    (d,) = (tmp_path / "runs").iterdir()
    summary = json.loads((d / "summary.json").read_text())
    (row,) = summary["scenarios"]
    assert row["failing_checks"] == [{"label": 'turn 2 · contains: "18:00"', "count": 1}]
    assert [c["label"] for c in row["checks"]][3:5] == [
        'turn 2 · not_calls: "list_business_hours"', 'turn 2 · contains: "18:00"']
    junit = (d / "junit.xml").read_text()
    assert "Failing checks: turn 2 · contains: &quot;18:00&quot;" in junit


def test_max_steps_counts_model_calls_per_turn(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    lookup = {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]}
    server.script({"rules": [
        {"match": "uno", "replies": [lookup, {"text": "Hasta las 18:00."}]},
        {"match": "dos", "per_turn": True, "replies": [lookup, {"text": "Sí, 18:00."}]},
        {"match": "tres", "per_turn": True, "replies": [lookup, lookup, lookup]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "steps.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [list_business_hours]
        when: [uno, dos, tres]
        then: [non_empty]
        max_steps: 2
        runs: 1
        min_pass: 1
        """)
    assert run(tmp_path).exit_code == 1
    (rec,) = records(tmp_path)
    assert [t["steps"] for t in rec["turns"]] == [2, 2, 2]  # 4 steps passed, per turn
    assert rec["reason"] == "turn 3: reached max_steps (2 model calls) without a text answer"
    assert rec["steps"] == 6


# ---- history -------------------------------------------------------------------------------


def test_history_is_sent_as_real_openai_messages_and_no_check_counts_its_calls(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script({"rules": [{"match": "¿Y el lunes?", "replies": [
        {"text": "El lunes también, de 09:00 a 18:00."}]}]})
    suite(tmp_path, server.url)
    write(tmp_path / "history.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools: [list_business_hours, set_business_hours]
          history:
            - user: ¿Abren el martes?
            - assistant:
                text: Me fijo.
                calls:
                  - name: list_business_hours
                    returns: {monday: "09:00-18:00", tuesday: "09:00-18:00"}
            - assistant: Sí, el martes de 09:00 a 18:00.
        when: ¿Y el lunes?
        then:
          - not_calls: list_business_hours
          - asks_nothing_to_confirm
          - expect: "count(calls) == 0"
          - grounded
          - contains: "18:00"
        runs: 1
        min_pass: 1
        """)
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (body,) = bodies(server)
    assert body["messages"][1:] == [
        {"role": "user", "content": "¿Abren el martes?"},
        {"role": "assistant", "content": "Me fijo.", "tool_calls": [
            {"id": "history_2_1", "type": "function",
             "function": {"name": "list_business_hours", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "history_2_1",
         "content": '{"monday": "09:00-18:00", "tuesday": "09:00-18:00"}'},
        {"role": "assistant", "content": "Sí, el martes de 09:00 a 18:00."},
        {"role": "user", "content": "¿Y el lunes?"}]
    (rec,) = records(tmp_path)
    assert rec["calls"] == []
    assert rec["history"] == 4
    assert "turns" not in rec


# ---- the simulated user --------------------------------------------------------------------

USER_SCENARIO = """
given:
  at: 2026-09-29T10:00:00-03:00
  system: Secret instructions for the agent only.
  tools: [set_business_hours, list_business_hours]
when:
  user:
    goal: Find out until what time the clinic is open on Tuesday.
    persona: Ana, a patient who writes short messages.
    target: patient
    max_turns: 3
then:
  - goal_reached
  - contains: "18:00"
runs: 1
min_pass: 1
"""


def test_a_simulated_user_talks_until_its_goal_and_never_sees_the_agents_tools(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script({"rules": [
        {"match": "Hola", "replies": [{"text": "¡Hola! ¿En qué te ayudo?"}]},
        {"match": "martes", "replies": [
            {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
            {"text": "El martes atendemos hasta las 18:00."}]}]})
    userver.script({"rules": [
        {"match": "The chat opens", "replies": [{"text": "Hola"}]},
        {"match": "ayudo", "replies": [{"text": "¿Hasta qué hora abren el martes?"}]},
        {"match": "18:00", "replies": [{"text": "GOAL_REACHED"}]}]})
    suite(tmp_path, server.url, userver.url)
    write(tmp_path / "user.yaml", USER_SCENARIO)
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert rec["goal_reached"] is True
    assert [(t["text"], t["simulated"]) for t in rec["turns"]] == [
        ("Hola", True), ("¿Hasta qué hora abren el martes?", True)]
    asked = bodies(userver)
    assert len(asked) == 3
    for body in asked:  # the person never sees the agent's tools, prompt or calls
        assert "tools" not in body
        text = json.dumps(body, ensure_ascii=False)
        assert "Secret instructions" not in text
        assert "list_business_hours" not in text
        assert body["model"] == "user-model"
        assert body["seed"] == 1
        assert body["temperature"] == 0.9
    system = asked[0]["messages"][0]["content"]
    assert "Your goal: Find out until what time the clinic is open on Tuesday." in system
    assert "Who you are: Ana, a patient who writes short messages." in system
    assert "It is now Tuesday 29 September 2026, 10:00 (UTC-03:00)." in system
    assert system.endswith("Once the assistant has given you what your goal needs, write only "
                           "GOAL_REACHED.")
    assert [m["role"] for m in asked[2]["messages"]] == [
        "system", "user", "assistant", "user", "assistant", "user"]
    assert asked[2]["messages"][-1]["content"] == "El martes atendemos hasta las 18:00."


def test_a_simulated_user_that_never_reaches_its_goal_stops_at_max_turns(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script({"default": [{"text": "No sé."}]})
    userver.script({"default": [{"text": "¿Y entonces?"}]})
    suite(tmp_path, server.url, userver.url)
    write(tmp_path / "user.yaml", USER_SCENARIO)
    assert run(tmp_path).exit_code == 1
    (rec,) = records(tmp_path)
    assert rec["goal_reached"] is False
    assert len(rec["turns"]) == 3
    assert len(bodies(userver)) == 4  # three turns, then once more: was the goal reached?
    assert rec["checks"][0]["reason"] == \
        "the simulated user did not say its goal was reached (3 turns)"


def test_the_simulated_users_endpoint_errors_are_endpoint_errors(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script({"default": [{"text": "¡Hola!"}]})
    userver.script({"rules": [{"match": "¡Hola!", "replies": [
        {"status": 503, "body": {"error": "overloaded"}}]}],
        "default": [{"text": "Hola"}]})
    suite(tmp_path, server.url, userver.url)
    write(tmp_path / "user.yaml", USER_SCENARIO)
    r = run(tmp_path)
    assert r.exit_code == 3  # no verdict: never a model failure
    (rec,) = records(tmp_path)
    assert rec["status"] == "error"
    assert rec["error"]["kind"] == "status"
    assert rec["error"]["status"] == 503
    assert rec["error"]["message"].startswith(
        "the simulated user's target 'patient' failed: ")
    assert rec["turns"][0]["text"] == "Hola"  # what happened before is kept


# ---- fake tools that answer by argument ----------------------------------------------------

PATIENTS = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: find_patient
      description: Look a patient up by id.
      input_schema: {type: object, properties: {patient_id: {type: string}}}
      answers:
        - when: {patient_id: P-1}
          returns: {name: Ana Gómez, id: "{{ args.patient_id }}", tags: ["{{ args.patient_id }}-ok"]}
        - when: {patient_id: P-2}
          error: "Patient {{ args.patient_id }} is archived."
{default}when: "{message}"
then:
  - non_empty
runs: 1
min_pass: 1
"""


def patient_run(tmp_path: Path, server: FakeServer, patient: str, default: str = ""
                ) -> tuple[dict[str, Any], str]:
    server.script({"default": [
        {"tool_calls": [{"name": "find_patient", "arguments": {"patient_id": patient}}]},
        {"text": "Listo."}]})
    suite(tmp_path, server.url)
    write(tmp_path / "patient.yaml", PATIENTS.replace("{default}", default)
          .replace("{message}", f"Buscá a {patient}"))
    assert run(tmp_path).exit_code == 0
    (rec,) = records(tmp_path)
    return rec["calls"][0], bodies(server)[1]["messages"][-1]["content"]


def test_a_tool_answers_by_argument_with_templates_inside_its_data(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    call, sent = patient_run(tmp_path, server, "P-1")
    assert sent == '{"name": "Ana Gómez", "id": "P-1", "tags": ["P-1-ok"]}'
    assert call["output"] == sent
    assert "error" not in call


def test_a_call_no_answer_matches_is_an_error_the_model_sees_and_the_attempt_records(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    call, sent = patient_run(tmp_path, server, "P-999")
    assert sent == 'error: no record for these arguments: {"patient_id": "P-999"}'
    assert call["error"] == "no-record"
    assert call["output"] == sent


def test_without_a_match_the_tools_plain_returns_is_the_default(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    call, sent = patient_run(tmp_path, server, "P-999",
                             default="      returns: {found: false}\n")
    assert sent == '{"found": false}'
    assert "error" not in call


def test_an_answer_can_fail_and_a_tool_can_always_fail(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    call, sent = patient_run(tmp_path, server, "P-2")
    assert sent == "error: Patient P-2 is archived."
    assert call["error"] == "tool-error"
    server.script({"default": [
        {"tool_calls": [{"name": "book", "arguments": {"date": "2026-10-06"}}]},
        {"text": "No pude."}]})
    write(tmp_path / "patient.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools:
            - name: book
              description: Book.
              action: create
              error: The booking system is down.
        when: Reservá el martes.
        then:
          - calls: book
          - does_not_modify
        runs: 1
        min_pass: 1
        """)
    assert run(tmp_path, out="again").exit_code == 1
    (rec,) = records(tmp_path, "again")
    assert rec["calls"][0]["output"] == "error: The booking system is down."
    assert rec["calls"][0]["error"] == "tool-error"
    assert rec["checks"][1]["reason"] == \
        'expected no changes; book (create) was executed with date="2026-10-06"'


# ---- python agents hold conversations ------------------------------------------------------

PY_AGENT = '''
def run(env):
    if env.confirmed:
        done = env.confirmed[0]
        assert env.message == "" and env.turn == 2
        assert env.messages[-1]["role"] == "tool"
        assert env.messages[-1]["content"] == done.output
        return "Listo: " + done.output
    assert env.turn == 1 and env.messages[-1] == {"role": "user", "content": env.message}
    held = env.tools["set_business_hours"](day="saturday", hours="closed")
    assert held is None
    return "¿Confirmás?"
'''


def test_a_python_agent_is_called_once_per_turn(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    module = "agent_" + tmp_path.name.replace("-", "_").replace(".", "_")
    targets = {"mine": {"kind": "python", "entry": f"{module}:run"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets))
    write(tmp_path / f"{module}.py", PY_AGENT)
    write(tmp_path / "change.yaml", CHANGE.replace('contains: "Listo"',
                                                   'contains: "Listo: Hours for saturday"'))
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert rec["answer"] == "Listo: Hours for saturday updated."
    assert rec["calls"][0]["decision"] == "confirmed"
    assert [t["answer"] for t in rec["turns"]] == ["¿Confirmás?", rec["answer"]]


# ---- record and replay, resume, early stop, the judge, the report --------------------------


def test_a_conversation_with_a_simulated_user_records_and_replays_offline(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script({"rules": [
        {"match": "Hola", "replies": [{"text": "¡Hola! ¿En qué te ayudo?"}]},
        {"match": "martes", "replies": [{"text": "El martes hasta las 18:00."}]}]})
    userver.script({"rules": [
        {"match": "The chat opens", "replies": [{"text": "Hola"}]},
        {"match": "ayudo", "replies": [{"text": "¿Y el martes?"}]},
        {"match": "18:00", "replies": [{"text": "GOAL_REACHED"}]}]})
    suite(tmp_path, server.url, userver.url)
    write(tmp_path / "user.yaml", USER_SCENARIO.replace("runs: 1\nmin_pass: 1", "runs: 2\n"
                                                        "min_pass: 2"))
    write(tmp_path / "change.yaml", CHANGE)
    server.script({"rules": [*PROPOSE_THEN_DONE["rules"], {"match": "Hola", "replies": [
        {"text": "¡Hola! ¿En qué te ayudo?"}]}, {"match": "martes", "replies": [
            {"text": "El martes hasta las 18:00."}]}]})
    r = run(tmp_path, "--record", "cassette.jsonl")
    assert r.exit_code == 0, r.output
    live = {(x["scenario"], x["run"]): x for x in records(tmp_path)}
    cassette = (tmp_path / "cassette.jsonl").read_text().splitlines()
    models = [json.loads(x)["request"]["model"] for x in cassette[1:]]
    assert models.count("user-model") == 6
    assert models.count("fake-model") == 6
    # replay: nothing is asked of either server
    suite(tmp_path, server.url, userver.url)
    text = (tmp_path / "scenarist.yaml").read_text()
    data = json.loads(text)
    data["targets"]["recorded"] = {"kind": "replay", "cassette": "cassette.jsonl"}
    (tmp_path / "scenarist.yaml").write_text(json.dumps(data))
    server.script({"rules": []})
    userver.script({"rules": []})
    r = run(tmp_path, "--target", "recorded", out="replayed")
    assert r.exit_code == 0, r.output
    assert bodies(server) == []
    assert bodies(userver) == []
    again = {(x["scenario"], x["run"]): x for x in records(tmp_path, "replayed")}
    for key, rec in live.items():
        assert again[key]["turns"] == rec["turns"]
        assert again[key]["status"] == rec["status"] == "pass"
        assert again[key].get("goal_reached") == rec.get("goal_reached")


def test_resume_finishes_a_run_of_conversations(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(PROPOSE_THEN_DONE)
    suite(tmp_path, server.url)
    write(tmp_path / "change.yaml", CHANGE.replace("runs: 1\nmin_pass: 1", "runs: 4\n"
                                                   "min_pass: 3"))
    assert run(tmp_path, "--max-calls", "4", "-j", "1").exit_code in (1, 3)
    (d,) = (tmp_path / "runs").iterdir()
    done = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
    assert len(done) == 2
    r = run_cli("run", "--resume", str(d), cwd=tmp_path)
    assert r.exit_code == 0, r.output
    every = [json.loads(x) for x in (d / "results.jsonl").read_text().splitlines()]
    assert sorted(x["run"] for x in every) == [1, 2, 3, 4]
    assert all(len(x["turns"]) == 2 for x in every)


def test_early_stop_counts_a_conversations_model_calls(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    server.script(PROPOSE_THEN_DONE)
    suite(tmp_path, server.url)
    write(tmp_path / "change.yaml", CHANGE.replace("runs: 1\nmin_pass: 1", "runs: 6\n"
                                                   "min_pass: 2") + "max_steps: 3\n")
    r = run_cli("run", ".", "--out", "runs", "-j", "1", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (d,) = (tmp_path / "runs").iterdir()
    info = json.loads((d / "run.json").read_text())
    assert info["early_stop"]["runs"] == 4
    assert info["early_stop"]["model_calls"] == 4 * 2  # the mean of the 2 turns run: 2 calls
    plan = json.loads((d / "plan.json").read_text())
    assert plan["max_model_calls"] == 6 * 3 * 2  # runs × max_steps × turns


def test_the_judge_sees_the_whole_conversation(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script(PROPOSE_THEN_DONE)
    userver.script({"default": [{"text": json.dumps(
        {"verdict": "pass", "score": 1, "confidence": 0.95, "reason": "ok"})}]})
    suite(tmp_path, server.url, userver.url, judge={"target": "patient", "cache": False})
    write(tmp_path / "change.yaml", CHANGE.replace("then:\n  - calls", "then:\n  - faithful\n"
                                                   "  - calls"))
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (question,) = bodies(userver)
    prompt = question["messages"][-1]["content"]
    assert ("<message>\nThe person: Los sábados cerramos. Cambialo.\nThe assistant: "
            "¿Confirmás que cierro los sábados?\nThe person pressed confirm on "
            "set_business_hours.\n</message>") in prompt
    assert "<answer>\nListo, los sábados quedan cerrados.\n</answer>" in prompt
    assert "Hours for saturday updated." in prompt


def test_the_report_shows_the_conversation_turn_by_turn(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    from dsl.results.report import attempt
    from dsl.store import latest_records

    server.script(PROPOSE_THEN_DONE)
    suite(tmp_path, server.url)
    write(tmp_path / "change.yaml", CHANGE)
    assert run(tmp_path).exit_code == 0
    (d,) = (tmp_path / "runs").iterdir()
    (rec,) = latest_records(d)
    row = attempt(rec, lambda v: v if isinstance(v, str) else json.dumps(v))
    events = [e[:2] if e[0] != "T" else e for e in row[9]]
    assert events == [
        ["s", "Current date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00)."],
        ["T", 1, "say", "Los sábados cerramos. Cambialo.", 0],
        ["u", "Los sábados cerramos. Cambialo."],
        ["a", "¿Confirmás que cierro los sábados?"],
        ["c", "set_business_hours"],
        ["T", 2, "confirm", "set_business_hours", 0],
        ["t", "set_business_hours"],
        ["A", "Listo, los sábados quedan cerrados."]]
    call = next(e for e in row[9] if e[0] == "c")
    assert call[4:] == [0, "", "confirmed"]
    assert [c[5] if len(c) > 5 else None for c in row[10]] == [1, 1, 2, None, None]
    html = (d / "report.html").read_text()
    assert "Checks of the whole conversation" in (
        Path(__file__).parents[2] / "dsl" / "assets" / "report.js").read_text()
    assert "Listo, los sábados quedan cerrados." in html


# ---- the record ----------------------------------------------------------------------------


def test_a_conversations_record_reads_back_and_older_lines_read_as_before() -> None:
    from dsl.errors import RunDirError
    from dsl.model import Call, Turn
    from dsl.store import AttemptRecord, CheckResult, record_from_json
    from dsl.store.records import record_json

    rec = AttemptRecord(
        "s", "t", 1, "pass", "ok", "2026-11-30T10:00:00.000+00:00", "Listo",
        calls=(Call("c1", "set_business_hours", {"day": "saturday"}, "", "done", "update",
                    False, None, 1, "confirmed"),),
        checks=(CheckResult("contains", 'turn 2 · contains: "Listo"', "pass", "ok", 1.0,
                            turn=2),),
        turns=(Turn("say", "Cambialo", "¿Confirmás?", 1, (), 1, 3),
               Turn("confirm", "all", "Listo", 0, (0,), 1, 5, None, True)),
        history=2, goal_reached=True)
    line = record_json(rec)
    assert line["turns"][1] == {"kind": "confirm", "text": "all", "answer": "Listo",
                                "calls": 0, "decided": [0], "steps": 1, "messages": 5,
                                "simulated": True}
    assert record_from_json(json.loads(json.dumps(line))) == rec
    old = {k: v for k, v in line.items() if k not in ("turns", "history", "goal_reached")}
    old["calls"] = [{k: v for k, v in old["calls"][0].items() if k != "decision"}]
    old["checks"] = [{k: v for k, v in old["checks"][0].items() if k != "turn"}]
    back = record_from_json(old)
    assert (back.turns, back.history, back.goal_reached) == ((), 0, None)
    assert back.calls[0].decision is None
    assert back.checks[0].turn is None
    line["turns"][0]["kind"] = "shout"
    with pytest.raises(RunDirError) as caught:
        record_from_json(line)
    assert str(caught.value) == ("the line is not an attempt record: 'turns[0].kind' is "
                                 "'shout', not say, confirm or cancel")


def test_a_turn_sees_its_calls_as_they_stood_when_it_ended() -> None:
    from dsl.model import Call, Turn, turn_calls

    held = Call("c1", "set", {}, "{}", "done", "update", False, None, 1, "confirmed")
    other = Call("c2", "list", {}, "{}", "x", "read", False, None, 2)
    turns = (Turn("say", "a", "?", 1, (), 1, 3), Turn("say", "b", "?", 1, (), 1, 5),
             Turn("confirm", "set", "ok", 0, (0,), 1, 7))
    first = turn_calls((held, other), turns, 0)
    assert first == (msgspec.structs.replace(held, pending=True, output=None, decision=None),)
    assert turn_calls((held, other), turns, 1) == (other,)
    assert turn_calls((held, other), turns, 2) == ()


def test_a_python_agent_talks_with_a_simulated_user(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    module = "agent_" + tmp_path.name.replace("-", "_").replace(".", "_")
    targets = {"mine": {"kind": "python", "entry": f"{module}:run"},
               "patient": {"kind": "openai", "base_url": userver.url, "model": "user-model"}}
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url, targets=targets,
                                                  defaults={"target": "mine"}))
    write(tmp_path / f"{module}.py", '''
import json

def run(env):
    if "martes" in env.message:
        hours = json.loads(env.tools["list_business_hours"]())
        return "El martes, hasta las " + hours["tuesday"].split("-")[1] + "."
    return "Hola, ¿qué día?"
''')
    userver.script({"rules": [
        {"match": "The chat opens", "replies": [{"text": "Hola"}]},
        {"match": "qué día", "replies": [{"text": "El martes"}]},
        {"match": "hasta las", "replies": [{"text": "Gracias. GOAL_REACHED"}]}]})
    write(tmp_path / "user.yaml", USER_SCENARIO.replace('  - contains: "18:00"\n',
                                                        "  - calls: list_business_hours\n"))
    r = run(tmp_path)
    assert r.exit_code == 0, r.output
    (rec,) = records(tmp_path)
    assert rec["goal_reached"] is True
    assert [t["text"] for t in rec["turns"]] == ["Hola", "El martes"]
    assert len(bodies(userver)) == 3


NULL_CONTENT = {"json": {"id": "x", "object": "chat.completion", "model": "user-model",
                         "choices": [{"index": 0, "finish_reason": "stop", "message": {
                             "role": "assistant", "content": None}}]}}


@pytest.mark.parametrize(("reply", "what"), [
    ({"text": ""}, "an empty message"),
    ({"text": "  \n"}, "an empty message"),
    (NULL_CONTENT, "no text (its content was null)"),
    ({"tool_calls": [{"name": "search", "arguments": {}}]}, "only a tool call"),
    ({"text": "GOAL_REACHED"}, "only GOAL_REACHED, before the agent had said anything"),
    ({"text": "GOAL_REACHED."}, "only GOAL_REACHED, before the agent had said anything"),
])
def test_a_simulated_user_that_writes_nothing_usable_is_its_own_error(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str], reply: dict[str, Any], what: str) -> None:
    """Not the agent's failure (before: a conversation of 0 turns, failed as "the answer
    was empty"): an error of its own kind, counted apart, naming the user's target."""
    server.script({"default": [{"text": "¡Hola!"}]})
    userver.script({"rules": [{"match": "The chat opens", "replies": [reply]}]})
    suite(tmp_path, server.url, userver.url)
    write(tmp_path / "user.yaml", USER_SCENARIO)
    r = run(tmp_path)
    assert r.exit_code == 3, r.output  # no verdict: never the agent's failure
    (rec,) = records(tmp_path)
    assert (rec["status"], rec["error"]["kind"]) == ("error", "simulated_user")
    assert rec["error"]["message"] == (
        f"the simulated user's target 'patient' wrote nothing the person could say: {what}")
    assert bodies(server) == []  # the agent was never asked
    assert ("      ! simulated_user ×1: The model that plays the person (the simulated user's "
            "target) wrote nothing the person could say — an empty message, only a tool call, "
            "or GOAL_REACHED before the agent had answered; it says nothing about the model, "
            "so it counts neither as a pass nor as a failure.") in r.output.splitlines()
    row = json.loads((next((tmp_path / "runs").iterdir()) / "summary.json").read_text()
                     )["scenarios"][0]
    assert (row["error_kinds"], row["fails"], row["passes"]) == ({"simulated_user": 1}, 0, 0)


def test_a_simulated_user_that_falls_silent_later_is_its_own_error(
        tmp_path: Path, server: FakeServer, userver: FakeServer,
        cli_env: dict[str, str]) -> None:
    server.script({"default": [{"text": "¡Hola! ¿En qué te ayudo?"}]})
    userver.script({"rules": [
        {"match": "The chat opens", "replies": [{"text": "Hola"}]},
        {"match": "ayudo", "replies": [{"text": ""}]}]})
    suite(tmp_path, server.url, userver.url)
    write(tmp_path / "user.yaml", USER_SCENARIO)
    assert run(tmp_path).exit_code == 3
    (rec,) = records(tmp_path)
    assert rec["error"]["kind"] == "simulated_user"
    assert [t["text"] for t in rec["turns"]] == ["Hola"]  # what happened before is kept
