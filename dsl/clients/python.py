"""``kind: python`` — your own agent, as a Python function.

``entry: module:function`` names a callable (sync or async) that receives an :class:`Env`
and returns the answer: a string, or ``{"answer": str, "pending": [{"name", "args"}]}``
when the agent held calls for confirmation itself. The module is imported with the suite's
folder on ``sys.path``. A sync agent runs in a worker thread so it never blocks the others.

The agent calls the scenario's fake tools through ``env.tools[name](**args)``: each call is
recorded (checks see it exactly as with a model target) and returns the tool's text; a call
to a ``confirm: true`` tool is recorded as pending, not executed, and returns ``None``.
``env.targets[name]`` are ready clients for the suite's model targets.

A conversation calls the function once per turn, with a new :class:`Env` each time:
``env.turn`` (1, 2, ...), ``env.message`` (what the person said; empty when they pressed
confirm or cancel), ``env.attachments`` (the files sent with it: ``path``, ``kind``,
``mime_type``, ``label``, ``content`` bytes), ``env.messages`` (the conversation so far in
OpenAI's format, without a system prompt: ``given.history``, the earlier turns, then this
turn's message — attachments as image and text content parts — or tool results),
``env.confirmed`` and ``env.cancelled`` (the held calls the person confirmed — Scenarist
has run them, their ``output`` is the fake tool's result — or cancelled in this
turn). The tools, their record and the model clients last the whole conversation. A
one-message scenario is one such call, with ``env.turn == 1``.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import importlib
import inspect
import json
import sys
import threading
import time
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..compiler.attachments import user_content, wire_messages
from ..compiler.faketools import take
from ..errors import EndpointError, InputError
from ..execution.conversation import converse, settle
from ..execution.loop import open_world
from ..model import (
    Attachment,
    AttemptData,
    Call,
    Scenario,
    Target,
    Tokens,
    Turn,
    TurnKind,
    ending,
)
from ..settings import PythonSettings
from ..targets.base import AgentContext, ChatModel, Metered, Reply


@dataclass(slots=True)
class _Record:
    calls: list[Call] = field(default_factory=list)
    tokens: Tokens = field(default_factory=Tokens)
    steps: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    world: Any = None  # the attempt's world (dsl/compiler/world.py), None without one


class Tool:
    """A scenario's fake tool, callable by the agent: ``env.tools["book"](date="...")``."""

    def __init__(self, spec: Any, scenario: Scenario, record: _Record) -> None:
        self.spec = spec
        self._scenario = scenario
        self._record = record
        self.name: str = spec.name
        self.description: str = spec.description
        self.input_schema: Mapping[str, Any] = spec.input_schema

    def __call__(self, **args: Any) -> str | None:
        with self._record.lock:
            n = len(self._record.calls)
            call = take({self.name: self.spec}, self.name, args,
                        json.dumps(args, ensure_ascii=False), f"call_{n}",
                        self._record.steps or 1, self._scenario.at, self._record.world)
            self._record.calls.append(call)
            return call.output


class ModelClient:
    """A suite model target, ready for an agent: ``await env.targets["local"].chat(...)``."""

    def __init__(self, opener: Callable[[], ChatModel], record: _Record, seed: int,
                 on_reply: Callable[[Reply], None]) -> None:
        self._opener = opener
        self._record = record
        self._seed = seed
        self._on_reply = on_reply

    @property
    def _model(self) -> ChatModel:
        return self._opener()

    @property
    def model(self) -> str:
        """The model name this target sends."""
        return self._model.settings.model

    async def chat(self, messages: list[dict[str, Any]], *, tools: list[dict[str, Any]] | None
                   = None, **params: Any) -> dict[str, Any]:
        """One chat completion; returns the assistant message (OpenAI format)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages, "seed": self._seed}
        if tools:
            body["tools"] = tools
        if self._model.settings.temperature is not None:
            body["temperature"] = self._model.settings.temperature
        body.update(self._model.settings.params)
        body.update(params)
        reply = await self._model.complete(body)
        self._on_reply(reply)
        with self._record.lock:
            self._record.steps += 1
            self._record.tokens = self._record.tokens + reply.tokens
        return reply.message


@dataclass(frozen=True, slots=True)
class Decided:
    """A held call the person confirmed or cancelled in this turn."""

    name: str
    args: Any
    output: str | None  # the fake tool's result when confirmed (Scenarist ran it)


@dataclass(slots=True)
class Env:
    """What your agent gets for one attempt (in a conversation: for one turn)."""

    message: str  # what the person said (empty on a confirm or cancel turn)
    at: dt.datetime  # the moment, in the scenario's own UTC offset
    system: str  # the scenario's given.system (may be empty)
    tools: dict[str, Tool]
    seed: int  # the run index: 1, 2, ...
    targets: dict[str, ModelClient]
    scenario: str  # the scenario's id
    _started: float = field(default_factory=time.monotonic)
    turn: int = 1
    messages: list[dict[str, Any]] = field(default_factory=list)  # the conversation so far
    confirmed: list[Decided] = field(default_factory=list)
    cancelled: list[Decided] = field(default_factory=list)
    attachments: tuple[Attachment, ...] = ()  # the files the person sent with this message

    def clock(self) -> dt.datetime:
        """The scenario's moment plus the time elapsed since the attempt started."""
        return self.at + dt.timedelta(seconds=time.monotonic() - self._started)

    def openai_tools(self) -> list[dict[str, Any]]:
        """The tools in OpenAI's format, to pass to a model."""
        return [t.spec.openai() for t in self.tools.values()]


