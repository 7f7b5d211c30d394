"""The agent loop for model targets: system prompt and message in, tool calls answered
from the fake tools (dsl/compiler/faketools.py), until the model answers in text or ``max_steps``
model calls are spent.

What the person says is one user message (:func:`user_message`), with the files they attach
(``given.attachments`` with the first thing they say, a turn's with that turn) as parts
that refer to each file by its hash; each request sends them as image and text content
parts (:func:`dsl.compiler.attachments.wire_messages`), while the attempt keeps the references.

A call whose arguments are not JSON, or that names a tool the scenario does not have, is
recorded and answered with an error as its tool result — the model may recover; checks
decide. A call to a ``confirm: true`` tool is held as *pending* and ends the turn. A
conversation (``when`` as a list of turns, or a simulated user) is played by
:func:`dsl.execution.conversation.converse`, one turn at a time: ``max_steps`` bounds each turn's
model calls, and the first turn that fails ends the conversation. Earlier history
(``given.history``) comes after the system prompt. An endpoint failure raises
:class:`~dsl.errors.EndpointError` out of the loop, with the transcript so far attached as
``progress``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Sequence
from typing import Any

import msgspec

from ..compiler.attachments import user_content, wire_messages
from ..compiler.faketools import take as take_call
from ..compiler.templates import (
    DEFAULT_SYSTEM_PROMPT,
    compile_template,
    default_system,
    render_system,
)
from ..errors import EndpointError
from ..model import (
    Attachment,
    AttemptData,
    Call,
    Retried,
    Scenario,
    Tokens,
    ToolSpec,
    Turn,
    TurnKind,
    ending,
)
from ..targets.base import ChatModel, Unreadable, read_reply_json
from .conversation import OpenUser, converse, settle


class LoopState(msgspec.Struct):
    """The attempt so far (kept when an endpoint fails half-way)."""

    messages: list[dict[str, Any]] = msgspec.field(default_factory=list)
    calls: list[Call] = msgspec.field(default_factory=list)
    tokens: Tokens = Tokens()
    steps: int = 0
    retries: int = 0
    model_calls: list[dict[str, Any]] = msgspec.field(default_factory=list)
    turns: list[Turn] = msgspec.field(default_factory=list)
    # why the attempt failed before its checks decided (the first failure ends it):
    # model_output, max_steps, nothing_to_confirm — dsl/errors.py explains each in words
    failure_kind: str | None = None
    stderr: str = ""  # an agent program's standard error (kind: command), bounded
    tokens_known: bool = True  # False: the agent does not say what it used (http, command)
    user_messages: list[str] = msgspec.field(default_factory=list)  # what a simulated user wrote
    retried: list[Retried] = msgspec.field(default_factory=list)  # own-loop turns sent again, why
    recorded_ms: float = 0.0  # the model's time a replay's cassette recorded (Reply.recorded)


class LoopEndpointError(EndpointError):
    def __init__(self, cause: EndpointError, progress: LoopState) -> None:
        super().__init__(cause.kind, cause.message, status=cause.status, retries=cause.retries)
        self.progress = progress


_TEMPLATES: dict[str, Any] = {}
_SYSTEM_TEXT: dict[tuple[str, str, str], str] = {}


def system_message(model: ChatModel, scenario: Scenario) -> str:
    """The system prompt for a scenario (rendered once per prompt, scenario and moment)."""
    source = model.settings.system_prompt
    key = (source, scenario.system, scenario.at.isoformat())
    text = _SYSTEM_TEXT.get(key)
    if text is None and source == DEFAULT_SYSTEM_PROMPT:
        text = _SYSTEM_TEXT[key] = default_system(scenario.system, scenario.at)
    if text is None:
        template = _TEMPLATES.get(source)
        if template is None:
            template = _TEMPLATES[source] = compile_template(source)
        try:
            text = render_system(template, scenario.system, scenario.at)
        except Exception as exc:  # the author's template passed a limit at run time
            raise EndpointError("template", f"the target's system_prompt could not be "
                                            f"rendered: {exc}") from None
        _SYSTEM_TEXT[key] = text
    return text


class _Chat:
    """One attempt's conversation with the model: the messages so far, and one turn at a
    time (:meth:`turn`); each turn's model calls are bounded by ``max_steps``."""

    def __init__(self, model: ChatModel, scenario: Scenario, run: int, p: LoopState) -> None:
        self.model = model
        self.scenario = scenario
        self.run = run
        self.p = p
        self.tools_by_name = {t.name: t for t in scenario.tools}
        self.openai_tools = [t.openai() for t in scenario.tools]
        self.attached = {a.sha256: a for a in scenario.all_attachments}
        self.world = open_world(scenario)  # this attempt's own copy (None: no world)

    async def respond(self) -> tuple[str, str | None]:
        """Ask the model until it answers in text (or holds a call for confirmation, or
        spends ``max_steps``): the answer, and why the turn failed."""
        p = self.p
        scenario = self.scenario
        settings = self.model.settings
        tools_by_name = self.tools_by_name
        steps = 0
        while True:
            # the attachments travel as content parts; the messages kept refer to them
            body: dict[str, Any] = {"model": settings.model,
                                    "messages": wire_messages(p.messages, self.attached)}
            if self.openai_tools:
                body["tools"] = self.openai_tools
            body["seed"] = self.run
            if settings.temperature is not None:
                body["temperature"] = settings.temperature
            body.update(settings.params)
            try:
                reply = await self.model.complete(body)
            except EndpointError as exc:
                p.retries += exc.retries
                if exc.kind != "model_output":
                    raise LoopEndpointError(exc, p) from exc
                p.steps += 1  # the model was called and answered badly: its failure
                p.model_calls.append({"latency_ms": None, "finish_reason": "unparsable",
                                      "tokens": 0, "retries": 0})
                p.failure_kind = exc.kind
                return "", exc.message
            p.steps += 1
            steps += 1
            if reply.recorded:
                p.recorded_ms += reply.latency_ms
            p.tokens = p.tokens + reply.tokens
            p.retries += reply.retries
            p.model_calls.append({"latency_ms": round(reply.latency_ms, 1),
                                  "finish_reason": reply.finish_reason,
                                  "tokens": reply.tokens.total, "retries": reply.retries})
            msg = reply.message
            content = msg.get("content")
            text = content if isinstance(content, str) else _text_parts(content)
            tool_calls = msg.get("tool_calls") or []
            if not tool_calls:
                p.messages = [*p.messages, {"role": "assistant", "content": text}]
                as_text = tool_call_in_text(text, tools_by_name)
                if as_text is not None:
                    raise LoopEndpointError(EndpointError(
                        "tool_call_as_text",
                        f"the endpoint returned a call to {as_text} as plain text instead of "
                        "a tool call: the server is not parsing this model's tool calls "
                        "(check its chat template or tool-call parser)"), p)
                return text, None
            assistant: dict[str, Any] = {"role": "assistant", "content": text or None,
                                         "tool_calls": []}
            results: list[dict[str, Any]] = []
            pending = False
            for i, tc in enumerate(tool_calls):
                call, result = _handle_call(tc, i, p.steps, tools_by_name, scenario,
                                            self.world)
                assistant["tool_calls"].append(_wire_call(call))
                p.calls.append(call)
                if call.pending:
                    pending = True
                elif result is not None:
                    results.append({"role": "tool", "tool_call_id": call.id,
                                    "content": result})
            p.messages = [*p.messages, assistant, *results]
            if pending:
                return text, None
            if steps >= scenario.max_steps:
                p.failure_kind = "max_steps"
                return "", (f"reached max_steps ({scenario.max_steps} model calls) without a "
                            "text answer")

    @property
    def calls(self) -> list[Call]:
        return self.p.calls

    async def turn(self, kind: TurnKind, text: str, simulated: bool,
                   pick: Collection[int] | None = None) -> Turn:
        """One turn of a conversation: the person says ``text``, or confirms or cancels
        the held calls to the tool ``text`` (``pick``: exactly these); then the model
        answers."""
        p = self.p
        first_call, first_step = len(p.calls), p.steps
        settled = settle(p.calls, kind, text, self.scenario, pick, self.world)
        p.calls = settled.calls
        p.messages = [*p.messages, *settled.results]
        answer, failure = "", settled.failure
        if failure is not None:
            p.failure_kind = "nothing_to_confirm"
        else:
            if kind == "say":
                said = any(t.kind == "say" for t in p.turns)
                attachments = self.scenario.attachments_for(len(p.turns) if not simulated
                                                            else len(self.scenario.turns),
                                                            said)
                p.messages = [*p.messages, user_message(text, attachments)]
            answer, failure = await self.respond()
        turn = Turn(kind, text, answer, len(p.calls) - first_call, settled.decided,
                    p.steps - first_step, len(p.messages), failure, simulated)
        p.turns.append(turn)
        if self.world is not None:
            self.world.mark()  # what this turn's own checks see of the world
        return turn


