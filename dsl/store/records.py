"""The attempt record: what one attempt left behind, as ``results.jsonl`` holds it.

:class:`AttemptRecord` and its parts (frozen msgspec Structs, some of them
:mod:`dsl.model`'s) are the only description of a line of ``results.jsonl``:
:func:`record_line` writes one and :func:`read_record` reads one back — msgspec decodes
the line straight into the record, checking ``schema_version`` and every field's type
(:mod:`dsl.store.typed`). The run writes records, and the scheduler (resume), the summary,
the report, merge and recheck read them — all through these two functions, never by key.

One line, as written (its keys in the order of the Struct's fields: ``schema_version``
first, ``seed`` last; ``raw_args`` only when the arguments were not
valid JSON, ``error`` only when a call was not executed or its tool answered with an
error, ``decision`` only for a held call the person decided in a later turn, ``items``
and ``evidence`` only when a check has them, ``turn`` only for a check of one turn,
``always`` only when the check is marked ``always: true``; ``history``, ``turns`` and
``goal_reached`` only when the scenario has them; ``user_messages`` — every message a
simulated user wrote, one per turn and then the last one, with its stop marker, that ended
the conversation — only with a simulated user)::

    {"schema_version": 1, "scenario": ID, "target": NAME, "run": N,
     "status": "pass" | "fail" | "unsure" | "error", "reason": TEXT,
     "started_at": ISO-8601, "answer": TEXT,
     "calls": [{"id", "name", "args", "raw_args"?, "output", "action", "pending",
                "error"?, "step", "decision"?}],
     "messages": [OpenAI chat messages],
     "steps": N, "latency_ms": MS | null,
     "tokens": {"prompt", "completion", "total"} | null, "retries": N,
     "model_calls": [{"latency_ms", "finish_reason", "tokens", "retries"}],
     "checks": [{"check", "label", "status", "reason", "score", "items"?, "evidence"?,
                 "turn"?, "always"?}],  # status: pass | fail | unsure | error | not_evaluated
     "error": {"kind", "message", "status"} | null, "failure"?: TEXT,
     "failure_kind"?: "model_output" | "max_steps" | "nothing_to_confirm",
     "turns"?: [{"kind", "text", "answer", "calls", "decided", "steps", "messages",
                 "failure"?, "simulated"?}],
     "history"?: N, "goal_reached"?: true | false, "stderr"?: TEXT,
     "world"?: [{"table", "id", "set": {COLUMN: [BEFORE, AFTER]} | "added": ROW |
                 "removed": ROW, "unset"?: [COLUMN], "index"?: N, "id_as"?: N}],
     "world_turns"?: [[CHANGE, ...], ...], "user_messages"?: [TEXT],
     "ended_by"?: TOOL, "mcp"?: "listed" | "connected" | "never",
     "retried"?: [{"turn", "kind", "reason", "discarded": [{"name", "args", "output"}]}],
     "seed": N, "redacted"?: [INDEX | null | ["n" | "j", [...]]]}

(Lines written before Scenarist read them with msgspec had the same keys in another order:
``seed`` after ``run``, a conversation's keys after ``messages``.)

``world`` (only for a scenario with a world: ``world:`` or ``given.world``) is what the
attempt changed in it, row by row (dsl/compiler/world.py's ``changes``; ``[]``: nothing);
the world at the start is the scenario's, so ``recheck`` rebuilds the end from the two.
``world_turns`` (a conversation's) holds the same as each turn ended, for its own checks.

``ended_by`` (only when it happened) names the tool with ``ends_conversation: true`` whose
call ended the conversation (a transfer to a human): no turn after it was played.

``stderr`` (only when an agent program wrote any: ``kind: command``) is the end of what it
wrote to its standard error, at most 32 KiB, redacted as everything else.

``tokens`` is null when the agent does not say what it used (``kind: http``, ``command``):
unknown, never 0.

``mcp`` (only for an agent that runs its own loop, ``kind: http`` or ``command``) says how
it used its attempt's MCP endpoint: it listed the fake tools, only connected, or never
connected — the tool checks say so when an expected call never came.

``retried`` (only when it happened: an ``http`` agent with ``retry: {turns: true}``) lists
each turn sent again after a try that failed when the agent may have acted: the turn, the
endpoint error's kind and words, and the calls that try made — discarded (not in
``calls``), what they changed in the world undone. ``retries`` counts every request sent
again, these included.

``failure`` (only when set) is why the agent loop itself failed the attempt, whatever its
checks said (``max_steps`` spent without an answer): ``scenarist recheck`` keeps it.
``failure_kind`` is which kind of failure that was, which dsl/errors.py explains in words
(a line written before it was kept gets it from the words of ``failure``).

A check's ``status`` is ``not_evaluated`` when its turn was never played (an earlier turn
failed, or a ``confirm`` had nothing waiting): it says nothing about the agent, so it is
neither a pass nor a failure and never breaks an ``always`` check. (A line written before
that status existed said ``error`` with a reason that begins "not evaluated: "; it reads as
``not_evaluated``.)

A conversation's ``messages`` are the whole conversation (``history`` of them, after the
system prompt, came from ``given.history``); turn *i* made ``calls`` of the record's
calls, the next ones in order, and ``decided`` holds the indexes (in ``calls``) of the
held calls it confirmed, cancelled or dismissed (see :class:`~dsl.model.Turn`). Lines
written before conversations existed read as they always did: these keys are optional.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar, TypeVar

import msgspec
from msgspec.structs import force_setattr

from ..model import (
    MCP_USES,
    SCHEMA_VERSION,
    Call,
    CheckStatus,
    CriterionResult,
    Evidence,
    JudgeAnswer,
    Retried,
    Tokens,
    Turn,
    stands,
    undecided,
)
from ..verdict import AttemptStatus, breaks_always
from .typed import Reading, builtins, encode, from_data, json_data, read, read_fast

STATUSES = ("pass", "fail", "unsure", "error")
# a check's status: an attempt's, or not_evaluated (its turn was never played)
CHECK_STATUSES = (*STATUSES, "not_evaluated")
# how records written before not_evaluated existed said it: status error, this reason
_OLD_NOT_EVALUATED = "not evaluated: "


class CheckResult(msgspec.Struct, frozen=True, gc=False):
    """One check's outcome on one attempt, as stored."""

    only_when_set: ClassVar[tuple[str, ...]] = ("items", "evidence", "turn", "always")

    check: str  # the check's key: contains
    label: str  # how people see it: contains: "18:00" (an empty one reads as the check)
    status: CheckStatus
    reason: str = ""
    score: float | None = None
    items: tuple[CriterionResult, ...] = ()  # per criterion (criteria)
    evidence: Evidence | None = None  # the judge's reply, confidence, ...
    turn: int | None = None  # 1, 2, ...: a check of that turn; None: of the whole attempt
    always: bool = False  # `always: true`: it must pass in every attempt

    def upgraded(self) -> CheckResult:
        """The check as a line written before something existed is read: an empty label is
        the check's own name; status ``error`` with a reason that begins "not evaluated: "
        is ``not_evaluated``; the judge's ``raw_reply`` is its one reply."""
        changes: dict[str, Any] = {}
        if not self.label:
            changes["label"] = self.check
        if self.status == "error" and self.reason.startswith(_OLD_NOT_EVALUATED):
            changes["status"] = "not_evaluated"
        e = self.evidence
        if e is not None and _kept_raw_reply(e):
            changes["evidence"] = msgspec.structs.replace(
                _replied(e), items=tuple(_replied(a) for a in e.items))
        return msgspec.structs.replace(self, **changes) if changes else self


