"""The agent loop (dsl/execution/loop.py), function by function: a scripted model object
answers in-process, so each test sees exactly the requests the loop built and the attempt
it made of the replies. The same loop over HTTP is in tests/execution/test_loop.py."""

from __future__ import annotations

import asyncio
import base64
import copy
from pathlib import Path
from typing import Any

import pytest

from dsl.compiler.compile import compile_document
from dsl.compiler.templates import DEFAULT_SYSTEM_PROMPT
from dsl.errors import Collector, EndpointError
from dsl.execution.loop import (
    LoopAgent,
    LoopEndpointError,
    run_loop,
    system_message,
    tool_call_in_text,
    user_message,
)
from dsl.model import Call, Scenario, Tokens, Turn, ending
from dsl.source.load import load_text
from dsl.targets.base import Reply, RequestSettings

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 24

SCENARIO = """\
id: hours
given:
  at: 2026-09-29T10:00:00-03:00
  system: Sos la recepción de la clínica.
  tools:
    - name: list_business_hours
      description: The opening hours, by day.
      returns: {tuesday: "09:00-18:00"}
    - name: set_business_hours
      description: Change one day's hours.
      input_schema: {type: object, properties: {day: {type: string}}}
      confirm: true
      returns: {day: "{{ args.day }}", updated: true}
when: ¿Hasta qué hora abren hoy?
then:
  - non_empty
max_steps: 3
"""

CONVERSATION = """\
id: close
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: set_business_hours
      description: Change one day's hours.
      confirm: true
      returns: Saturday closed.
when:
  - say: Los sábados cerramos.
  - confirm: set_business_hours
  - say: Gracias.
then:
  - non_empty
"""


def scenario(text: str, root: Path) -> Scenario:
    diags = Collector()
    compiled = compile_document(load_text(text, str(root / "s.yaml")), None, root, diags)
    assert compiled is not None, diags.diagnostics
    return compiled


class Scripted:
    """A ChatModel that answers from a list, in order (an exception is raised), and keeps
    a copy of every request body it was sent."""

    def __init__(self, *replies: Reply | EndpointError, prompt: str = DEFAULT_SYSTEM_PROMPT,
                 params: dict[str, Any] | None = None) -> None:
        self.settings = RequestSettings("m-1", 0.2, params or {}, prompt)
        self.replies = list(replies)
        self.bodies: list[dict[str, Any]] = []
        self.closed = False

    async def complete(self, body: dict[str, Any]) -> Reply:
        self.bodies.append(copy.deepcopy(body))
        reply = self.replies.pop(0)
        if isinstance(reply, EndpointError):
            raise reply
        return reply

    async def aclose(self) -> None:
        self.closed = True


def says(text: str, retries: int = 0) -> Reply:
    return Reply({"role": "assistant", "content": text}, "stop", Tokens(10, 2), 12.34,
                 retries)


def calls(*made: tuple[str, Any], cid: str | None = "c1") -> Reply:
    tool_calls = [{"id": cid, "type": "function",
                   "function": {"name": name, "arguments": args}} for name, args in made]
    return Reply({"role": "assistant", "content": None, "tool_calls": tool_calls},
                 "tool_calls", Tokens(20, 5), 3.0)


def attempt(model: Scripted, s: Scenario, run: int = 1) -> Any:
    return asyncio.run(run_loop(model, s, run))


def test_one_message_one_answer_and_the_request_it_sent(tmp_path: Path) -> None:
    s = scenario(SCENARIO, tmp_path)
    model = Scripted(says("Hasta las 18:00."), params={"top_p": 0.9})
    data = attempt(model, s, run=4)
    assert (data.message, data.answer, data.failure, data.failure_kind) == (
        "¿Hasta qué hora abren hoy?", "Hasta las 18:00.", None, None)
    assert (data.steps, data.tokens, data.calls, data.turns) == (1, Tokens(10, 2), (), ())
    assert data.model_calls == ({"latency_ms": 12.3, "finish_reason": "stop", "tokens": 12,
                                 "retries": 0},)
    (body,) = model.bodies
    assert body["model"] == "m-1"
    assert (body["seed"], body["temperature"], body["top_p"]) == (4, 0.2, 0.9)
    assert [t["function"]["name"] for t in body["tools"]] == ["list_business_hours",
                                                              "set_business_hours"]
    assert body["messages"] == [
        {"role": "system", "content": system_message(model, s)},
        {"role": "user", "content": "¿Hasta qué hora abren hoy?"}]
    assert data.messages[-1] == {"role": "assistant", "content": "Hasta las 18:00."}