async def run_loop(model: ChatModel, scenario: Scenario, run: int,
                   open_user: OpenUser | None = None) -> AttemptData:
    """One attempt of ``scenario`` against ``model``, seeded with the run index.
    ``open_user`` gives the model that plays a simulated user."""
    started = time.perf_counter()
    p = LoopState()
    p.messages = [{"role": "system", "content": system_message(model, scenario)},
                  *map(dict, scenario.history)]
    chat = _Chat(model, scenario, run, p)
    goal: bool | None = None
    if not scenario.conversation:  # one message, one answer
        p.messages.append(user_message(scenario.message, scenario.attachments))
        answer, failure = await chat.respond()
        message = scenario.message
    else:
        try:
            goal = await converse(scenario, run, chat, open_user, p.user_messages)
        except LoopEndpointError:
            raise
        except EndpointError as exc:  # the simulated user's endpoint failed
            raise LoopEndpointError(exc, p) from exc
        answer, failure, message = ending(p.turns, scenario.message)
    return AttemptData(
        message=message,
        answer=answer,
        calls=tuple(p.calls),
        at=scenario.at,
        tools=scenario.tools,
        steps=p.steps,
        latency_ms=(time.perf_counter() - started) * 1000 + p.recorded_ms,
        tokens=p.tokens,
        messages=tuple(p.messages),
        failure=failure,
        failure_kind=p.failure_kind if failure else None,
        retries=p.retries,
        model_calls=tuple(p.model_calls),
        turns=tuple(p.turns),
        history=scenario.history_calls,
        history_messages=len(scenario.history),
        goal_reached=goal,
        user_messages=tuple(p.user_messages),
        attachments=scenario.all_attachments,
        world=chat.world.run() if chat.world is not None else None,
    )


