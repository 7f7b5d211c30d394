"""conversation.build: chat messages into turns, steps and calls — how held calls are read
from a log's shape (docs/import.md), how results are paired with calls."""

from __future__ import annotations

import datetime as dt
from typing import Any

from dsl.importing.conversation import (
    Conversation,
    Message,
    Place,
    ToolCall,
    build,
    stated_moment,
)

HERE = Place("log.jsonl", 1)


def user(text: str) -> Message:
    return Message("user", text, HERE)


def asks(text: str, *calls: tuple[str, str, dict[str, Any]]) -> Message:
    return Message("assistant", text, HERE,
                   tuple(ToolCall(i, n, a, "") for i, n, a in calls))


def result(call_id: str, text: str, name: str = "") -> Message:
    return Message("tool", text, HERE, call_id=call_id, name=name)


def conversation(*messages: Message) -> Conversation:
    built = build(messages, [], source="log.jsonl", key="lines 1–3", place=HERE, name="x")
    assert built.conversation is not None, built.problems
    return built.conversation


BOOK = ("c1", "book", {"day": "sat"})


def shape(c: Conversation) -> list[tuple[str, str, int]]:
    return [(t.kind, t.text, len(t.steps)) for t in c.turns]


def test_a_call_made_with_a_question_and_then_run_waited_for_the_person() -> None:
    c = conversation(user("Reservá el sábado"), asks("¿Reservo el sábado?", BOOK),
                     result("c1", "Booked."), asks("Listo."))
    assert shape(c) == [("say", "Reservá el sábado", 1), ("confirm", "book", 1)]
    (call,) = c.calls
    assert (call.held, call.decision, call.result) == (True, "confirmed", "Booked.")


def test_a_held_call_whose_result_says_it_was_cancelled() -> None:
    c = conversation(user("Reservá el sábado"), asks("¿Reservo el sábado?", BOOK),
                     result("c1", "The person cancelled this call: it was not run."),
                     asks("De acuerdo, no reservo."))
    assert shape(c) == [("say", "Reservá el sábado", 1), ("cancel", "book", 1)]
    assert c.calls[0].decision == "cancelled"


def test_the_person_answering_between_the_call_and_its_result() -> None:
    c = conversation(user("Reservá el sábado"), asks("", BOOK), user("sí, dale"),
                     result("c1", "Booked."), asks("Listo."))
    assert shape(c) == [("say", "Reservá el sábado", 1), ("confirm", "book", 1)]
    assert c.turns[1].note == "sí, dale"


def test_a_call_run_at_once_is_one_turn() -> None:
    c = conversation(user("¿Abren?"), asks("", ("c1", "hours", {})),
                     result("c1", "09-18"), asks("Sí, de 9 a 18."))
    assert shape(c) == [("say", "¿Abren?", 2)]
    assert not c.calls[0].held
    assert c.answer == "Sí, de 9 a 18."


def test_a_tool_also_called_at_once_is_not_held() -> None:
    c = conversation(user("Reservá"), asks("¿Reservo?", BOOK), result("c1", "Booked."),
                     asks("", ("c2", "book", {"day": "sun"})), result("c2", "Booked."),
                     asks("Listo, los dos."))
    assert shape(c) == [("say", "Reservá", 3)]
    assert not any(call.held for call in c.calls)


def test_messages_of_the_person_in_a_row_are_one_turn() -> None:
    c = conversation(user("Hola"), user("¿abren?"), asks("Sí."), user("Gracias"), asks("¡De nada!"))
    assert shape(c) == [("say", "Hola\n\n¿abren?", 1), ("say", "Gracias", 1)]


def test_what_the_agent_said_first_is_history() -> None:
    c = conversation(asks("¡Hola! ¿En qué te ayudo?"), user("¿Abren?"), asks("Sí."))
    assert [m.role for m in c.history] == ["assistant"]
    assert shape(c) == [("say", "¿Abren?", 1)]


def test_results_without_ids_are_paired_in_order_by_tool() -> None:
    c = conversation(user("x"), asks("", ("", "a", {}), ("", "b", {})),
                     result("", "from b", name="b"), result("", "from a"), asks("ok"))
    assert [(call.name, call.result) for call in c.calls] == [("a", "from a"),
                                                              ("b", "from b")]


def test_a_call_without_result_and_a_conversation_without_the_person() -> None:
    built = build([user("x"), asks("", ("c9", "a", {}))], [], source="log.jsonl", key="k",
                  place=HERE, name="x")
    assert [str(p) for p in built.problems] == [
        "log.jsonl:1: the call c9 to a has no result in the log: its fake tool answers an "
        "error that says so"]
    nobody = build([Message("system", "s", HERE), asks("hola")], [], source="log.jsonl",
                   key="k", place=Place("log.jsonl", 4), name="x")
    assert nobody.conversation is None
    assert [str(p) for p in nobody.problems] == [
        "log.jsonl:4: a conversation with no message from the person (no user message): no "
        "scenario was written for it"]


def test_a_run_says_what_was_held_exactly() -> None:
    built = build([user("Reservá"), asks("", BOOK), result("c1", "Booked."), asks("Listo.")],
                  [], source="r", key="k", place=HERE, name="x",
                  decisions={"c1": "confirmed"})
    assert built.conversation is not None
    assert shape(built.conversation) == [("say", "Reservá", 1), ("confirm", "book", 1)]


def test_the_moment_a_scenarist_prompt_states() -> None:
    c = conversation(Message("system", "Sos amable.\n\nCurrent date and time: Tuesday 29 "
                                       "September 2026, 10:00 (UTC-03:00).", HERE),
                     user("hola"), asks("hola"))
    stated = stated_moment(c)
    assert stated.system == "Sos amable."
    assert stated.moment is not None
    assert stated.moment.at == dt.datetime(2026, 9, 29, 10, 0,
                                           tzinfo=dt.timezone(dt.timedelta(hours=-3)))
    assert stated_moment(conversation(user("hola"), asks("hola"))).moment is None