def test_a_tool_call_is_answered_by_the_fake_tool_and_sent_back(tmp_path: Path) -> None:
    s = scenario(SCENARIO, tmp_path)
    model = Scripted(calls(("list_business_hours", "{}")), says("Hasta las 18:00."))
    data = attempt(model, s)
    (call,) = data.calls
    assert call == Call("c1", "list_business_hours", {}, "{}", '{"tuesday": "09:00-18:00"}',
                        "read", False, None, 1)
    assert (data.steps, data.tokens, data.answer) == (2, Tokens(30, 7), "Hasta las 18:00.")
    second = model.bodies[1]["messages"]
    assert second[-2] == {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "list_business_hours", "arguments": "{}"}}]}
    assert second[-1] == {"role": "tool", "tool_call_id": "c1",
                          "content": '{"tuesday": "09:00-18:00"}'}


@pytest.mark.parametrize(("made", "error", "told"), [
    (("list_business_hours", "{not json"), "invalid-json",
     "error: the arguments are not valid JSON (Expecting property name enclosed in double "
     "quotes: line 1 column 2 (char 1)). Call list_business_hours again with a JSON object."),
    (("book", "{}"), "unknown-tool",
     "error: there is no tool named 'book'. The tools are: list_business_hours, "
     "set_business_hours."),
])
def test_a_call_that_cannot_run_is_recorded_and_the_model_told(
        tmp_path: Path, made: tuple[str, str], error: str, told: str) -> None:
    model = Scripted(calls(made), says("Perdón."))
    data = attempt(model, scenario(SCENARIO, tmp_path))
    (call,) = data.calls
    assert (call.name, call.raw_args, call.error) == (made[0], made[1], error)
    assert call.output == told
    assert model.bodies[1]["messages"][-1]["content"] == call.output
    assert data.answer == "Perdón."


def test_arguments_sent_as_an_object_and_a_call_without_an_id(tmp_path: Path) -> None:
    model = Scripted(calls(("list_business_hours", {"day": "martes"}), cid=None), says("Ok."))
    (call,) = attempt(model, scenario(SCENARIO, tmp_path)).calls
    assert (call.id, call.args, call.raw_args) == ("call_1_0", {"day": "martes"},
                                                   '{"day": "martes"}')


def test_a_call_to_a_confirm_tool_is_held_and_ends_the_turn(tmp_path: Path) -> None:
    model = Scripted(calls(("set_business_hours", '{"day": "saturday"}')))
    data = attempt(model, scenario(SCENARIO, tmp_path))
    (call,) = data.calls
    assert (call.pending, call.output, call.args) == (True, None, {"day": "saturday"})
    assert (data.steps, data.answer, data.failure) == (1, "", None)
    assert data.messages[-1]["tool_calls"][0]["id"] == "c1"  # no tool result: it waits


def test_max_steps_fails_the_attempt_in_words(tmp_path: Path) -> None:
    model = Scripted(*[calls(("list_business_hours", "{}"))] * 3)
    data = attempt(model, scenario(SCENARIO, tmp_path))
    assert (data.steps, len(data.calls), data.answer) == (3, 3, "")
    assert data.failure == "reached max_steps (3 model calls) without a text answer"
    assert data.failure_kind == "max_steps"


def test_unreadable_model_output_is_the_models_failure(tmp_path: Path) -> None:
    model = Scripted(EndpointError("model_output", "the reply is not JSON", retries=2))
    data = attempt(model, scenario(SCENARIO, tmp_path))
    assert (data.failure, data.failure_kind, data.steps, data.retries) == (
        "the reply is not JSON", "model_output", 1, 2)
    assert data.model_calls == ({"latency_ms": None, "finish_reason": "unparsable",
                                 "tokens": 0, "retries": 0},)


