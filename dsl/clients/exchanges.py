"""Record and replay an agent that runs its own loop (``kind: http``, ``kind: command``).

``--record FILE`` writes a cassette (the same header as a model cassette, with ``agent``:
the kind recorded, and ``schema_version`` 2) whose every further line is one turn's
exchange::

    {"key": SHA-256, "scenario": ID, "seed": N, "turn": N,
     "request": what was sent (the http body; the command's input line),
     "reply": what came back,
     "calls": [{"name", "args", "output", "error"?}] made over MCP in the turn, each with
              what the agent got back (the held text for a call held for confirmation)
              and, for an answer that is an error, its kind,
     "confirmed": [{"name", "args", "output"}] the held calls the person confirmed before
                  the turn (what the agent was told they answered),
     "answer": TEXT, "pending": [{"name", "args"}], "mcp": "listed" | "connected" | "never",
     "latency_ms": N}

(``mcp``: how the agent had used its MCP endpoint by the turn's end — it listed the tools,
only connected, or never connected; a cassette recorded before it was kept replays
without it. ``latency_ms``: how long the agent took to answer the turn, which a replay
counts in the attempt's ``latency_ms`` instead of its own time.)

With a simulated user, its model's exchanges are in the same cassette, one a line, as a
model cassette keeps them, marked ``"user": true``: ``{"key": SHA-256 of the request,
"user": true, "request", "response"}``; the replay answers the simulated user from them,
so a recorded conversation replays offline.

The request is kept without secrets: the key travels in a header, never in a body, and
every line is redacted as results are. The ``key`` is a hash of what the agent was told
that decides its answer (:meth:`~dsl.clients.ownloop.TurnInput.key_values`: the turn, the
person's words, the moment, the run index, the conversation so far — the earlier calls'
answers in it —, the calls decided and what they answered — not the session id or the
endpoint's address, new in every attempt).

A ``kind: replay`` target over such a cassette answers each turn from it, offline: the
recorded calls are made again, in order with their arguments, through the fake tools, and
each must answer what it answered when recorded (compared as the cassette keeps it:
redacted); then the recorded answer is given. A turn the cassette never saw, or a tool that
now answers otherwise — the scenario's data or tools changed — is a ``cassette`` error
(:class:`~dsl.errors.CassetteMiss`) that names the turn, and the call, and says to record
again: an agent's answer is never scored against tool answers it never saw.

A cassette of version 1 (recorded before the calls kept their answers) still reads: a turn
without tool calls replays, and one with calls is a ``cassette`` error that says the
cassette is older and to record it again — what its tools answered cannot be checked.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from ..compiler.redact import Known, Redactor
from ..errors import CassetteMiss, EndpointError, RunDirError
from ..execution.run import known_secrets
from ..model import MCP_USES, Call, Scenario, Target
from ..targets.base import (
    ATTEMPT_SECRETS,
    AgentContext,
    ChatModel,
    Reply,
    RequestSettings,
    parse_completion,
    snippet,
)
from ..targets.cassette import (
    AGENT_CASSETTE_VERSION,
    KEPT_FIELDS,
    _header,
    canonical,
    exchanges,
    is_latency,
    keyed_entry,
    read_cassette,
    request_key,
    restored,
)
from .ownloop import Answered, OwnLoopAgent, Session, TurnInput, pending_calls
from .toolserver import Endpoint, received

AGAIN = "record it again with scenarist run --target <live target> --record FILE"


def exchange_key(turn: TurnInput) -> str:
    text = json.dumps(turn.key_values(), sort_keys=True, ensure_ascii=False,
                      separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class ExchangeRecorder:
    """Appends each turn's exchange to a cassette."""

    def __init__(self, path: Path, target: Target,
                 redact: Callable[[Any], Any] | None = None,
                 redactor: Redactor | None = None) -> None:
        """``redactor``: the run's; each turn's line keeps, for each mark, which of the
        scenario's own secrets stood there (``redacted``), so a replay calls the tools with
        the arguments the agent sent."""
        self.path = path
        self._redact = redact
        self._redactor = redactor
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] = path.open("w", encoding="utf-8")
        self._write({
            "schema_version": AGENT_CASSETTE_VERSION, "kind": "scenarist-cassette",
            "recorded_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
            "target": target.name, "agent": target.kind,
            "settings": {"model": "", "temperature": None, "params": {}, "system_prompt": ""},
        })

    def _write(self, obj: dict[str, Any], known: Known | None = None) -> None:
        if known is not None and self._redactor is not None and self._redactor.patterns:
            obj, hints = self._redactor.traced(obj, known, KEPT_FIELDS)
            if hints:
                obj["redacted"] = hints
        elif self._redact is not None:
            obj = self._redact(obj)
        try:
            self._file.write(json.dumps(obj, ensure_ascii=False) + "\n")
        except UnicodeEncodeError:  # a lone surrogate: escaped, reads back the same
            self._file.write(json.dumps(obj) + "\n")
        self._file.flush()

    def write(self, turn: TurnInput, answered: Answered, made: list[Call],
              mcp: str | None = None, scenario: Scenario | None = None) -> None:
        known = None
        if scenario is not None and self._redactor is not None and self._redactor.patterns:
            # the attempt's (try's: the scenario it saves a cassette for), else its own
            known = ATTEMPT_SECRETS.get() or known_secrets(self._redactor, scenario)
        self._write({"key": exchange_key(turn), "scenario": turn.scenario, "seed": turn.seed,
                     "turn": turn.turn, "request": answered.request, "reply": answered.reply,
                     "calls": [recorded_call(c) for c in made],
                     "confirmed": turn.confirmed,
                     "answer": answered.answer, "pending": answered.pending,
                     "mcp": mcp, "latency_ms": answered.latency_ms}, known)

    def tap(self, inner: ChatModel) -> ChatModel:
        """The model that plays a simulated user, its exchanges written here too."""
        return _UserTap(self, inner)

    def write_user(self, body: dict[str, Any], reply: Reply) -> None:
        self._write({"key": request_key(body), "user": True, "request": canonical(body),
                     "response": reply.raw})

    def close(self) -> None:
        self._file.close()


