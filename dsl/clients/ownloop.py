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

import asyncio
import dataclasses
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
from ..model import AttemptData, Call, Retried, Scenario, Target, Tokens, Turn, TurnKind
from ..settings import Retry
from ..targets.base import AgentContext, ChatModel, Reply, RequestSettings
from ..targets.kinds import TEMPLATE_NAMES
from .openai import MAX_RETRY_AFTER_S, backoff_seconds
from .toolserver import Endpoint, ToolServer, received


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
    retries: int = 0  # tries that never reached the agent, sent again
    mcp: str | None = None  # a replay: how the recorded agent had used its endpoint by then
    # how long the agent took to answer: measured live (a cassette keeps it); a replay's is
    # the recording's, which the attempt's latency_ms counts instead of the replay's time
    latency_ms: float | None = None


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

OWN_HELD = "held_"  # the id of a call the agent holds itself (its reply's pending) starts so


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


def _wire(calls: list[Call]) -> list[dict[str, Any]]:
    return [{"id": c.id, "type": "function",
             "function": {"name": c.name, "arguments": c.raw_args}} for c in calls]


def _as_messages(made: list[Call], held: list[Call], answer: str) -> list[dict[str, Any]]:
    """A turn in OpenAI's format, as the agent saw it: the calls it made at its endpoint,
    in order, each with what it got back (the held text for a call held for the person's
    confirmation), then its answer — with the calls it holds itself (``held``), whose
    results a later turn adds."""
    out: list[dict[str, Any]] = []
    if made:
        out.append({"role": "assistant", "content": None, "tool_calls": _wire(made)})
        out.extend({"role": "tool", "tool_call_id": c.id, "content": received(c)}
                    for c in made)
    if held:
        out.append({"role": "assistant", "content": answer or None, "tool_calls": _wire(held)})
    else:
        out.append({"role": "assistant", "content": answer})
    return out


