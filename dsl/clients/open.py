"""Opening a target: the one table (:data:`OPENERS`) that says how each ``kind:`` of
``scenarist.yaml`` is reached when it runs.

What a kind *is* — its settings, schema, compile, description — is in
``dsl/targets/kinds.py`` (``KINDS``), which the compiler reads; how it is *opened* is here,
beside the clients that talk to it, so that compiling a suite imports none of them. Every
kind opens an :class:`~dsl.targets.base.Agent` (one attempt at a time:
``run(scenario, run_index) -> AttemptData``); kinds that are model endpoints also open a
:class:`~dsl.targets.base.ChatModel`, which the judge, the simulated user and python agents
use. :data:`CLIENTS` is what the pipeline hands the run stage
(:class:`dsl.targets.base.Clients`): the run opens its targets through it and imports no
client itself.

Adding a kind: its entry in ``KINDS`` (dsl/targets/kinds.py), its entry in
:data:`OPENERS` here, and the module that talks to it in this folder
(``tests/targets/test_kinds_in_one_place.py`` checks that both tables name the same kinds).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from ..errors import Diagnostic, EndpointError, InputError, RunDirError
from ..execution.loop import LoopAgent
from ..model import Target
from ..settings import ReplaySettings
from ..targets.base import Agent, AgentContext, ChatModel, Metered
from ..targets.cassette import Answering, Recorder, ReplayModel
from ..targets.kinds import is_model, kind_of, request_settings
from .openai import OpenAIModel

if TYPE_CHECKING:
    from .ownloop import OwnLoopAgent

OpenModel = Callable[[Target, int, Callable[[], None] | None], ChatModel]


class Opener(msgspec.Struct, frozen=True):
    """How one kind's targets are opened: as the agent a run plays attempts against, and,
    for a model endpoint, as the model the judge, simulated users and python agents ask."""

    agent: Callable[[Target, AgentContext], Agent]
    model: OpenModel | None = None


def open_model(target: Target, max_connections: int = 4,
               on_throttle: Callable[[], None] | None = None) -> ChatModel:
    """The endpoint client of a model target. Raises InputError when it cannot be opened
    (a missing cassette), ValueError for a kind that is not a model."""
    opener = OPENERS[kind_of(target).name].model
    if opener is None:
        raise ValueError(f"{target.kind} targets are not model endpoints")
    return opener(target, max_connections, on_throttle)


def open_agent(target: Target, context: AgentContext) -> Agent:
    return OPENERS[kind_of(target).name].agent(target, context)


class _Clients:
    """:class:`dsl.targets.base.Clients`, as the run stage is handed it."""

    def open_agent(self, target: Target, context: AgentContext) -> Agent:
        return open_agent(target, context)

    def open_model(self, target: Target, max_connections: int = 4,
                   on_throttle: Callable[[], None] | None = None) -> ChatModel:
        return open_model(target, max_connections, on_throttle)


CLIENTS = _Clients()


# ---- openai --------------------------------------------------------------------------------

def _open_openai(target: Target, max_connections: int,
                 on_throttle: Callable[[], None] | None) -> ChatModel:
    return OpenAIModel(target, max_connections=max_connections, on_throttle=on_throttle)


class SimulatedUsers:
    """The models that play simulated users for one agent target, each opened the first
    time a scenario needs it. A live target's run asks each user's own target (recorded
    into the agent's cassette with ``--record``); a replay target answers the users'
    requests from its own cassette, built with the user targets' settings — offline."""

    def __init__(self, open_one: Callable[[Target], ChatModel]) -> None:
        self._open_one = open_one
        self._models: dict[str, ChatModel] = {}

    def open(self, target: Target) -> ChatModel:
        model = self._models.get(target.name)
        if model is None:
            try:
                model = self._models[target.name] = self._open_one(target)
            except InputError as exc:
                raise agent_error(exc) from None
        return model

    async def aclose(self) -> None:
        for m in self._models.values():
            await m.aclose()


def _open_model_agent(target: Target, context: AgentContext) -> Agent:
    """A model endpoint under test: the agent loop, with the run's recording and metering,
    and the models of its simulated users."""
    model = open_model(target, context.max_connections, context.on_throttle)
    if isinstance(model, ReplayModel):  # its replies' marks put back (the one rule)
        model.redactor = context.redactor
    agent_model = model
    recorder = None
    if context.record is not None:
        model = recorder = Recorder(model, context.record, target.name, context.redact,
                                    context.redactor)

    def open_user(user: Target) -> ChatModel:
        if target.kind == "replay":  # the users' replies were recorded in this cassette
            try:
                return Metered(Answering(agent_model, request_settings(user)),
                               context.on_reply)
            except RunDirError as exc:
                raise EndpointError("cassette", str(exc)) from None
        live = open_model(user, 4)
        return Metered(recorder.tap(live) if recorder is not None else live,
                       context.on_reply)

    return LoopAgent(Metered(model, context.on_reply), SimulatedUsers(open_user))


# ---- replay --------------------------------------------------------------------------------

def _open_replay(target: Target, max_connections: int,
                 on_throttle: Callable[[], None] | None) -> ChatModel:
    path = target.settings(ReplaySettings).cassette
    try:
        return ReplayModel(Path(path))
    except (RunDirError, FileNotFoundError) as exc:
        msg = str(exc) if isinstance(exc, RunDirError) else f"the cassette {path} does not exist"
        raise InputError([Diagnostic(target.span, "E206",
                                     f"the replay target '{target.name}' cannot be used: {msg}",
                                     "record one with scenarist run --target <live> "
                                     "--record FILE")]) from None


def _open_replay_agent(target: Target, context: AgentContext) -> Agent:
    """A replay: of an agent that runs its own loop when the cassette recorded one
    (dsl/clients/exchanges.py), else of a model endpoint."""
    # why: the own-loop agents' machinery (MCP's tool server) only for such a cassette
    from .exchanges import is_agent_cassette, open_replay_agent

    path = Path(target.settings(ReplaySettings).cassette)
    try:
        agent = is_agent_cassette(path)
    except RunDirError:
        agent = None  # said when the model's cassette is opened
    if agent is None:
        return _open_model_agent(target, context)
    try:
        return _with_users(open_replay_agent(target, context, path), context)
    except RunDirError as exc:
        raise InputError([Diagnostic(target.span, "E206",
                                     f"the replay target '{target.name}' cannot be used: {exc}",
                                     "record one with scenarist run --target <live> "
                                     "--record FILE")]) from None


# ---- http and command: agents that run their own loop ------------------------------------

def _open_http(target: Target, context: AgentContext) -> Agent:
    from .http import open_http  # why: MCP's tool server, only for kind: http

    return _with_users(open_http(target, context), context)


def _with_users(agent: OwnLoopAgent, context: AgentContext) -> OwnLoopAgent:
    """An agent that runs its own loop, with the models that play its conversations'
    simulated users: the suite's model targets, each opened when a scenario first needs
    it, asked live (into the agent's cassette with ``--record``) — or, for a replay,
    answered from its cassette. Their replies count against the run's budgets."""

    def open_user(user: Target) -> ChatModel:
        if agent.replayed_users is not None:
            try:
                settings = request_settings(user)
            except RunDirError as exc:
                raise EndpointError("cassette", str(exc)) from None
            return Metered(agent.replayed_users(settings), context.on_reply)
        live = open_model(user, 4)
        recorder = agent.recorder
        return Metered(recorder.tap(live) if recorder is not None else live, context.on_reply)

    agent.users = SimulatedUsers(open_user)
    return agent


def _open_command(target: Target, context: AgentContext) -> Agent:
    from .command import open_command  # why: MCP's tool server, only for kind: command

    return _with_users(open_command(target, context), context)


# ---- python --------------------------------------------------------------------------------

def _open_python(target: Target, context: AgentContext) -> Agent:
    from .python import PythonAgent  # why: only a suite with a python agent needs it

    # the suite's model targets, opened when the agent first uses one
    models = {t.name: functools.partial(open_model, t, 4)
              for t in context.suite_targets if is_model(t)}
    return PythonAgent(target, context, models)


# ---- the table -----------------------------------------------------------------------------

OPENERS: dict[str, Opener] = {
    "openai": Opener(agent=_open_model_agent, model=_open_openai),
    "replay": Opener(agent=_open_replay_agent, model=_open_replay),
    "python": Opener(agent=_open_python),
    "http": Opener(agent=_open_http),
    "command": Opener(agent=_open_command),
}


def agent_error(exc: InputError) -> EndpointError:
    """A target that cannot be opened from inside an attempt (a python agent's client)."""
    return EndpointError("agent", exc.diagnostics[0].message)
