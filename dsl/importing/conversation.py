"""The conversation every format is read into, and how a list of chat messages becomes one.

Each reader (``openai.py``, ``otel.py``, ``runfolder.py``) turns what it reads into the
same values: :class:`Message` — one chat message in the OpenAI shape, with the
:class:`Place` it was read at — and hands them, with the tool definitions it found, to
:func:`build`, which makes a :class:`Conversation`: the system message, the person's turns
(each with the agent's model calls, :class:`Step`, and their tool calls,
:class:`LoggedCall`, each with the result the log holds) and the tools. The scenario
writer (``scenario.py``) reads only a :class:`Conversation`.

**Held calls.** A call the agent made and the person then confirmed or cancelled in a
later turn becomes a ``confirm: TOOL`` (or ``cancel: TOOL``) turn, and its tool
``confirm: true``. A log does not say so in one field; :func:`build` reads it from the
shape of the messages, in this order:

1. the reader knows (a Scenarist run folder: each call's ``pending`` and ``decision``);
2. the person's message sits between the call and its result (the app asked, the person
   answered, then the call ran): held, and what the person wrote is kept as a note;
3. the assistant message that made the call also asks the person something (its text holds
   a question mark) and, once the call's result is back, the agent goes on without a new
   message from the person: held — the person confirmed it.

A held call whose result says it was cancelled, declined or not approved (``CANCELLED``)
is a ``cancel`` turn; any other, ``confirm``. A tool with both held calls and calls that
ran at once is not held at all (``confirm: true`` holds every call to it, so the
conversation would not be repeated as it was).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from ..compiler.moment import MONTHS

Role = Literal["system", "user", "assistant", "tool"]
TurnKind = Literal["say", "confirm", "cancel"]
Decision = Literal["confirmed", "cancelled", "dismissed", "pending"]

# A held call's result that says the person did not let it run.
CANCELLED = re.compile(
    r"(?i)\b(?:cancell?ed|rejected|declined|denied|not (?:been )?(?:approved|confirmed|run)"
    r"|did not (?:approve|confirm|run))\b")
# Text that asks the person something: a question mark (Latin, full-width, Arabic).
QUESTION = re.compile(r"[?？؟]")


@dataclass(frozen=True, slots=True)
class Place:
    """Where a value was read: a file and its line, or a file and a span's id (OTLP), or a
    run folder and an attempt. Shown as ``gateway.jsonl:14``, ``traces.json: span
    5b8aa5a2d2c872e8`` (``traces.jsonl:3: span …`` in JSON Lines), ``runs/2026…: attempt
    book@fake/2``."""

    file: str
    line: int | None = None
    span: str | None = None
    attempt: str | None = None

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        if self.span is not None:
            return f"{where}: span {self.span}"
        if self.line is not None:
            return where
        if self.attempt is not None:
            return f"{self.file}: attempt {self.attempt}"
        return self.file

    @property
    def within(self) -> str:
        """The place inside its file, as a scenario's comment says it: ``log line 7``,
        ``span 00f067aa0ba902b7``; empty for a whole file or an attempt (the description
        names those)."""
        where = [f"log line {self.line}"] if self.line is not None else []
        where += [f"span {self.span}"] if self.span is not None else []
        return ", ".join(where)


@dataclass(frozen=True, slots=True)
class Problem:
    """Something in the input that could not be imported as it is, with its place; the
    rest is imported. Printed as ``place: message``."""

    place: Place
    message: str

    def __str__(self) -> str:
        return f"{self.place}: {self.message}"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call in an assistant message: ``args`` is the parsed arguments (None when
    they are not a JSON object; ``raw`` keeps the text)."""

    id: str
    name: str
    args: Mapping[str, Any] | None
    raw: str


@dataclass(frozen=True, slots=True)
class Message:
    """One chat message as every reader gives it. ``calls``: an assistant's tool calls;
    ``call_id``: which call a tool message answers (``name``: the tool's, when the log
    says); ``error``: a tool message that is the tool's error (OTLP: the span's status)."""

    role: Role
    text: str
    place: Place
    calls: tuple[ToolCall, ...] = ()
    call_id: str = ""
    name: str = ""
    error: bool = False

    def same(self, other: Message) -> bool:
        """The same message, wherever each was read (how exchanges are grouped)."""
        return (self.role == other.role and self.text == other.text
                and self.call_id == other.call_id
                and [(c.id, c.name, c.args if c.args is not None else c.raw)
                     for c in self.calls]
                == [(c.id, c.name, c.args if c.args is not None else c.raw)
                    for c in other.calls])


