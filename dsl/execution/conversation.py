"""The person's side of a conversation: scripted turns, confirmations and a simulated user.

An agent answers one turn at a time — the agent loop over a model (dsl/execution/loop.py) and your
own python agent (dsl/clients/python.py) both do — through a ``take_turn(kind, text,
simulated) -> Turn`` function. :func:`converse` plays the person: it takes the scenario's
turns one by one (stopping at a turn that fails, or after the turn in which the agent
called a tool with ``ends_conversation: true``, a transfer to a human), or lets a model of
the suite play the person (:class:`~dsl.model.SimulatedUser`) until it writes
:data:`STOP_MARKER` or has spoken ``max_turns`` times (the marker in its very first
message does not count: no goal is reached before the agent has answered — small models
write it at once).

:func:`settle` is what a turn does first to the calls the agent held for confirmation:
``confirm`` runs the chosen ones (their fake result goes back to the agent as the tool
result), ``cancel`` tells the agent the person cancelled them, and any held call the turn
does not choose — all of them when the person just says something — is *dismissed*: not
run, and the agent is told so. ``confirm`` with nothing to confirm fails the turn (and the
attempt) with a reason, never a crash.

The simulated user never sees the agent's tools, its system prompt or its tool calls:
only the scenario's moment, its goal and persona, and the agent's answers — and, when the
agent holds calls for confirmation, what it wants to do, in plain words
(:func:`waiting_note`: each call's tool, what the tool is for, and its arguments). Its
reply then decides them (:func:`decision`): :data:`CONFIRM_MARKER` runs every held call
and :data:`CANCEL_MARKER` cancels them, each recorded as a scripted ``confirm: TOOL`` or
``cancel: TOOL`` turn is (``all`` when calls to several tools wait; its words are not
sent to the agent); anything else is said to
the agent, and the held calls are dismissed, as when a person writes a new message. Every
message it writes is kept (``said``, the attempt's ``user_messages``): one per turn, then
the last one, with its stop marker, which ends the conversation and is sent to no one.
Its endpoint's failures are endpoint errors (the attempt has no verdict), never the
agent's failures; so is a simulated user that writes nothing the person could say (an
empty message, null, only a tool call, or only the stop marker before the agent has
spoken): the error kind ``simulated_user``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable, Collection
from contextvars import ContextVar
from typing import Any, NamedTuple, Protocol

from msgspec.structs import replace

from ..compiler.faketools import answer
from ..compiler.moment import say as say_moment
from ..errors import EndpointError
from ..model import Call, Scenario, SimulatedUser, Target, Turn, TurnKind, ended_by
from ..targets.base import ChatModel

STOP_MARKER = "GOAL_REACHED"
_STOP = re.compile(r"GOAL[ _]REACHED", re.I)
CONFIRM_MARKER = "CONFIRM"  # the simulated user lets the held calls run
CANCEL_MARKER = "CANCEL"  # the simulated user stops them
_CONFIRM = re.compile(r"\bCONFIRM\b")
_CANCEL = re.compile(r"\bCANCEL\b")
WAITING = ("(The assistant is waiting for your confirmation before it does this:\n{calls}\n"
           "To let it go ahead, write " + CONFIRM_MARKER + ". To stop it, write "
           + CANCEL_MARKER + ". Or answer in your own words: then it is not done.)")
CANCELLED = "The person cancelled this call: it was not run."
DISMISSED = ("The person did not confirm this call (they wrote a new message instead): it "
             "was not run.")
OPENING = "(The chat opens. Write your first message to the assistant.)"
NO_ANSWER = "(The assistant wrote nothing.)"
USER_PROMPT = """\
You are playing a person who writes to an assistant in a chat. Stay in your role: you are \
the person, never the assistant.

Your goal: {goal}
{persona}It is now {now}.

Each message you receive is the assistant's reply. Answer with the person's next message \
only: short and natural, in the person's own words and language. Give the details your \
goal needs when the assistant asks for them. Your first message starts the conversation. \
Once the assistant has given you what your goal needs, write only """ + STOP_MARKER + "."

OpenUser = Callable[[Target], ChatModel]