def test_an_endpoint_failure_raises_with_the_attempt_so_far(tmp_path: Path) -> None:
    model = Scripted(calls(("list_business_hours", "{}")),
                     EndpointError("timeout", "no answer in 5 s", retries=1))
    with pytest.raises(LoopEndpointError) as caught:
        attempt(model, scenario(SCENARIO, tmp_path))
    e = caught.value
    assert (e.kind, e.message, e.retries) == ("timeout", "no answer in 5 s", 1)
    assert (e.progress.steps, e.progress.retries) == (1, 1)
    assert [c.name for c in e.progress.calls] == ["list_business_hours"]
    assert e.progress.messages[-1]["role"] == "tool"


def test_a_tool_call_written_as_text_is_the_endpoints_error(tmp_path: Path) -> None:
    text = '<tool_call>{"name": "list_business_hours", "arguments": {}}</tool_call>'
    with pytest.raises(LoopEndpointError) as caught:
        attempt(Scripted(says(text)), scenario(SCENARIO, tmp_path))
    assert caught.value.kind == "tool_call_as_text"
    assert caught.value.message.startswith("the endpoint returned a call to "
                                           "list_business_hours as plain text")


TOOLS = {"list_business_hours": object()}


@pytest.mark.parametrize(("text", "found"), [
    ('{"name": "list_business_hours", "arguments": {}}', "list_business_hours"),
    ('```json\n{"name": "list_business_hours", "parameters": {"day": "x"}}\n```',
     "list_business_hours"),
    ('<tool_call>{"function": {"name": "list_business_hours", "args": {}}}</tool_call>',
     "list_business_hours"),
    ('{"name": "list_business_hours"}', None),  # no arguments: a JSON answer
    ('{"name": "book", "arguments": {}}', None),  # not a tool of the scenario
    ("Abrimos hasta las 18:00.", None),
    ('{"name": "list_business_hours", "arguments": }', None),
    ("[1, 2]", None),
])
def test_tool_call_in_text(text: str, found: str | None) -> None:
    assert tool_call_in_text(text, TOOLS) == found  # type: ignore[arg-type]
    assert tool_call_in_text(text, {}) is None


def test_content_given_as_text_parts_is_read_as_text(tmp_path: Path) -> None:
    reply = Reply({"role": "assistant", "content": [{"type": "text", "text": "Hasta "},
                                                    {"type": "text", "text": "las 18."}]},
                  "stop", Tokens(1, 1), 1.0)
    assert attempt(Scripted(reply), scenario(SCENARIO, tmp_path)).answer == "Hasta las 18."


def test_system_message_default_custom_and_broken(tmp_path: Path) -> None:
    s = scenario(SCENARIO, tmp_path)
    now = "Tuesday 29 September 2026, 10:00 (UTC-03:00)"
    assert system_message(Scripted(), s) == (f"Sos la recepción de la clínica.\n\nCurrent "
                                             f"date and time: {now}.")
    custom = Scripted(prompt="{{ system }} | {{ now }}")
    assert system_message(custom, s) == f"Sos la recepción de la clínica. | {now}"
    broken = Scripted(prompt="{{ 1 // 0 }}")
    with pytest.raises(EndpointError) as caught:
        system_message(broken, s)
    assert (caught.value.kind, caught.value.message) == (
        "template", "the target's system_prompt could not be rendered: integer division or "
                    "modulo by zero")


def test_user_message_refers_to_attachments_and_the_request_sends_them(
        tmp_path: Path) -> None:
    (tmp_path / "receipt.png").write_bytes(PNG)
    text = SCENARIO.replace("  system:", "  attachments: [{path: receipt.png, kind: image}]\n"
                                         "  system:")
    s = scenario(text, tmp_path)
    (a,) = s.attachments
    kept = user_message("Mirá", s.attachments)
    assert kept == {"role": "user", "content": [
        {"type": "text", "text": "Mirá"}, {"type": "attachment", **a.ref()}]}
    assert user_message("Hola") == {"role": "user", "content": "Hola"}
    model = Scripted(says("Veo el recibo."))
    data = attempt(model, s)
    sent = model.bodies[0]["messages"][1]["content"]
    assert sent[0] == {"type": "text", "text": "¿Hasta qué hora abren hoy?"}
    url = sent[1]["image_url"]["url"]
    assert base64.b64decode(url.split(",", 1)[1]) == PNG
    assert data.messages[1]["content"][1]["type"] == "attachment"  # the record: no bytes