def _decided_messages(calls: list[Call], decided: tuple[int, ...],
                      results: list[dict[str, Any]], own: set[str]) -> list[dict[str, Any]]:
    """What a turn that decided held calls adds to the conversation, in OpenAI's format:
    the results of the calls the agent held itself (``own``: their ids), which answer its
    last message; then the calls held at its endpoint — whose tool message already said
    they were held — run now at the person's word: the call again with its result (what
    it answered once confirmed, or that it was cancelled or not confirmed)."""
    mine = [m for m in results if m.get("tool_call_id") in own]
    ran = [calls[i] for i in decided if calls[i].id not in own]
    out = list(mine)
    if ran:
        out.append({"role": "assistant", "content": None, "tool_calls": _wire(ran)})
        out.extend({"role": "tool", "tool_call_id": c.id, "content": c.output} for c in ran)
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
                 closing: Callable[[], Awaitable[None]] | None = None,
                 retry: Retry | None = None) -> None:
        """``served``: the tools are served over MCP (False: a replay, whose calls are
        answered without a server); ``recorder``: an ExchangeRecorder (--record FILE,
        dsl/clients/exchanges.py); ``closing``: what ends with the agent (a client);
        ``retry``: the target's retry policy, when its ``turns`` may be sent again
        (:meth:`retry_wait`)."""
        self.target = target
        self.retry = retry
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

    def retry_wait(self, exc: EndpointError, tries: int) -> float | None:
        """The seconds to wait before a turn whose ``tries``-th try failed with ``exc`` is
        sent again, or None: it is not. A turn is sent again only when the target says
        ``retry: {turns: true}``, tries are left, the agent may have acted (a try that
        provably never reached it was already sent again by the client), and the failure
        is one worth retrying: a status of ``retry_on_status``, a timeout, a lost
        connection."""
        r = self.retry
        if r is None or not r.turns or tries >= r.max_attempts or not exc.maybe_processed:
            return None
        worth = exc.kind in ("timeout", "connection") or (
            exc.kind == "status" and exc.status in r.retry_on_status)
        if not worth:
            return None
        if exc.retry_after is not None:
            return exc.retry_after if exc.retry_after <= MAX_RETRY_AFTER_S else None
        return backoff_seconds(tries - 1, r.backoff_ms)

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
            latency_ms=(time.perf_counter() - started) * 1000 + talk.recorded_ms,
            tokens=Tokens(),
            messages=tuple(talk.messages), failure=failure,
            failure_kind="nothing_to_confirm" if failure else None, turns=turns,
            history=scenario.history_calls, history_messages=len(scenario.history),
            goal_reached=goal, user_messages=tuple(talk.said),
            attachments=scenario.all_attachments, stderr=talk.stderr,
            world=tools.world.run() if tools.world is not None else None,
            retries=talk.retries, retried=tuple(talk.retried),
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
    retries: int = 0  # requests sent again (turns, and tries that never reached the agent)
    retried: list[Retried] = field(default_factory=list)  # the turns sent again, and why
    recorded_ms: float = 0.0  # a replay: the time the recorded turns took (Answered)

    def __post_init__(self) -> None:
        self.messages = [dict(m) for m in self.scenario.history]

    @property
    def world(self) -> Any:
        return self.tools.world

    async def turn(self, kind: TurnKind, text: str, simulated: bool,
                   pick: Collection[int] | None = None) -> Turn:
        scenario = self.scenario
        settled = settle(self.calls, kind, text, scenario, pick, self.tools.world)
        own = {c.id for c in self.calls if c.pending and c.id.startswith(OWN_HELD)}
        self.calls = settled.calls
        self.messages.extend(_decided_messages(self.calls, settled.decided, settled.results,
                                               own))
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
        tools = self.tools
        asked = TurnInput(
            number, text if kind == "say" else "", self.first.session, tools.url,
            self.first.at, self.run, scenario.id, scenario.system,
            [dict(m) for m in wire_messages(self.messages, attached)],
            [{"name": c.name, "args": c.args, "output": c.output} for c in decided
             if c.decision == "confirmed"],
            [{"name": c.name, "args": c.args} for c in decided if c.decision == "cancelled"])
        tools.step = number
        answered = await self._ask(asked)
        self.replayed_use = self.replayed_use or answered.mcp is not None
        self.steps += 1
        made = list(tools.calls[self.done:])
        self.done = len(tools.calls)
        if self.agent._recorder is not None:
            self.agent._recorder.write(asked, answered, made, tools.used, scenario)
        n = len(tools.calls)
        held: list[Call] = []
        for k, p in enumerate(answered.pending, 1):
            spec = scenario.tool(str(p.get("name")))
            args = p.get("args") or {}
            held.append(Call(f"{OWN_HELD}{n + k}", str(p.get("name")), args,
                             json.dumps(args, ensure_ascii=False), None,
                             spec.action if spec else None, True,
                             None if spec else "unknown-tool", number))
        self.calls.extend(made)
        self.calls.extend(held)
        self.messages.extend(_as_messages(made, held, answered.answer))
        return self._turn(kind, text, answered.answer, first_call, settled.decided, 1,
                          simulated)

    async def _ask(self, asked: TurnInput) -> Answered:
        """The agent's answer to one turn, the turn sent again as the target's retry policy
        allows (:meth:`OwnLoopAgent.retry_wait`): before each new try the failed one's
        calls are discarded, the world is put back as it was when the turn started, and
        the endpoint moves to a new path (the new try is told its ``mcp_url``), so nothing
        the failed try did — or still does — counts."""
        tools = self.tools
        world = tools.world
        retry = self.agent.retry
        kept = world.snapshot() if world is not None and retry is not None and retry.turns \
            else None
        tries = 1
        assert self.session is not None  # opened before the first turn
        while True:
            self.done = len(tools.calls)
            started = time.perf_counter()
            try:
                answered = await self.session.ask(asked, tools)
            except EndpointError as exc:
                self.retries += exc.retries
                wait = self.agent.retry_wait(exc, tries)
                if wait is None:
                    raise
                gone = tools.discard(self.done)
                if world is not None and kept is not None:
                    world.restore(kept)
                tools.renew()
                asked = dataclasses.replace(asked, mcp_url=tools.url)
                self.retried.append(Retried(
                    asked.turn, exc.kind, exc.message,
                    tuple({"name": c.name, "args": c.args, "output": received(c)}
                          for c in gone)))
                self.retries += 1
                tries += 1
                await asyncio.sleep(wait)
                continue
            self.retries += answered.retries
            took = (time.perf_counter() - started) * 1000
            if answered.latency_ms is not None:  # a replay: the recording's time
                self.recorded_ms += answered.latency_ms
            else:
                answered = dataclasses.replace(answered, latency_ms=round(took, 1))
            self.agent.context.on_reply(Reply({}, None, Tokens(), took))
            return answered

    def _turn(self, kind: TurnKind, text: str, answer: str, first_call: int,
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
                             user_messages=self.said, retries=self.retries,
                             retried=self.retried, tokens_known=False)
        return LoopEndpointError(exc, progress)