def _kept_raw_reply(e: Evidence) -> bool:
    return e.raw_reply is not None or any(a.raw_reply is not None for a in e.items)


_A = TypeVar("_A", bound=JudgeAnswer)


def _replied(a: _A) -> _A:
    if a.raw_reply is None:
        return a
    return msgspec.structs.replace(a, replies=a.replies or (a.raw_reply,), raw_reply=None)


class AttemptError(msgspec.Struct, frozen=True, gc=False):
    """Why an attempt ended without a verdict: the endpoint (or the judge) failed."""

    kind: str = "unknown"  # connection, timeout, status, malformed, judge, agent, ...
    message: str = ""
    status: int | None = None  # the HTTP status, when there was one


class ModelCallStat(msgspec.Struct, frozen=True, gc=False):
    """One request to the model within an attempt."""

    latency_ms: float | None = None
    finish_reason: str | None = None
    tokens: int = 0
    retries: int = 0


class AttemptRecord(msgspec.Struct, frozen=True, gc=False, tag_field="schema_version",
                    tag=SCHEMA_VERSION):
    """One attempt of one scenario against one target, finished: one line of
    results.jsonl (its keys are these fields; see the module's docstring)."""

    only_when_set: ClassVar[tuple[str, ...]] = (
        "failure", "failure_kind", "turns", "history", "goal_reached", "stderr", "world",
        "world_turns", "user_messages", "ended_by", "mcp", "retried", "redacted")

    scenario: str
    target: str
    run: int  # the run index, 1-based; also the seed
    status: AttemptStatus
    reason: str = ""
    started_at: str = ""  # ISO 8601, UTC, milliseconds
    answer: str = ""
    calls: tuple[Call, ...] = ()
    messages: tuple[Mapping[str, Any], ...] = ()
    steps: int = 0  # model calls made
    latency_ms: float | None = None  # None when the attempt did not finish
    # None: unknown (an agent that does not say what it used: http, command), never 0
    tokens: Tokens | None = Tokens()
    retries: int = 0
    model_calls: tuple[ModelCallStat, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    error: AttemptError | None = None
    failure: str | None = None  # the loop failed the attempt (max_steps), whatever the checks
    # model_output, max_steps, nothing_to_confirm (a line written before it was kept: from
    # the words of failure)
    failure_kind: str | None = None
    turns: tuple[Turn, ...] = ()  # a conversation's turns (empty: one message)
    history: int = 0  # messages after the system prompt that came from given.history
    goal_reached: bool | None = None  # a simulated user said its goal was reached
    stderr: str = ""  # an agent program's standard error (kind: command), bounded
    # what the attempt changed in its world (None: the scenario has no world)
    world: tuple[Mapping[str, Any], ...] | None = None
    world_turns: tuple[tuple[Mapping[str, Any], ...], ...] = ()  # as each turn ended
    user_messages: tuple[str, ...] = ()  # what a simulated user wrote (AttemptData's)
    ended_by: str | None = None  # the ends_conversation tool whose call ended it
    mcp: str | None = None  # how an own-loop agent used its MCP endpoint (model.MCP_USES)
    retried: tuple[Retried, ...] = ()  # own-loop turns sent again, and why
    seed: int = 0  # always the run index (written for those who look for a seed)
    # for each [REDACTED:NAME] of the line, in order, which of the scenario's own secrets
    # stood there (an index; null: none of them) — never the secret (dsl/compiler/redact.py)
    redacted: tuple[Any, ...] = ()

    def __post_init__(self) -> None:
        # (called for every record read back, so written for the usual record: one look)
        if self.seed != self.run:
            force_setattr(self, "seed", self.run)
        for c in self.checks:
            e = c.evidence
            if not c.label or c.status == "error" or (e is not None and _kept_raw_reply(e)):
                # a line written before something existed (CheckResult.upgraded)
                force_setattr(self, "checks", tuple(x.upgraded() for x in self.checks))
                break
        if self.failure is not None and not self.failure_kind:
            if self.failure:
                force_setattr(self, "failure_kind", failure_kind(self.failure))
            else:
                force_setattr(self, "failure", None)
        if self.world is not None and not all(type(c.get("table")) is str
                                              for c in self.world):
            raise ValueError("world has a change with no 'table'")
        if self.mcp is not None and self.mcp not in MCP_USES:
            force_setattr(self, "mcp", None)  # (as lines of another version's words read)

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scenario, self.target, self.run)

    @property
    def counted_checks(self) -> tuple[CheckResult, ...]:
        """Its checks as every surface counts and shows them: those of an attempt that
        ended in an error (no verdict), and those whose part of the attempt failed before
        the checks could decide (:func:`dsl.model.undecided`) — but for a failure that
        stands (:func:`dsl.model.stands`: a forbidden call made) — *not evaluated*, never a
        pass or a fail. A run since issue 32 stores them so; a record written before reads
        so here."""
        if self.status == "error":
            return not_evaluated(self.checks, f"{self.error.kind}: {self.error.message}"
                                 if self.error else self.reason)
        if not self.failure:
            return self.checks
        out = []
        for c in self.checks:
            why = (None if c.status == "not_evaluated" or stands(c.check, c.status)
                   else undecided(c.turn, self.failure, self.turns))
            out.append(c if why is None else msgspec.structs.replace(
                c, status="not_evaluated", reason=why, score=None, items=()))
        return tuple(out)

    @property
    def broke_always(self) -> bool:
        """This attempt broke a check marked ``always: true`` (dsl/verdict.py)."""
        return breaks_always(self.status, ((c.always, c.status) for c in self.counted_checks))


