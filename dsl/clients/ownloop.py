"""Agents that run their own loop — ``kind: http`` (your service, one request per turn) and
``kind: command`` (any program, one process per attempt) — and what they share: the turn
they are told about, the template of what is sent, and the conversation kept around them.

Each attempt gets an unguessable ``session`` id and its own MCP endpoint (``mcp_url``,
dsl/clients/toolserver.py) serving the scenario's fake tools; the calls the agent makes
there are the attempt's calls, in order. Each turn the agent is told a :class:`TurnInput`
(the person's words, the calls the person confirmed or cancelled, the conversation so far
in OpenAI's format) and answers with text, and possibly the calls it holds itself for the
person's confirmation (``pending``: ``[{name, args}]``). A call to a ``confirm: true``
fake tool over MCP is held by Scenarist; a confirm or cancel turn decides held calls as for
every target (:func:`dsl.execution.conversation.settle`).

A target kind gives :class:`OwnLoopAgent` a way to open one attempt's :class:`Session`
(``ask`` once per turn, ``end`` when the attempt ends). ``--record FILE`` writes each
turn's exchange to a cassette (dsl/clients/exchanges.py) that ``kind: replay`` answers
from, offline.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Any, Protocol

from ..compiler.attachments import user_content, wire_messages
from ..compiler.templates import CaseTemplate, is_template, single_name
from ..errors import EndpointError
from ..execution.conversation import converse, settle
from ..execution.loop import LoopEndpointError, LoopState
from ..model import AttemptData, Call, Scenario, Target, Tokens, Turn
from ..targets.base import AgentContext, ChatModel, Reply, RequestSettings
from ..targets.kinds import TEMPLATE_NAMES
from .toolserver import Endpoint, ToolServer


@dataclass(frozen=True, slots=True)
class TurnInput:
    """What the agent is told in one turn (the template names of an http body)."""

    turn: int  # 1, 2, ...
    message: str  # the person's words (empty on a confirm or cancel turn)
    session: str  # the attempt's id: the same for all its turns, never reused
    mcp_url: str  # the attempt's MCP endpoint
    at: str  # the scenario's moment, ISO 8601 with its offset
    seed: int  # the run index
    scenario: str  # the scenario's id
    system: str  # given.system
    messages: list[dict[str, Any]]  # the conversation so far, OpenAI's format
    confirmed: list[dict[str, Any]]  # [{name, args, output}] run at the person's word
    cancelled: list[dict[str, Any]]  # [{name, args}]

    def values(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in TEMPLATE_NAMES}

    def key_values(self) -> dict[str, Any]:
        """What decides the agent's answer (a cassette's key): everything but the session
        and the endpoint, which are new in every attempt."""
        return {k: v for k, v in self.values().items() if k not in ("session", "mcp_url")}


@dataclass(frozen=True, slots=True)
class Answered:
    """The agent's answer to one turn, and the exchange as a cassette keeps it."""

    answer: str
    pending: list[dict[str, Any]]  # calls the agent holds itself: [{name, args}]
    request: Any  # what was sent (an http body; a command's input line)
    reply: Any  # what came back (the JSON reply; the output line)
    mcp: str | None = None  # a replay: how the recorded agent had used its endpoint by then


class Session(Protocol):
    """One attempt's connection to the agent."""

    async def ask(self, turn: TurnInput, tools: Endpoint) -> Answered:
        """The agent's answer to one turn; raise EndpointError when it could not be had.
        The agent's calls arrive at ``tools`` meanwhile."""
        ...

    async def end(self) -> str:
        """The attempt is over: release what it holds; the agent's log (a program's
        standard error), bounded, or empty text."""
        ...


OpenSession = Callable[[Scenario, int, TurnInput], Awaitable[Session]]


# ---- the body template -------------------------------------------------------------------

def exact_name(text: str) -> str | None:
    """The name when ``text`` is exactly one ``{{ name }}`` (it then becomes the value
    itself: a list, a number), else None."""
    return single_name(text)


def render_body(body: Any, values: dict[str, Any]) -> Any:
    """``body`` with each string rendered over ``values``: a string that is exactly one
    ``{{ name }}`` becomes the value itself; any other template string is text."""
    if isinstance(body, str):
        name = exact_name(body)
        if name is not None:
            return values[name]

        return CaseTemplate(body).render(values) if is_template(body) else body
    if isinstance(body, dict):
        return {k: render_body(v, values) for k, v in body.items()}
    if isinstance(body, list):
        return [render_body(v, values) for v in body]
    return body


def value_at(data: Any, path: tuple[str, ...]) -> tuple[bool, Any]:
    """The value at a dotted path in JSON data (a number step indexes a list): (found,
    value)."""
    here = data
    for step in path:
        if isinstance(here, dict) and step in here:
            here = here[step]
        elif isinstance(here, list) and step.isdigit() and int(step) < len(here):
            here = here[int(step)]
        else:
            return False, None
    return True, here