class _UserTap:
    """A simulated user's model, recorded into an agent's cassette."""

    def __init__(self, recorder: ExchangeRecorder, inner: ChatModel) -> None:
        self.recorder = recorder
        self.inner = inner
        self.settings = inner.settings

    async def complete(self, body: dict[str, Any]) -> Reply:
        reply = await self.inner.complete(body)
        self.recorder.write_user(body, reply)
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()


class _ReplayedUser:
    """A simulated user answered from an agent's cassette (its requests built with the
    user target's settings)."""

    def __init__(self, replay: ExchangeReplay, settings: RequestSettings) -> None:
        self.replay = replay
        self.settings = settings

    async def complete(self, body: dict[str, Any]) -> Reply:
        return self.replay.user_reply(body)

    async def aclose(self) -> None:
        return None


def recorded_call(c: Call) -> dict[str, Any]:
    """A call as an agent's cassette keeps it: what was asked, and what the agent got."""
    out: dict[str, Any] = {"name": c.name, "args": c.args, "output": received(c)}
    if c.error is not None:
        out["error"] = c.error
    return out


def recorder_for(target: Target, context: AgentContext) -> ExchangeRecorder | None:
    """The run's recorder for a live own-loop target (``--record FILE``), or None."""
    if context.record is None:
        return None
    return ExchangeRecorder(context.record, target, context.redact, context.redactor)


def is_agent_cassette(path: Path) -> str | None:
    """The kind of agent a cassette recorded (``http``, ``command``), or None for a
    model's cassette. Raises RunDirError when it is no cassette."""
    lines = read_cassette(path, header_only=True)
    agent = _header(path, lines[0] if lines else "").get("agent")
    return agent if isinstance(agent, str) else None