class Talk(Protocol):
    """An agent's side of a conversation, one turn at a time (the agent loop's and a
    python agent's): :meth:`turn`, and the attempt's calls so far."""

    @property
    def calls(self) -> list[Call]: ...

    @property
    def world(self) -> Any:
        """The attempt's world as it is now (a :class:`dsl.compiler.world.World`; None
        when the scenario has none)."""
        ...

    async def turn(self, kind: TurnKind, text: str, simulated: bool,
                   pick: Collection[int] | None = None) -> Turn:
        """The person says ``text`` (``say``), or confirms or cancels the held calls to
        the tool ``text`` (or ``all``); with ``pick``, a confirm runs exactly the held
        calls at those indexes of :attr:`calls` and cancels the others. Then the agent
        answers."""
        ...


Person = Callable[[Talk], Awaitable[None]]
# Someone at a terminal playing the person (``scenarist try``, dsl/pipeline/tryout.py): while set,
# every conversation is theirs, whatever the scenario's turns say.
PERSON: ContextVar[Person | None] = ContextVar("scenarist_person", default=None)


class Settled(NamedTuple):
    """What a turn did to the held calls before the agent was asked again."""

    calls: list[Call]  # the attempt's calls, the decided ones replaced
    results: list[dict[str, Any]]  # a tool message for each decided call, in order
    decided: tuple[int, ...]  # their indexes in ``calls``
    failure: str | None = None  # confirm or cancel with nothing to choose


def settle(calls: list[Call], kind: TurnKind, text: str, scenario: Scenario,
           pick: Collection[int] | None = None, world: Any = None) -> Settled:
    """Apply turn ``kind`` (say, confirm, cancel; ``text``: the tool's name or ``all``
    for confirm and cancel) to the calls held for confirmation. ``pick`` (with confirm):
    the held calls to run, by index; the other held calls are cancelled. A confirmed
    table tool changes the attempt's ``world`` now; a cancelled one never does."""
    held = [i for i, c in enumerate(calls) if c.pending]
    chosen: list[int] = []
    if kind == "confirm" and pick is not None:
        chosen = [i for i in held if i in pick]
        if not chosen:
            return Settled(calls, [], (), nothing_to_decide(kind, text,
                                                             [calls[i] for i in held]))
    elif kind != "say":
        chosen = [i for i in held if text == "all" or calls[i].name == text]
        if not chosen:
            return Settled(calls, [], (), nothing_to_decide(kind, text,
                                                             [calls[i] for i in held]))
    if not held:
        return Settled(calls, [], ())
    out = list(calls)
    results = []
    for i in held:
        c = calls[i]
        if i not in chosen and pick is None:
            out[i] = replace(c, pending=False, output=DISMISSED, decision="dismissed")
        elif kind == "cancel" or i not in chosen:
            out[i] = replace(c, pending=False, output=CANCELLED, decision="cancelled")
        else:
            tool = scenario.tool(c.name)
            result = answer(tool, c.args, scenario.at, world) if tool is not None else None
            out[i] = replace(c, pending=False, output=result.output if result else "OK",
                             error=result.error if result else None, decision="confirmed")
        results.append({"role": "tool", "tool_call_id": c.id, "content": out[i].output})
    return Settled(out, results, tuple(held))


def nothing_to_decide(kind: TurnKind, text: str, held: list[Call]) -> str:
    """Why a confirm or cancel turn could not be done, in words."""
    verb = "confirms" if kind == "confirm" else "cancels"
    if text == "all" or not held:
        what = "" if text == "all" else f" {text}"
        return f"the person {verb}{what}, but no call is waiting for confirmation"
    names = ", ".join(dict.fromkeys(c.name for c in held))
    return (f"the person {verb} {text}, but no call to {text} is waiting for confirmation "
            f"(the calls waiting are to {names})")


async def converse(scenario: Scenario, run: int, talk: Talk,
                   open_user: OpenUser | None = None,
                   said: list[str] | None = None) -> bool | None:
    """Play the person's side of ``scenario`` against an agent's ``talk``. Returns
    whether a simulated user reached its goal (None without one); every message the
    simulated user wrote is appended to ``said`` as it is written (kept when its endpoint
    fails later). Raises EndpointError when the simulated user's endpoint fails."""
    said = said if said is not None else []
    person = PERSON.get()
    if person is not None:
        await person(talk)
        return None
    if scenario.user is None:
        for spec in scenario.turns:
            turn = await talk.turn(spec.kind, spec.text, False)
            if turn.failure is not None or ended_by(talk.calls, scenario.tools):
                break  # a failed turn, or a tool that ends the conversation (a transfer)
        return None
    if open_user is None:
        raise EndpointError("agent", "this target cannot hold a conversation with a "
                                     "simulated user")
    return await _simulate(scenario.user, scenario, run, talk,
                           open_user(scenario.user.target), said)