@dataclass(frozen=True, slots=True)
class ToolDef:
    """A tool as the log defines it (the request's ``tools``, ``gen_ai.tool.definitions``,
    a run's plan): ``schema`` None when the log has no definition's parameters;
    ``action`` and ``confirm`` only when the log says (a Scenarist run)."""

    name: str
    description: str = ""
    schema: Mapping[str, Any] | None = None
    place: Place | None = None
    action: str | None = None
    confirm: bool = False


@dataclass(frozen=True, slots=True)
class LoggedCall:
    """A tool call the agent made, with what the log shows came back: ``result`` (None:
    the log holds no result), ``error`` (the result is the tool's error), whether it was
    ``held`` for the person, and what the person decided."""

    id: str
    name: str
    args: Mapping[str, Any] | None
    raw: str
    place: Place
    result: str | None = None
    error: bool = False
    held: bool = False
    decision: Decision | None = None
    result_place: Place | None = None  # where the result was read


@dataclass(frozen=True, slots=True)
class Step:
    """One model call: what the agent wrote and the calls it made (read at ``place``)."""

    text: str
    calls: tuple[LoggedCall, ...] = ()
    place: Place | None = None


@dataclass(frozen=True, slots=True)
class Turn:
    """What the person did — ``say`` (``text``: their words), ``confirm`` or ``cancel``
    (``text``: the tool's name, or ``all``) — and the agent's model calls after it.
    ``note``: what the person wrote beside a confirm or cancel."""

    kind: TurnKind
    text: str
    place: Place
    steps: tuple[Step, ...] = ()
    note: str = ""


@dataclass(frozen=True, slots=True)
class Moment:
    """When the conversation happened: ``offset`` False when the log gives only UTC (a
    span's nanoseconds, a response's ``created``), so the person's own offset is unknown;
    ``said``: where it was read, in words."""

    at: dt.datetime
    offset: bool
    said: str


@dataclass(frozen=True, slots=True)
class Conversation:
    """One logged conversation, ready to become a scenario.

    ``source``: the file (or run folder) as shown; ``key``: what names the conversation
    in its source (a conversation id, a trace id, an attempt, ``lines 3–7``); ``name``:
    a short name for its file; ``history``: the messages before the person's first turn
    (``given.history``); ``failed``: why a run's attempt failed; ``closed_tools``: the
    tools are only those defined (a run: a call to another never reached a tool), and
    ``not_run``: the ids of calls that never reached a tool."""

    source: str
    key: str
    place: Place
    name: str
    system: str
    turns: tuple[Turn, ...]
    tools: tuple[ToolDef, ...]
    moment: Moment | None = None
    history: tuple[Message, ...] = ()
    failed: str = ""
    closed_tools: bool = False
    not_run: frozenset[str] = frozenset()

    @property
    def calls(self) -> list[LoggedCall]:
        """Every call the agent made, in order (the history's not included)."""
        return [c for t in self.turns for s in t.steps for c in s.calls]

    @property
    def answer(self) -> str:
        """The agent's last words."""
        for t in reversed(self.turns):
            for s in reversed(t.steps):
                if s.text.strip():
                    return s.text
        return ""

    @property
    def max_steps(self) -> int:
        """The most model calls in one turn."""
        return max((len(t.steps) for t in self.turns), default=0)


# ---- from messages -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Built:
    """What :func:`build` made: the conversation, or None (why: in ``problems``)."""

    conversation: Conversation | None
    problems: tuple[Problem, ...] = ()


@dataclass(frozen=True, slots=True)
class _Call:
    """A call of the messages, numbered in order: the message that made it and its result
    (the tool message, and where it is; -1: none)."""

    at: int
    call: ToolCall
    result: Message | None
    result_at: int