def not_evaluated(checks: tuple[CheckResult, ...], why: str) -> tuple[CheckResult, ...]:
    """The checks of an attempt that ended in an error (``why``: its kind and message): each
    *not evaluated* — it has no verdict, so none of its checks counts either way."""
    if all(c.status == "not_evaluated" for c in checks):
        return checks
    return tuple(c if c.status == "not_evaluated" else
                 msgspec.structs.replace(
                     c, status="not_evaluated", score=None, items=(),
                     reason=f"not evaluated: the attempt ended in an error ({why})")
                 for c in checks)


def record_json(r: AttemptRecord) -> dict[str, Any]:
    """The record as the JSON object of one results.jsonl line, as the json module would
    read it back (lists, not tuples)."""
    data: dict[str, Any] = json_data(r)
    return data


def record_line(r: AttemptRecord, redact: Callable[[Any], Any] | None = None) -> str:
    """The record as one line of results.jsonl (without the newline), its values redacted
    by ``redact`` (dsl/compiler/redact.py: never the serialized text, so the line is valid
    JSON). A lone surrogate that a model's reply may hold ("\\ud83d") is kept as a ``\\u``
    escape."""
    return encode(r if redact is None else redact(builtins(r))).decode("utf-8")


def read_record(line: bytes, where: object) -> AttemptRecord:
    """A record from one line of results.jsonl (``where``: its place, ``path:N``).
    RunDirError in one sentence, with that place, for a line that is not valid JSON, of
    another schema_version, or not an attempt record."""
    record = read_fast(line, AttemptRecord)
    if record is not None:
        return record
    return read(line, AttemptRecord, Reading(where, "an attempt record", "the line",
                                             quoted=True, line=True))


def record_from_json(data: Any, where: object = "the line") -> AttemptRecord:
    """A record from the JSON of one results.jsonl line, already parsed (tests, tools)."""
    return from_data(data, AttemptRecord, Reading(where, "an attempt record", "the line",
                                                  quoted=True, line=True))


def failure_kind(failure: str) -> str:
    """The kind of a loop failure, from its words: for lines written before the kind was
    kept (the loop's own words for each, dsl/execution/loop.py and
    dsl/execution/conversation.py)."""
    if "reached max_steps" in failure:
        return "max_steps"
    if "waiting for confirmation" in failure:
        return "nothing_to_confirm"
    return "model_output"