def decision(text: str) -> TurnKind:
    """What a simulated user's reply does to the calls the agent holds: ``confirm`` when
    it writes CONFIRM, ``cancel`` when it writes CANCEL (the marker in capitals, as a word;
    or the reply is only the word, in any case), else ``say`` — as with both markers."""
    bare = re.sub(r"[\W_]+", "", text).upper()
    confirm = bool(_CONFIRM.search(text)) or bare == CONFIRM_MARKER
    cancel = bool(_CANCEL.search(text)) or bare == CANCEL_MARKER
    if confirm != cancel:
        return "confirm" if confirm else "cancel"
    return "say"


def waiting_note(held: list[Call], scenario: Scenario) -> str:
    """What the simulated user is told when the agent holds calls for its confirmation:
    each call's tool, what the tool is for, and the arguments, in plain words; and the
    markers that decide them."""
    lines = []
    for c in held:
        tool = scenario.tool(c.name)
        about = f" ({tool.description.strip().rstrip('.')})" if tool and \
            tool.description.strip() else ""
        if isinstance(c.args, dict) and c.args:
            args = ", ".join(f"{k} = {json.dumps(v, ensure_ascii=False)}"
                             for k, v in c.args.items())
            with_args = f", with {args}"
        else:
            with_args = ""
        lines.append(f"- {c.name}{about}{with_args}")
    return WAITING.format(calls="\n".join(lines))


async def _simulate(user: SimulatedUser, scenario: Scenario, run: int, talk: Talk,
                    model: ChatModel, said: list[str]) -> bool:
    persona = f"Who you are: {user.persona}\n" if user.persona else ""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": USER_PROMPT.format(goal=user.goal, persona=persona,
                                                          now=say_moment(scenario.at))},
        {"role": "user", "content": OPENING},
    ]
    for n in range(user.max_turns + 1):
        text, nothing = await _ask_user(model, user, messages, run)
        if nothing is None:
            said.append(text)  # every message it wrote, as it wrote it
        if _STOP.search(text):
            if n > 0:
                return True
            # before the agent has said anything, no goal can have been reached
            text = _STOP.sub("", text).strip()
            if not any(ch.isalnum() for ch in text):
                nothing = f"only {STOP_MARKER}, before the agent had said anything"
        if n == user.max_turns:
            return False  # asked once more after the last turn: was the goal reached?
        if nothing is not None or not text.strip():
            raise EndpointError("simulated_user", f"the simulated user's target "
                                f"'{user.target.name}' wrote nothing the person could say: "
                                f"{nothing or 'an empty message'}")
        waiting = {c.name for c in talk.calls if c.pending}
        kind = decision(text) if waiting else "say"
        # a decision is the turn a person would script: confirm: TOOL (or all, for several)
        turn = await talk.turn(kind, text if kind == "say" else
                               next(iter(waiting)) if len(waiting) == 1 else "all", True)
        if turn.failure is not None or ended_by(talk.calls, scenario.tools):
            return False
        reply = turn.answer.strip() or NO_ANSWER
        held = [c for c in talk.calls if c.pending]
        if held:
            reply = f"{reply}\n\n{waiting_note(held, scenario)}"
        messages = [*messages, {"role": "assistant", "content": text},
                    {"role": "user", "content": reply}]
    return False


async def _ask_user(model: ChatModel, user: SimulatedUser, messages: list[dict[str, Any]],
                    run: int) -> tuple[str, str | None]:
    """What the simulated user wrote, and what it wrote instead of a message (None: text)."""
    settings = model.settings
    body: dict[str, Any] = {"model": settings.model, "messages": messages, "seed": run}
    if settings.temperature is not None:
        body["temperature"] = settings.temperature
    body.update(settings.params)
    try:
        reply = await model.complete(body)
    except EndpointError as exc:
        raise EndpointError(exc.kind, f"the simulated user's target '{user.target.name}' "
                                      f"failed: {exc.message}", status=exc.status,
                            retries=exc.retries) from None
    content = reply.message.get("content")
    if isinstance(content, list):
        content = "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    text = content if isinstance(content, str) else ""
    if text.strip():
        return text, None
    if reply.message.get("tool_calls"):
        return text, "only a tool call"
    return text, "no text (its content was null)" if content is None else "an empty message"