class ExchangeReplay:
    """A recorded agent's turns, by key."""

    def __init__(self, path: Path, redact: Callable[[Any], Any] | None = None,
                 redactor: Redactor | None = None) -> None:
        """``redact``: the run's redaction (a JSON-like value → its redacted copy): what a
        tool answers now is compared with the cassette as the cassette keeps it.
        ``redactor``: the run's Redactor, which puts back the secrets a line's marks
        stand for (the tools get the arguments the agent sent)."""
        self.path = path
        self._redact = redact
        self.redactor = redactor
        lines = read_cassette(path)
        self.version = _header(path, lines[0] if lines else "")["schema_version"]
        self.turns: dict[str, dict[str, Any]] = {}
        self.users: dict[str, dict[str, Any]] = {}  # a simulated user's replies, by request
        # the recorded turns by (scenario, run, turn): what a turn the key misses differs by
        self.places: dict[tuple[Any, Any, Any], list[dict[str, Any]]] = {}
        for entry in exchanges(path, lines, _entry):
            if entry.get("user") is True:
                self.users.setdefault(entry["key"], entry)
                continue
            self.turns.setdefault(entry["key"], entry)
            place = (entry.get("scenario"), entry.get("seed"), entry.get("turn"))
            self.places.setdefault(place, []).append(entry)

    def user_model(self, settings: RequestSettings) -> ChatModel:
        """The simulated user of a recorded conversation, answered from this cassette."""
        return _ReplayedUser(self, settings)

    def user_reply(self, body: dict[str, Any]) -> Reply:
        entry = self.users.get(request_key(body))
        if entry is None:
            raise CassetteMiss(
                f"the cassette {self.path.name} has no recorded reply of the simulated user "
                f"for this request (run {body.get('seed')}); the scenario, its goal or the "
                f"run count changed since it was recorded — {AGAIN}")
        try:
            return parse_completion(entry["response"], 0.0)
        except EndpointError as exc:
            raise EndpointError(exc.kind, f"the cassette {self.path.name} holds a reply of "
                                          f"the simulated user Scenarist cannot read: "
                                          f"{exc.message}") from None

    async def ask(self, turn: TurnInput, tools: Endpoint,
                  scenario: Scenario | None = None) -> Answered:
        entry = self.turns.get(exchange_key(turn))
        if entry is None:
            raise self._missed(turn)
        kept = entry  # as the cassette keeps it: what the tools' answers are compared with
        if scenario is not None and self.redactor is not None and entry.get("redacted"):
            entry = restored(entry, self.redactor,
                             ATTEMPT_SECRETS.get() or known_secrets(self.redactor, scenario))
        where = f"turn {turn.turn} of run {turn.seed} of {turn.scenario}"
        if entry["calls"] and self.version < AGENT_CASSETTE_VERSION:
            raise CassetteMiss(
                f"the cassette {self.path.name} was recorded by an earlier Scenarist "
                f"(cassette version {self.version}), which did not keep what the tools "
                f"answered, so the calls of {where} cannot be checked against what the "
                f"tools answer now — {AGAIN}")
        for c, was in zip(entry["calls"], kept["calls"], strict=True):
            call = tools.take(c["name"], c.get("args"))
            now = self._shown(received(call))
            if now != was.get("output") or call.error != c.get("error"):
                c = was
                raise CassetteMiss(
                    f"the cassette {self.path.name} does not match {where}: the recorded "
                    f"agent called {_named(c)} and got {_said(c.get('output'), c.get('error'))}"
                    f", but the tool now answers {_said(now, call.error)} — the scenario's "
                    f"tools or data changed since it was recorded; {AGAIN}")
        used = entry.get("mcp")
        if used in MCP_USES:  # how the agent had used its endpoint by the turn's end
            tools.listed = tools.listed or used == "listed"
            tools.connected = tools.connected or used != "never"
        latency = entry.get("latency_ms")
        return Answered(entry["answer"], entry["pending"], entry.get("request"),
                        entry.get("reply"), mcp=used if used in MCP_USES else None,
                        latency_ms=float(latency) if latency is not None else None)

    def _shown(self, value: Any) -> Any:
        """``value`` as the cassette keeps it (redacted)."""
        return value if self._redact is None else self._redact(value)

    def _missed(self, turn: TurnInput) -> CassetteMiss:
        """Why a turn is not in the cassette: a confirmed call that answers otherwise than
        it did when recorded, named; else that the scenario changed."""
        where = f"turn {turn.turn} of run {turn.seed} of {turn.scenario}"
        confirmed = self._shown(turn.confirmed)
        for entry in self.places.get((turn.scenario, turn.seed, turn.turn), ()):
            before = entry.get("confirmed")
            if not isinstance(before, list) or len(before) != len(confirmed):
                continue
            for was, now in zip(before, confirmed, strict=True):
                if not isinstance(was, dict) or was.get("name") != now.get("name") \
                        or was.get("args") != now.get("args"):
                    break
                if was.get("output") != now.get("output"):
                    return CassetteMiss(
                        f"the cassette {self.path.name} does not match {where}: the person "
                        f"confirmed {_named(was)}, which answered "
                        f"{_said(was.get('output'))} when it was recorded, but now answers "
                        f"{_said(now.get('output'))} — the scenario's tools or data changed "
                        f"since it was recorded; {AGAIN}")
        older = (f" (it was recorded by an earlier Scenarist, cassette version "
                 f"{self.version})") if self.version < AGENT_CASSETTE_VERSION else ""
        return CassetteMiss(
            f"the cassette {self.path.name} has no recorded {where}{older}; the scenario, "
            f"its tools or the run count changed since it was recorded — {AGAIN}")

    async def end(self) -> str:
        return ""