def load_entry(entry: str, root: Path) -> Callable[..., Any]:
    module_name, _, func_name = entry.partition(":")
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        raise EndpointError("agent", f"cannot import {module_name} (from {root}): "
                                     f"{type(exc).__name__}: {exc}") from None
    func = getattr(module, func_name, None)
    if not callable(func):
        raise EndpointError("agent", f"{module_name} has no function {func_name}")
    return func  # type: ignore[no-any-return]


class PythonAgent:
    """Runs one attempt of a scenario through the user's agent."""

    def __init__(self, target: Target, context: AgentContext,
                 models: Mapping[str, Callable[[], ChatModel]]) -> None:
        """``models``: an opener for each of the suite's model targets, by name."""
        self.target = target
        self.root = context.suite_root
        self._func: Callable[..., Any] | None = None
        self._load_error: EndpointError | None = None
        self._models: dict[str, ChatModel] = {}
        self._targets = dict(models)
        self._on_reply = context.on_reply

    def _entry(self) -> Callable[..., Any]:
        if self._load_error is not None:
            raise self._load_error
        if self._func is None:
            try:
                self._func = load_entry(self.target.settings(PythonSettings).entry, self.root)
            except EndpointError as exc:
                self._load_error = exc
                raise
        return self._func

    def _open(self, name: str) -> ChatModel:
        model = self._models.get(name)
        if model is None:
            try:
                model = self._models[name] = self._targets[name]()
            except InputError as exc:
                raise EndpointError("agent", exc.diagnostics[0].message) from None
        return model

    def _clients(self, record: _Record, seed: int) -> dict[str, ModelClient]:
        return {name: ModelClient(lambda name=name: self._open(name), record, seed,  # type: ignore[misc]
                                  self._on_reply)
                for name in self._targets}

    async def run(self, scenario: Scenario, run: int) -> AttemptData:
        func = self._entry()
        talk = _Conversation(func, scenario, run, self._clients)
        started = time.perf_counter()
        goal: bool | None = None
        said: list[str] = []
        if not scenario.conversation:
            await talk.turn("say", scenario.message, False)
            turns: tuple[Turn, ...] = ()
            answer, failure, message = talk.turns[0].answer, None, scenario.message
        else:
            goal = await converse(scenario, run, talk, self._user_model, said)
            turns = tuple(talk.turns)
            answer, failure, message = ending(turns, scenario.message)
        record = talk.record
        return AttemptData(
            message=message,
            answer=answer,
            calls=tuple(talk.calls),
            at=scenario.at,
            tools=scenario.tools,
            steps=record.steps,
            latency_ms=(time.perf_counter() - started) * 1000,
            tokens=record.tokens,
            messages=tuple(talk.messages),
            failure=failure,
            # a python agent's turn fails only when there is nothing to confirm or cancel
            failure_kind="nothing_to_confirm" if failure else None,
            turns=turns,
            history=scenario.history_calls,
            history_messages=len(scenario.history),
            goal_reached=goal,
            user_messages=tuple(said),
            attachments=scenario.all_attachments,
            world=record.world.run() if record.world is not None else None,
        )

    def _user_model(self, target: Target) -> ChatModel:
        """The model that plays a simulated user (a suite model target)."""
        if target.name not in self._targets:
            raise EndpointError("agent", f"the simulated user's target '{target.name}' is "
                                         "not a model target of the suite")
        return Metered(self._open(target.name), self._on_reply)

    async def aclose(self) -> None:
        for m in self._models.values():
            await m.aclose()