def open_world(scenario: Scenario) -> Any:
    """A fresh copy of the scenario's world for one attempt (None when it has none): a
    :class:`dsl.compiler.world.World`, imported only by a scenario with a world."""
    if not scenario.world:
        return None
    # why: the world, only for a suite with one; run or recheck load this module without it
    from ..compiler.world import World

    return World(scenario.world)


def user_message(text: str, attachments: Sequence[Attachment] = ()) -> dict[str, Any]:
    """What the person says, as the loop keeps it: the text, and a part per attachment
    that refers to it by hash (:func:`dsl.compiler.attachments.wire_messages` turns those into the
    image and text parts each request sends). One message, in one-message scenarios and in
    every turn of a conversation alike."""
    return {"role": "user", "content": user_content(text, attachments)}


class LoopAgent:
    """A model endpoint under test: each attempt is :func:`run_loop` over the model.
    ``users`` opens the models that play simulated users (dsl/targets/kinds.py)."""

    def __init__(self, model: ChatModel, users: Any = None) -> None:
        self.model = model
        self.users = users

    async def run(self, scenario: Scenario, run: int) -> AttemptData:
        return await run_loop(self.model, scenario, run,
                              self.users.open if self.users is not None else None)

    async def aclose(self) -> None:
        await self.model.aclose()
        if self.users is not None:
            await self.users.aclose()


def tool_call_in_text(text: str, tools: dict[str, ToolSpec]) -> str | None:
    """The tool's name when ``text`` is a tool call written out as text (a JSON object with
    the name of one of the scenario's tools and its arguments, possibly in a ```json fence
    or <tool_call> tags) — what servers without a tool-call parser return."""
    t = text.strip()
    if not t or not tools:
        return None
    for start, end in (("<tool_call>", "</tool_call>"), ("```json", "```"), ("```", "```")):
        if t.startswith(start):
            t = t[len(start):]
            cut = t.rfind(end)
            t = (t[:cut] if cut >= 0 else t).strip()
            break
    if not (t.startswith("{") and t.endswith("}")):
        return None
    try:
        data = json.loads(t)
    except (ValueError, RecursionError):
        return None
    if not isinstance(data, dict):
        return None
    inner = data.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else data
    name = fn.get("name")
    has_args = any(k in fn for k in ("arguments", "parameters", "args"))
    if isinstance(name, str) and name in tools and has_args:
        return name
    return None


def _text_parts(content: Any) -> str:
    """Content given as a list of text parts (OpenAI's newer format) → plain text. The
    reply's shape was checked when it was read (targets.base.parse_completion)."""
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def _wire_call(call: Call) -> dict[str, Any]:
    """The tool call as it goes back to the model in the next request."""
    return {"id": call.id, "type": "function",
            "function": {"name": call.name, "arguments": call.raw_args}}


def _handle_call(tc: Any, index: int, step: int, tools: dict[str, ToolSpec],
                 scenario: Scenario, world: Any = None) -> tuple[Call, str | None]:
    fn = tc.get("function") if isinstance(tc, dict) else None
    fn = fn if isinstance(fn, dict) else {}
    name = str(fn.get("name") or "")
    call_id = str((tc.get("id") if isinstance(tc, dict) else None) or f"call_{step}_{index}")
    raw = fn.get("arguments")
    args: Any
    bad: str | None
    if raw is None:
        raw_text, args, bad = "{}", {}, None
    elif isinstance(raw, str):
        raw_text = raw
        try:
            args, bad = (read_reply_json(raw) if raw.strip() else {}), None
        except Unreadable as exc:  # not JSON, or too deep
            args, bad = None, exc.detail
    else:  # some servers send the arguments as an object
        raw_text, args, bad = json.dumps(raw, ensure_ascii=False), raw, None
    tool = tools.get(name)
    if tool is not None and bad is not None:
        out = f"error: the arguments are not valid JSON ({bad}). Call {name} again with a " \
              "JSON object."
        return Call(call_id, name, None, raw_text, out, tool.action, False, "invalid-json",
                    step), out
    call = take_call(tools, name, args, raw_text, call_id, step, scenario.at, world)
    return call, call.output