def build(messages: Sequence[Message], tools: Sequence[ToolDef], *, source: str, key: str,
          place: Place, name: str, moment: Moment | None = None,
          decisions: Mapping[str, Decision] | None = None, failed: str = "",
          history: int = 0, closed_tools: bool = False,
          not_run: frozenset[str] = frozenset()) -> Built:
    """The conversation these messages hold (in order; system messages anywhere).
    ``decisions``: what the log says of each held call, by call id (a run folder); without
    it, held calls are read from the messages' shape (the module's docstring).
    ``history``: how many of the first messages (after the system's) are earlier history
    (a scenario's ``given.history``); the messages before the person's first are too.
    Problems: a call with no result, a conversation with no message from the person."""
    system = "\n\n".join(m.text for m in messages if m.role == "system" and m.text)
    chat = [m for m in messages if m.role != "system"]
    first_user = next((i for i, m in enumerate(chat) if m.role == "user" and i >= history),
                      None)
    if first_user is None:
        return Built(None, (Problem(place, "a conversation with no message from the person "
                                           "(no user message): no scenario was written for "
                                           "it"),))
    calls = _pair(chat)
    held = _held(chat, calls, decisions)
    walk = _Walk(chat, calls, held)
    walk.next = sum(len(m.calls) for m in chat[:first_user] if m.role == "assistant")
    turns = walk.turns(first_user)
    return Built(Conversation(source, key, place, name, system, tuple(turns), tuple(tools),
                              moment, tuple(chat[:first_user]), failed, closed_tools,
                              not_run), tuple(walk.problems))


def _pair(chat: Sequence[Message]) -> list[_Call]:
    """Every call, in order, with its result: the tool message with its call id, else the
    first earlier call still without one (to the same tool, when the message names it)."""
    made: list[tuple[int, ToolCall]] = [(i, c) for i, m in enumerate(chat)
                                        if m.role == "assistant" for c in m.calls]
    by_id: dict[str, int] = {}
    for k, (_, c) in enumerate(made):
        if c.id:
            by_id.setdefault(c.id, k)
    found: dict[int, tuple[Message, int]] = {}
    for j, m in enumerate(chat):
        if m.role != "tool":
            continue
        n = by_id.get(m.call_id) if m.call_id else None
        if n is None or n in found or made[n][0] > j:
            n = next((k for k, (i, c) in enumerate(made) if k not in found and i < j
                      and (not m.name or c.name == m.name)), None)
        if n is not None:
            found[n] = (m, j)
    return [_Call(i, c, *(found.get(n) or (None, -1))) for n, (i, c) in enumerate(made)]


def _held(chat: Sequence[Message], calls: Sequence[_Call],
          decisions: Mapping[str, Decision] | None) -> dict[int, Decision]:
    """The held calls, by number, with what the person did (the module's docstring)."""
    if decisions is not None:
        return {n: decisions[c.call.id] for n, c in enumerate(calls)
                if c.call.id in decisions}
    out: dict[int, Decision] = {}
    by_message: dict[int, list[int]] = {}
    for n, c in enumerate(calls):
        by_message.setdefault(c.at, []).append(n)
    for i, mine in by_message.items():
        last = max(calls[n].result_at for n in mine)
        answered = any(chat[j].role == "user" for j in range(i + 1, max(last, i + 1)))
        j = i + 1
        while j < len(chat) and (chat[j].role == "tool" or (chat[j].role == "user" and j < last)):
            j += 1
        goes_on = j < len(chat) and chat[j].role == "assistant"
        every_result = all(calls[n].result is not None for n in mine)
        if every_result and (answered or (goes_on and QUESTION.search(chat[i].text))):
            for n in mine:
                result = calls[n].result
                out[n] = "cancelled" if result is not None and CANCELLED.search(result.text) \
                    else "confirmed"
    # a tool with calls that ran at once is not held at all: confirm: true would hold them
    mixed = {calls[n].call.name for n in range(len(calls)) if n not in out}
    return {n: d for n, d in out.items() if calls[n].call.name not in mixed}