class _Conversation:
    """One attempt of a python agent: the function called once per turn, the calls and
    the OpenAI-format messages kept across turns."""

    def __init__(self, func: Callable[..., Any], scenario: Scenario, run: int,
                 clients: Callable[[_Record, int], dict[str, ModelClient]]) -> None:
        self.func = func
        self.scenario = scenario
        self.run = run
        self.record = _Record()
        if scenario.world:
            self.record.world = open_world(scenario)
        self.tools = {t.name: Tool(t, scenario, self.record) for t in scenario.tools}
        self.targets = clients(self.record, run)
        self.calls: list[Call] = []
        self.messages: list[dict[str, Any]] = [dict(m) for m in scenario.history]
        self.turns: list[Turn] = []
        self.attached = {a.sha256: a for a in scenario.all_attachments}

    @property
    def world(self) -> Any:
        return self.record.world

    async def turn(self, kind: TurnKind, text: str, simulated: bool,
                   pick: Collection[int] | None = None) -> Turn:
        scenario = self.scenario
        settled = settle(self.calls, kind, text, scenario, pick, self.record.world)
        self.calls = settled.calls
        self.messages.extend(settled.results)
        first_call, first_step = len(self.calls), self.record.steps
        if settled.failure is not None:
            return self._turn(kind, text, "", first_call, settled, first_step, simulated,
                              settled.failure)
        attachments: tuple[Attachment, ...] = ()
        if kind == "say":
            before = any(t.kind == "say" for t in self.turns)
            index = len(self.turns) if not simulated else len(scenario.turns)
            attachments = scenario.attachments_for(index, before)
            self.messages.append({"role": "user", "content": user_content(text, attachments)})
        decided = [self.calls[i] for i in settled.decided]
        env = Env(
            message=text if kind == "say" else "", at=scenario.at, system=scenario.system,
            tools=self.tools, seed=self.run, targets=self.targets, scenario=scenario.id,
            turn=len(self.turns) + 1,
            messages=[dict(m) for m in wire_messages(self.messages, self.attached)],
            attachments=attachments,
            confirmed=[Decided(c.name, c.args, c.output) for c in decided
                       if c.decision == "confirmed"],
            cancelled=[Decided(c.name, c.args, None) for c in decided
                       if c.decision == "cancelled"])
        with self.record.lock:
            done = len(self.record.calls)
        try:
            if inspect.iscoroutinefunction(self.func):
                result = await self.func(env)
            else:
                result = await _in_daemon_thread(self.func, env)
        except EndpointError:
            raise
        except asyncio.CancelledError:
            raise  # the attempt's timeout, or Ctrl-C: not the agent's doing
        except (Exception, SystemExit, KeyboardInterrupt) as exc:
            # sys.exit() or KeyboardInterrupt inside the agent end its attempt, not the run
            said = f": {exc}" if str(exc) else ""
            raise EndpointError("agent", f"the agent raised {type(exc).__name__}{said}"
                                         f"{_where(exc)}") from None
        answer, pending = _result(result)
        with self.record.lock:
            made = list(self.record.calls[done:])
        step = self.record.steps or 1
        n = len(self.record.calls)
        for k, p in enumerate(pending):
            spec = scenario.tool(str(p.get("name")))
            args = p.get("args") or {}
            made.append(Call(f"call_{n + k}", str(p.get("name")), args,
                             json.dumps(args, ensure_ascii=False), None,
                             spec.action if spec else None, True,
                             None if spec else "unknown-tool", step))
        if pending:
            with self.record.lock:
                self.record.calls.extend(made[len(made) - len(pending):])
        self.calls.extend(made)
        if made:
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.raw_args}} for c in made]})
            self.messages.extend({"role": "tool", "tool_call_id": c.id, "content": c.output}
                                 for c in made if c.output is not None)
        self.messages.append({"role": "assistant", "content": answer})
        return self._turn(kind, text, answer, first_call, settled, first_step, simulated)

    def _turn(self, kind: TurnKind, text: str, answer: str, first_call: int, settled: Any,
              first_step: int, simulated: bool, failure: str | None = None) -> Turn:
        turn = Turn(kind, text, answer, len(self.calls) - first_call, settled.decided,
                    self.record.steps - first_step, len(self.messages), failure, simulated)
        self.turns.append(turn)
        if self.record.world is not None:
            self.record.world.mark()  # what this turn's own checks see of the world
        return turn


async def _in_daemon_thread(func: Callable[..., Any], env: Env) -> Any:
    """Call a sync agent in a thread of its own, a daemon: an agent that hangs past
    ``attempt_timeout_ms`` is abandoned and never keeps the process alive once the run
    ends (asyncio.to_thread's pool would wait for it at exit)."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[Any] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not future.done():
            if ok:
                future.set_result(value)
            else:
                future.set_exception(value)

    def work() -> None:
        try:
            value, ok = func(env), True
        except BaseException as exc:  # handed to the attempt, whatever it is
            value, ok = exc, False
        with contextlib.suppress(RuntimeError):  # the loop closed: nobody waits anymore
            loop.call_soon_threadsafe(settle, ok, value)

    threading.Thread(target=work, name=f"agent {env.scenario} #{env.seed}",
                     daemon=True).start()
    return await future


def _result(result: Any) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(result, str):
        return result, []
    if isinstance(result, dict) and isinstance(result.get("answer", ""), str):
        pending = result.get("pending") or []
        if isinstance(pending, list) and all(isinstance(p, dict) for p in pending):
            return result.get("answer", ""), pending
    raise EndpointError("agent", "the agent must return the answer as text, or "
                                 "{'answer': text, 'pending': [{'name': ..., 'args': {...}}]}; "
                                 f"it returned {type(result).__name__}")


def _where(exc: BaseException) -> str:
    tb = exc.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return ""
    code = last.tb_frame.f_code
    return f" (at {Path(code.co_filename).name}:{last.tb_lineno} in {code.co_name})"