MAX_ARGS = 200  # characters of a call's arguments a message shows


def _named(call: dict[str, Any]) -> str:
    """A recorded call in words: its tool and arguments (cut short)."""
    args = json.dumps(call.get("args"), ensure_ascii=False)
    return f"{call.get('name')} {args if len(args) <= MAX_ARGS else args[:MAX_ARGS] + '…'}"


def _said(output: Any, error: Any = None) -> str:
    text = output if isinstance(output, str) else json.dumps(output, ensure_ascii=False)
    return snippet(text) + (f" (an error: {error})" if error else "")


def _entry(path: Path, n: int, line: str) -> dict[str, Any]:
    entry = keyed_entry(path, n, line)
    problem = None
    if entry.get("user") is True:  # a simulated user's exchange
        if not isinstance(entry.get("response"), dict):
            raise RunDirError(f"{path}:{n}: the simulated user's line has no 'response' (an "
                              "object); record the cassette again")
        return entry
    elif not isinstance(entry.get("answer"), str):
        problem = "the line has no 'answer' (a text)"
    elif entry.get("latency_ms") is not None and not is_latency(entry["latency_ms"]):
        problem = "its 'latency_ms' is not a number of milliseconds"
    elif not isinstance(entry.get("calls"), list) or not all(
            isinstance(c, dict) and isinstance(c.get("name"), str) for c in entry["calls"]):
        problem = "its 'calls' is not a list of calls with a name"
    elif not all(isinstance(c.get("output", ""), str) and isinstance(c.get("error", ""), str)
                 for c in entry["calls"]):
        problem = "a call of its 'calls' has an 'output' or an 'error' that is not text"
    if problem is None:
        try:
            pending_calls(entry.get("pending"), "its 'pending'")
        except Exception as exc:
            problem = str(exc)
    if problem is not None:
        raise RunDirError(f"{path}:{n}: {problem}; record the cassette again")
    entry["pending"] = entry.get("pending") or []
    return entry


class _Replayed:
    """One attempt's turns, answered from the cassette (its marks put back to the
    scenario's secrets)."""

    def __init__(self, replay: ExchangeReplay, scenario: Scenario) -> None:
        self.replay = replay
        self.scenario = scenario

    async def ask(self, turn: TurnInput, tools: Endpoint) -> Answered:
        return await self.replay.ask(turn, tools, self.scenario)

    async def end(self) -> str:
        return ""


def open_replay_agent(target: Target, context: AgentContext, path: Path) -> OwnLoopAgent:
    replay = ExchangeReplay(path, context.redact, context.redactor)

    async def session(scenario: Scenario, run: int, first: TurnInput) -> Session:
        return _Replayed(replay, scenario)

    agent = OwnLoopAgent(target, context, session, served=False)
    agent.replayed_users = replay.user_model
    return agent