class _Walk:
    """The messages read in order into steps and turns (calls numbered as they come)."""

    def __init__(self, chat: Sequence[Message], calls: Sequence[_Call],
                 held: Mapping[int, Decision]) -> None:
        self.chat = chat
        self.calls = calls
        self.held = held
        self.problems: list[Problem] = []
        self.next = 0  # the number of the next call met
        # the messages of the person that answer a held call: between it and its result
        self.deciding = {j for n in held for j in range(calls[n].at + 1, calls[n].result_at)
                         if chat[j].role == "user"}

    def step(self, i: int) -> Step:
        m = self.chat[i]
        out = []
        for c in m.calls:
            n = self.next
            self.next += 1
            paired = self.calls[n]
            decision = self.held.get(n)
            result = paired.result
            if result is None and decision != "pending":
                shown = f"{c.id} " if c.id else ""
                self.problems.append(Problem(m.place, f"the call {shown}to {c.name} has no "
                                                      "result in the log: its fake tool "
                                                      "answers an error that says so"))
            out.append(LoggedCall(c.id, c.name, c.args, c.raw, m.place,
                                  None if result is None else result.text,
                                  result is not None and result.error,
                                  decision is not None, decision,
                                  None if result is None else result.place))
        return Step(m.text, tuple(out), m.place)

    def turns(self, start: int) -> list[Turn]:
        out: list[Turn] = []
        kind: TurnKind = "say"
        text = self.chat[start].text
        at = self.chat[start].place
        steps: list[Step] = []
        note = ""
        for i in range(start + 1, len(self.chat)):
            m = self.chat[i]
            if m.role == "user" and i in self.deciding:
                continue  # the person's answer to a held call: the next turn's note
            if m.role == "user":
                if steps or kind != "say":
                    out.append(Turn(kind, text, at, tuple(steps), note))
                    kind, text, at, steps, note = "say", m.text, m.place, [], ""
                else:  # two messages of the person in a row: one turn
                    text = f"{text}\n\n{m.text}"
            elif m.role == "assistant":
                decided = [c for c in (steps[-1].calls if steps else ())
                           if c.decision in ("confirmed", "cancelled")]
                if decided:  # the person decided the held calls: a turn of its own
                    out.append(Turn(kind, text, at, tuple(steps), note))
                    kind, text = _decision(decided)
                    at, steps, note = m.place, [], self._note_for(i)
                steps.append(self.step(i))
        out.append(Turn(kind, text, at, tuple(steps), note))
        return out

    def _note_for(self, i: int) -> str:
        """What the person wrote about the held calls just before message ``i``."""
        words = []
        j = i - 1
        while j >= 0 and self.chat[j].role != "assistant":
            if j in self.deciding:
                words.append(self.chat[j].text)
            j -= 1
        return "\n".join(reversed(words))


def _decision(decided: Sequence[LoggedCall]) -> tuple[TurnKind, str]:
    """The confirm or cancel turn that lets a step's held calls go on: ``confirm: TOOL``
    when the confirmed calls are all to one tool and no other was cancelled, ``cancel:
    TOOL`` likewise, else ``confirm: all`` (or ``cancel: all``)."""
    confirmed = {c.name for c in decided if c.decision == "confirmed"}
    cancelled = {c.name for c in decided if c.decision == "cancelled"}
    if confirmed:
        return "confirm", (next(iter(confirmed)) if len(confirmed) == 1 and not cancelled
                           else "all")
    return "cancel", next(iter(cancelled)) if len(cancelled) == 1 else "all"


# ---- the moment a Scenarist prompt states ----------------------------------------------

_STATED = re.compile(
    r"(?:\A|\n\n)Current date and time: (?:\w+) (?P<day>\d{1,2}) (?P<month>\w+) "
    r"(?P<year>\d{4}), (?P<hour>\d{2}):(?P<minute>\d{2}) \(UTC(?P<sign>[+-])(?P<oh>\d{2}):"
    r"(?P<om>\d{2})\)\.\s*\Z")


def stated_moment(c: Conversation) -> Conversation:
    """A conversation whose system message ends with the moment as Scenarist's own prompt
    states it (``Current date and time: Tuesday 29 September 2026, 10:00 (UTC-03:00).``):
    that moment is ``given.at`` — the agent was told it, so the scenario must tell it the
    same — and the line leaves the system message (Scenarist adds it again)."""


    m = _STATED.search(c.system)
    if m is None or m["month"] not in MONTHS:
        return c
    offset = dt.timedelta(hours=int(m["oh"]), minutes=int(m["om"]))
    zone = dt.timezone(offset if m["sign"] == "+" else -offset)
    try:
        at = dt.datetime(int(m["year"]), MONTHS.index(m["month"]) + 1, int(m["day"]),
                         int(m["hour"]), int(m["minute"]), tzinfo=zone)
    except ValueError:
        return c
    return replace(c, system=c.system[:m.start()],
                   moment=Moment(at, True, "the moment the system message states"))