def test_a_conversation_turn_by_turn(tmp_path: Path) -> None:
    s = scenario(CONVERSATION, tmp_path)
    model = Scripted(calls(("set_business_hours", '{"day": "saturday"}')),
                     says("Listo, cerrado los sábados."), says("De nada."))
    data = attempt(model, s)
    assert [(t.kind, t.text, t.answer, t.calls, t.decided, t.steps) for t in data.turns] == [
        ("say", "Los sábados cerramos.", "", 1, (), 1),
        ("confirm", "set_business_hours", "Listo, cerrado los sábados.", 0, (0,), 1),
        ("say", "Gracias.", "De nada.", 0, (), 1)]
    (call,) = data.calls
    assert (call.pending, call.decision, call.output) == (False, "confirmed", "Saturday closed.")
    assert (data.answer, data.message, data.failure) == ("De nada.", "Gracias.", None)
    confirmed = model.bodies[1]["messages"][-1]
    assert confirmed == {"role": "tool", "tool_call_id": "c1", "content": "Saturday closed."}


def test_a_confirm_with_nothing_held_fails_the_conversation_there(tmp_path: Path) -> None:
    model = Scripted(says("¿Querés que lo cambie?"))
    data = attempt(model, scenario(CONVERSATION, tmp_path))
    assert [t.kind for t in data.turns] == ["say", "confirm"]  # the third is not played
    assert data.failure == ("turn 2: the person confirms set_business_hours, but no call is "
                            "waiting for confirmation")
    assert data.failure_kind == "nothing_to_confirm"
    assert (data.answer, data.message, data.steps) == ("", "Los sábados cerramos.", 1)


def test_ending_of_turns() -> None:
    def turn(kind: str, text: str, answer: str, failure: str | None = None) -> Turn:
        return Turn(kind, text, answer, 0, (), 1, 2, failure)

    assert ending([], "Hola") == ("", None, "Hola")
    turns = [turn("say", "a", "A"), turn("confirm", "t", "T", "nothing held"),
             turn("say", "b", "B", "late")]
    assert ending(turns, "x") == ("B", "turn 2: nothing held", "b")
    assert ending(tuple(turns[1:2]), "first") == ("T", "turn 1: nothing held", "first")


def test_loop_agent_runs_the_loop_and_closes_what_it_opened(tmp_path: Path) -> None:
    class Users:
        closed = False

        def open(self, target: Any) -> Any:
            raise AssertionError("no simulated user in this scenario")

        async def aclose(self) -> None:
            self.closed = True

    model, users = Scripted(says("Hola.")), Users()
    agent = LoopAgent(model, users)
    data = asyncio.run(agent.run(scenario(SCENARIO, tmp_path), 2))
    assert (data.answer, model.bodies[0]["seed"]) == ("Hola.", 2)
    asyncio.run(agent.aclose())
    assert (model.closed, users.closed) == (True, True)


def test_the_history_comes_after_the_system_prompt(tmp_path: Path) -> None:
    text = SCENARIO.replace("when:", "  history:\n    - user: Hola\n    - assistant: Buen día."
                                     "\nwhen:")
    model = Scripted(says("Hasta las 18."))
    data = attempt(model, scenario(text, tmp_path))
    roles = [(m["role"], m["content"]) for m in model.bodies[0]["messages"][1:]]
    assert roles == [("user", "Hola"), ("assistant", "Buen día."),
                     ("user", "¿Hasta qué hora abren hoy?")]
    assert data.history_messages == 2
    assert data.messages[1:3] == ({"role": "user", "content": "Hola"},
                                  {"role": "assistant", "content": "Buen día."})