def pending_calls(value: Any, where: str) -> list[dict[str, Any]]:
    """The calls an agent says it holds (``[{name, args}]``), checked; EndpointError
    ('malformed') says what is wrong."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise EndpointError("malformed", f"{where} is not a list of calls "
                                         "([{\"name\": ..., \"args\": {...}}])")
    for i, p in enumerate(value, 1):
        if not isinstance(p, dict) or not isinstance(p.get("name"), str):
            raise EndpointError("malformed", f"call {i} of {where} has no name (each is "
                                             "{\"name\": ..., \"args\": {...}})")
        if not isinstance(p.get("args", {}), dict | type(None)):
            raise EndpointError("malformed", f"the args of call {i} of {where} are not an "
                                             "object")
    return value


def _as_messages(made: list[Call], answer: str) -> list[dict[str, Any]]:
    """A turn in OpenAI's format: the calls that ran with their results, then the answer
    — with the calls held for confirmation, whose results a later turn adds."""
    def wire(calls: list[Call]) -> list[dict[str, Any]]:
        return [{"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.raw_args}} for c in calls]

    ran = [c for c in made if not c.pending]
    held = [c for c in made if c.pending]
    out: list[dict[str, Any]] = []
    if ran:
        out.append({"role": "assistant", "content": None, "tool_calls": wire(ran)})
        out.extend({"role": "tool", "tool_call_id": c.id, "content": c.output} for c in ran)
    if held:
        out.append({"role": "assistant", "content": answer or None, "tool_calls": wire(held)})
    else:
        out.append({"role": "assistant", "content": answer})
    return out


# ---- the attempt -------------------------------------------------------------------------

class Users(Protocol):
    """The models that play simulated users (dsl/clients/open.py's ``SimulatedUsers``)."""

    def open(self, target: Target) -> ChatModel: ...

    async def aclose(self) -> None: ...


class OwnLoopAgent:
    """An agent that runs its own loop: each attempt a :class:`Session`, the scenario's
    fake tools at an MCP endpoint of its own, the person's side played by
    :func:`dsl.execution.conversation.converse`."""

    def __init__(self, target: Target, context: AgentContext, open_session: OpenSession,
                 *, served: bool = True, recorder: Any = None,
                 closing: Callable[[], Awaitable[None]] | None = None) -> None:
        """``served``: the tools are served over MCP (False: a replay, whose calls are
        answered without a server); ``recorder``: an ExchangeRecorder (--record FILE,
        dsl/clients/exchanges.py); ``closing``: what ends with the agent (a client)."""
        self.target = target
        self._closing = closing
        self._recorder = recorder
        self.context = context
        self._open_session = open_session
        self._served = served
        self._server: ToolServer | None = None
        # the models that play simulated users (set by dsl/targets/kinds.py when it opens
        # the agent; None: a conversation with a simulated user is an endpoint error)
        self.users: Users | None = None
        # a replay's simulated users, answered from its cassette (dsl/clients/exchanges.py)
        self.replayed_users: Callable[[RequestSettings], ChatModel] | None = None

    @property
    def recorder(self) -> Any:
        """``--record FILE``'s ExchangeRecorder (None without one)."""
        return self._recorder

    async def _tools(self, scenario: Scenario) -> Endpoint:
        if not self._served:
            return Endpoint(scenario, "", "")
        if self._server is None:
            # why: the clients, only when used
            from . import toolserver

            try:
                self._server = await toolserver.acquire()
            except OSError as exc:
                raise EndpointError("connection", "Scenarist could not serve the fake tools "
                                                  f"over MCP on 127.0.0.1: {exc}") from None
        return self._server.endpoint(scenario)

    async def run(self, scenario: Scenario, run: int) -> AttemptData:
        tools = await self._tools(scenario)
        first = TurnInput(1, "", secrets.token_urlsafe(16), tools.url,
                          scenario.at.isoformat(), run, scenario.id, scenario.system, [], [],
                          [])
        talk = _Talk(self, scenario, run, tools, first)
        started = time.perf_counter()
        goal: bool | None = None
        try:
            talk.session = await self._open_session(scenario, run, first)
            if not scenario.conversation:
                await talk.turn("say", scenario.message, False)
            else:
                goal = await converse(scenario, run, talk,
                                      self.users.open if self.users is not None else None,
                                      talk.said)
        except EndpointError as exc:
            tools.close()
            talk.stderr = await talk.end()
            raise talk.failed(exc) from None
        except BaseException:
            tools.close()
            await talk.end()
            raise
        tools.close()
        talk.stderr = await talk.end()
        turns = tuple(talk.turns)
        if scenario.conversation:
            answer = turns[-1].answer if turns else ""
            failure = next((f"turn {n}: {t.failure}" for n, t in enumerate(turns, 1)
                            if t.failure), None)
            message = next((t.text for t in reversed(turns) if t.kind == "say"),
                           scenario.message)
        else:
            answer, failure, message, turns = turns[0].answer, None, scenario.message, ()
        return AttemptData(
            message=message, answer=answer, calls=tuple(talk.calls), at=scenario.at,
            tools=scenario.tools, steps=talk.steps,
            latency_ms=(time.perf_counter() - started) * 1000, tokens=Tokens(),
            messages=tuple(talk.messages), failure=failure,
            failure_kind="nothing_to_confirm" if failure else None, turns=turns,
            history=scenario.history_calls, history_messages=len(scenario.history),
            goal_reached=goal, user_messages=tuple(talk.said),
            attachments=scenario.all_attachments, stderr=talk.stderr,
            world=tools.world.run() if tools.world is not None else None,
            mcp=tools.used if self._served or talk.replayed_use else None,
            tokens_known=False)

    async def aclose(self) -> None:
        if self.users is not None:
            await self.users.aclose()
        if self._closing is not None:
            await self._closing()
        if self._recorder is not None:
            self._recorder.close()
        if self._server is not None:
            # why: the clients, only when used
            from . import toolserver

            server, self._server = self._server, None
            await toolserver.release(server)


@dataclass(slots=True)
class _Talk:
    """One attempt's conversation with an own-loop agent (the ``Talk`` that
    :func:`~dsl.execution.conversation.converse` plays the person against)."""

    agent: OwnLoopAgent
    scenario: Scenario
    run: int
    tools: Endpoint
    first: TurnInput
    session: Session | None = None
    calls: list[Call] = field(default_factory=list)
    messages: list[dict[str, Any]] = field(default_factory=list)
    turns: list[Turn] = field(default_factory=list)
    steps: int = 0
    stderr: str = ""
    done: int = 0  # the endpoint's calls taken into the attempt so far
    replayed_use: bool = False  # a replay's cassette said how the agent used its endpoint
    said: list[str] = field(default_factory=list)  # what a simulated user wrote

    def __post_init__(self) -> None:
        self.messages = [dict(m) for m in self.scenario.history]

    async def turn(self, kind: str, text: str, simulated: bool,
                   pick: Collection[int] | None = None) -> Turn:
        scenario = self.scenario
        settled = settle(self.calls, kind, text, scenario, pick, self.tools.world)
        self.calls = settled.calls
        self.messages.extend(settled.results)
        first_call = len(self.calls)
        if settled.failure is not None:
            return self._turn(kind, text, "", first_call, settled.decided, 0, simulated,
                              settled.failure)
        if kind == "say":
            before = any(t.kind == "say" for t in self.turns)
            index = len(self.turns) if not simulated else len(scenario.turns)
            attachments = scenario.attachments_for(index, before)
            self.messages.append({"role": "user", "content": user_content(text, attachments)})
        decided = [self.calls[i] for i in settled.decided]
        attached = {a.sha256: a for a in scenario.all_attachments}
        number = len(self.turns) + 1
        asked = TurnInput(
            number, text if kind == "say" else "", self.first.session, self.first.mcp_url,
            self.first.at, self.run, scenario.id, scenario.system,
            [dict(m) for m in wire_messages(self.messages, attached)],
            [{"name": c.name, "args": c.args, "output": c.output} for c in decided
             if c.decision == "confirmed"],
            [{"name": c.name, "args": c.args} for c in decided if c.decision == "cancelled"])
        tools = self.tools
        tools.step = number
        done = self.done = len(tools.calls)
        assert self.session is not None  # opened before the first turn
        started = time.perf_counter()
        answered = await self.session.ask(asked, tools)
        self.replayed_use = self.replayed_use or answered.mcp is not None
        self.steps += 1
        self.agent.context.on_reply(Reply({}, None, Tokens(),
                                          (time.perf_counter() - started) * 1000))
        made = list(tools.calls[done:])
        self.done = len(tools.calls)
        if self.agent._recorder is not None:
            self.agent._recorder.write(asked, answered, made, tools.used)
        n = len(tools.calls)
        for k, p in enumerate(answered.pending, 1):
            spec = scenario.tool(str(p.get("name")))
            args = p.get("args") or {}
            made.append(Call(f"held_{n + k}", str(p.get("name")), args,
                             json.dumps(args, ensure_ascii=False), None,
                             spec.action if spec else None, True,
                             None if spec else "unknown-tool", number))
        self.calls.extend(made)
        self.messages.extend(_as_messages(made, answered.answer))
        return self._turn(kind, text, answered.answer, first_call, settled.decided, 1,
                          simulated)

    def _turn(self, kind: str, text: str, answer: str, first_call: int,
              decided: tuple[int, ...], steps: int, simulated: bool,
              failure: str | None = None) -> Turn:
        turn = Turn(kind, text, answer, len(self.calls) - first_call, decided, steps,
                    len(self.messages), failure, simulated)
        self.turns.append(turn)
        if self.tools.world is not None:
            self.tools.world.mark()  # what this turn's own checks see of the world
        return turn

    async def end(self) -> str:
        session, self.session = self.session, None
        return await session.end() if session is not None else ""

    def failed(self, exc: EndpointError) -> EndpointError:
        """The endpoint error, with what the attempt had done (the calls made in the turn
        that failed included) and the agent's log."""
        made = self.tools.calls[self.done:]
        progress = LoopState(messages=self.messages, calls=[*self.calls, *made],
                             steps=self.steps, turns=self.turns, stderr=self.stderr,
                             user_messages=self.said, tokens_known=False)
        return LoopEndpointError(exc, progress)
