"""The attempt record: what one attempt left behind, as ``results.jsonl`` holds it.

:class:`AttemptRecord` and its parts are the only description of a line of
``results.jsonl``; :func:`record_json` writes one and :func:`record_from_json` reads one
back, checking ``schema_version`` and every field's type. The run writes records, and
the scheduler (resume), the summary, the report, merge and recheck read them — all through
these two functions, never by key.

One line, as written (keys in this order; ``raw_args`` only when the arguments were not
valid JSON, ``error`` only when a call was not executed or its tool answered with an
error, ``decision`` only for a held call the person decided in a later turn, ``items``
and ``evidence`` only when a check has them, ``turn`` only for a check of one turn,
``always`` only when the check is marked ``always: true``; ``history``, ``turns`` and
``goal_reached`` only when the scenario has them; ``user_messages`` — every message a
simulated user wrote, one per turn and then the last one, with its stop marker, that ended
the conversation — only with a simulated user)::

    {"schema_version": 1, "scenario": ID, "target": NAME, "run": N, "seed": N,
     "status": "pass" | "fail" | "unsure" | "error", "reason": TEXT,
     "started_at": ISO-8601, "answer": TEXT,
     "calls": [{"id", "name", "args", "output", "action", "pending", "step",
                "raw_args"?, "error"?, "decision"?}],
     "messages": [OpenAI chat messages], "history"?: N,
     "turns"?: [{"kind", "text", "answer", "calls", "decided", "steps", "messages",
                 "failure"?, "simulated"?}],
     "goal_reached"?: true | false, "user_messages"?: [TEXT],
     "steps": N, "latency_ms": MS | null,
     "tokens": {"prompt", "completion", "total"} | null, "retries": N,
     "model_calls": [{"latency_ms", "finish_reason", "tokens", "retries"}],
     "checks": [{"check", "label", "status", "score", "reason", "items"?, "evidence"?,
                 "turn"?, "always"?}],  # status: pass | fail | unsure | error | not_evaluated
     "error": {"kind", "message", "status"} | null, "failure"?: TEXT,
     "failure_kind"?: "model_output" | "max_steps" | "nothing_to_confirm",
     "stderr"?: TEXT, "ended_by"?: TOOL, "mcp"?: "listed" | "connected" | "never",
     "retried"?: [{"turn", "kind", "reason", "discarded": [{"name", "args", "output"}]}],
     "world"?: [{"table", "id", "set": {COLUMN: [BEFORE, AFTER]} | "added": ROW |
                 "removed": ROW}],
     "world_turns"?: [[CHANGE, ...], ...]}

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

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

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
from .jsonfile import check_version

STATUSES = ("pass", "fail", "unsure", "error")
_STATUS = frozenset(STATUSES)
# a check's status: an attempt's, or not_evaluated (its turn was never played)
CHECK_STATUSES = (*STATUSES, "not_evaluated")
_CHECK_STATUS = frozenset(CHECK_STATUSES)
# how records written before not_evaluated existed said it: status error, this reason
_OLD_NOT_EVALUATED = "not evaluated: "


class RecordError(ValueError):
    """A line of results.jsonl that is not an attempt record (the reader adds file:line)."""


class CheckResult(NamedTuple):
    """One check's outcome on one attempt, as stored. (A named tuple, like the record's
    other small parts: as frozen as a dataclass, and four times quicker to build — a
    report of 100,000 attempts builds half a million of them.)"""

    check: str  # the check's key: contains
    label: str  # how people see it: contains: "18:00"
    status: CheckStatus
    reason: str
    score: float | None = None
    items: tuple[CriterionResult, ...] = ()  # per criterion (criteria)
    evidence: Evidence | None = None  # the judge's reply, confidence, ...
    turn: int | None = None  # 1, 2, ...: a check of that turn; None: of the whole attempt
    always: bool = False  # `always: true`: it must pass in every attempt


class AttemptError(NamedTuple):
    """Why an attempt ended without a verdict: the endpoint (or the judge) failed."""

    kind: str  # connection, timeout, status, malformed, judge, agent, ...
    message: str
    status: int | None = None  # the HTTP status, when there was one


class ModelCallStat(NamedTuple):
    """One request to the model within an attempt."""

    latency_ms: float | None
    finish_reason: str | None
    tokens: int
    retries: int


@dataclass(frozen=True, slots=True)
class AttemptRecord:
    """One attempt of one scenario against one target, finished."""

    scenario: str
    target: str
    run: int  # the run index, 1-based; also the seed
    status: AttemptStatus
    reason: str
    started_at: str  # ISO 8601, UTC, milliseconds
    answer: str = ""
    calls: tuple[Call, ...] = ()
    messages: tuple[Mapping[str, Any], ...] = ()
    steps: int = 0  # model calls made
    latency_ms: float | None = None  # None when the attempt did not finish
    tokens: Tokens | None = Tokens()  # None: unknown (an agent that does not say: http, command)
    retries: int = 0
    model_calls: tuple[ModelCallStat, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    error: AttemptError | None = None
    failure: str | None = None  # the loop failed the attempt (max_steps), whatever the checks
    failure_kind: str | None = None  # model_output, max_steps, nothing_to_confirm
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
            out.append(c if why is None else c._replace(status="not_evaluated", reason=why,
                                                        score=None, items=()))
        return tuple(out)

    @property
    def broke_always(self) -> bool:
        """This attempt broke a check marked ``always: true`` (dsl/verdict.py)."""
        return breaks_always(self.status, ((c.always, c.status) for c in self.counted_checks))

    @property
    def seed(self) -> int:
        return self.run


def not_evaluated(checks: tuple[CheckResult, ...], why: str) -> tuple[CheckResult, ...]:
    """The checks of an attempt that ended in an error (``why``: its kind and message): each
    *not evaluated* — it has no verdict, so none of its checks counts either way."""
    if all(c.status == "not_evaluated" for c in checks):
        return checks
    return tuple(c if c.status == "not_evaluated" else
                 c._replace(status="not_evaluated", score=None, items=(),
                            reason=f"not evaluated: the attempt ended in an error ({why})")
                 for c in checks)


# ---- writing -----------------------------------------------------------------------------

def call_json(c: Call) -> dict[str, Any]:
    d: dict[str, Any] = {"id": c.id, "name": c.name, "args": c.args, "output": c.output,
                         "action": c.action, "pending": c.pending, "step": c.step}
    if c.args is None:
        d["raw_args"] = c.raw_args
    if c.error:
        d["error"] = c.error
    if c.decision:
        d["decision"] = c.decision
    return d


def turn_json(t: Turn) -> dict[str, Any]:
    d: dict[str, Any] = {"kind": t.kind, "text": t.text, "answer": t.answer,
                         "calls": t.calls, "decided": list(t.decided), "steps": t.steps,
                         "messages": t.messages}
    if t.failure:
        d["failure"] = t.failure
    if t.simulated:
        d["simulated"] = True
    return d


def check_json(c: CheckResult) -> dict[str, Any]:
    d: dict[str, Any] = {"check": c.check, "label": c.label, "status": c.status,
                         "score": c.score, "reason": c.reason}
    if c.items:
        d["items"] = [{"label": i.label, "status": i.status, "score": i.score,
                       "min_score": i.min_score, "reason": i.reason} for i in c.items]
    if c.evidence is not None:
        d["evidence"] = evidence_json(c.evidence)
    if c.turn is not None:
        d["turn"] = c.turn
    if c.always:
        d["always"] = True
    return d


def answer_json(a: JudgeAnswer) -> dict[str, Any]:
    d: dict[str, Any] = {"judge_model": a.judge_model, "verdict": a.verdict, "score": a.score,
                         "confidence": a.confidence, "reason": a.reason, "prompt": a.prompt,
                         "replies": list(a.replies), "cached": a.cached,
                         "cache_key": a.cache_key, "tokens": a.tokens}
    if a.p_pass is not None:
        d["p_pass"] = a.p_pass
    if a.logprobs is not None:
        d["logprobs"] = dict(a.logprobs)
    return d


def evidence_json(e: Evidence) -> dict[str, Any]:
    """A judged check's evidence: the judge's answer, or ``{"items": [...]}`` (criteria)."""
    if e.per_item:
        return {"items": [answer_json(a) for a in e.answers]}
    return answer_json(e.answers[0]) if e.answers else {}


def tokens_json(t: Tokens) -> dict[str, int]:
    return {"prompt": t.prompt, "completion": t.completion, "total": t.total}


def record_json(r: AttemptRecord) -> dict[str, Any]:
    """The record as the JSON object of one results.jsonl line."""
    d: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "scenario": r.scenario,
        "target": r.target,
        "run": r.run,
        "seed": r.run,
        "status": r.status,
        "reason": r.reason,
        "started_at": r.started_at,
        "answer": r.answer,
        "calls": [call_json(c) for c in r.calls],
        "messages": [dict(m) for m in r.messages],
        "steps": r.steps,
        "latency_ms": r.latency_ms,
        "tokens": tokens_json(r.tokens) if r.tokens is not None else None,
        "retries": r.retries,
        "model_calls": [{"latency_ms": m.latency_ms, "finish_reason": m.finish_reason,
                         "tokens": m.tokens, "retries": m.retries} for m in r.model_calls],
        "checks": [check_json(c) for c in r.checks],
        "error": (None if r.error is None else
                  {"kind": r.error.kind, "message": r.error.message, "status": r.error.status}),
        **({"failure": r.failure, "failure_kind": r.failure_kind or failure_kind(r.failure)}
           if r.failure else {}),
    }
    if r.stderr:
        d["stderr"] = r.stderr
    if r.ended_by is not None:
        d["ended_by"] = r.ended_by
    if r.mcp is not None:
        d["mcp"] = r.mcp
    if r.retried:
        d["retried"] = [{"turn": t.turn, "kind": t.kind, "reason": t.reason,
                         "discarded": [dict(c) for c in t.discarded]} for t in r.retried]
    if r.world is not None:
        d["world"] = [dict(c) for c in r.world]
        if r.world_turns:
            d["world_turns"] = [[dict(c) for c in t] for t in r.world_turns]
    if r.history or r.turns or r.goal_reached is not None or r.user_messages:
        return _with_conversation(d, r)
    return d


def _with_conversation(d: dict[str, Any], r: AttemptRecord) -> dict[str, Any]:
    """A conversation's line: its history count, turns and goal after the messages."""
    out: dict[str, Any] = {}
    for key, value in d.items():
        out[key] = value
        if key == "messages":
            if r.history:
                out["history"] = r.history
            if r.turns:
                out["turns"] = [turn_json(t) for t in r.turns]
            if r.goal_reached is not None:
                out["goal_reached"] = r.goal_reached
            if r.user_messages:
                out["user_messages"] = list(r.user_messages)
    return out


def record_line(r: AttemptRecord, redact: Callable[[Any], Any] | None = None) -> str:
    """The record as one line of results.jsonl (without the newline), its values redacted
    by ``redact`` (dsl/compiler/redact.py: never the serialized text, so the line is valid JSON).
    A lone surrogate that a model's reply may hold ("\\ud83d") is kept as a ``\\u`` escape."""
    data = record_json(r)
    if redact is not None:
        data = redact(data)
    return json_line(data)


def json_line(data: Any) -> str:
    """One JSON value on one line, compact; a lone surrogate as a ``\\u`` escape."""
    line = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    if not line.isascii():
        try:
            line.encode("utf-8")
        except UnicodeEncodeError:
            line = json.dumps(data, separators=(",", ":"))
    return line


# ---- reading -----------------------------------------------------------------------------

_REQUIRED: Any = object()
_NAMES = {str: "text", int: "a whole number", list: "a list", dict: "an object"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float):
        return "a decimal number"
    return _NAMES.get(type(value), type(value).__name__)


def _wrong(key: str, value: Any, kind: type) -> RecordError:
    if value is None:
        return RecordError(f"'{key}' is missing")
    return RecordError(f"'{key}' is {_kind(value)}, not {_NAMES.get(kind, kind.__name__)}")


# The readers below run for every line of every results.jsonl a report or a summary reads
# (100,000 lines and more): exact type tests (``type(x) is str``; JSON gives exact types),
# one dict lookup per field, and the named tuples built from a tuple of all their fields,
# every one checked or defaulted here (the named tuple's own __new__ costs twice as much).
_build = tuple.__new__

def _get(d: Mapping[str, Any], key: str, kind: type, default: Any = _REQUIRED) -> Any:
    """``d[key]``, which must be of ``kind`` (JSON's types: a bool is not a number)."""
    value = d.get(key)
    if type(value) is kind:
        return value
    if value is None and default is not _REQUIRED:
        return default
    raise _wrong(key, value, kind)


def _obj(value: Any, what: str) -> Mapping[str, Any]:
    if type(value) is not dict:
        raise RecordError(f"{what} is {_kind(value)}, not an object")
    return value


def _call(d: Any) -> Call:
    if type(d) is not dict:
        raise RecordError(f"a call is {_kind(d)}, not an object")
    name = d.get("name")
    if type(name) is not str:
        raise _wrong("name", name, str)
    step = d.get("step", 1)
    if type(step) is not int:
        raise _wrong("step", step, int)
    raw = d.get("raw_args")
    output = d.get("output")
    action = d.get("action")
    error = d.get("error")
    decision = d.get("decision")
    # raw_args is kept only when the arguments were not JSON (args is None then)
    return _build(Call, (str(d.get("id") or ""), name, d.get("args"),
                         raw if type(raw) is str else "",
                         output if output is None or type(output) is str
                         else json.dumps(output),
                         action if type(action) is str else None, d.get("pending") is True,
                         error if type(error) is str else None, step,
                         decision if type(decision) is str else None))


def _turn(d: Any) -> Turn:
    if type(d) is not dict:
        raise RecordError(f"a turn is {_kind(d)}, not an object")
    kind = d.get("kind")
    if kind not in ("say", "confirm", "cancel"):
        raise RecordError(f"a turn's kind is {kind!r}, not say, confirm or cancel")
    decided = d.get("decided")
    failure = d.get("failure")
    text, answer = d.get("text"), d.get("answer")
    if not (type(decided) is list and all(type(i) is int for i in decided)):
        decided = []
    return _build(Turn, (kind, text if type(text) is str else "",
                         answer if type(answer) is str else "",
                         _get(d, "calls", int, 0), tuple(decided), _get(d, "steps", int, 0),
                         _get(d, "messages", int, 0),
                         failure if type(failure) is str else None,
                         d.get("simulated") is True))


def _check(d: Any) -> CheckResult:
    if type(d) is not dict:
        raise RecordError(f"a check is {_kind(d)}, not an object")
    status = d.get("status")
    if status not in _CHECK_STATUS:
        if type(status) is not str:
            raise _wrong("status", status, str)
        raise RecordError(f"a check's status is {status!r}, not pass, fail, unsure, error "
                          "or not_evaluated")
    check = d.get("check")
    if type(check) is not str:
        raise _wrong("check", check, str)
    label = d.get("label")
    reason = d.get("reason")
    if status == "error" and type(reason) is str and reason.startswith(_OLD_NOT_EVALUATED):
        status = "not_evaluated"  # written before the status existed
    score = d.get("score")
    items = d.get("items")
    evidence = d.get("evidence")
    turn = d.get("turn")
    return _build(CheckResult, (
        check, label if type(label) is str and label else check, status,
        reason if type(reason) is str else "",
        float(score) if type(score) is float or type(score) is int else None,
        tuple([_item(i) for i in items]) if items and type(items) is list else (),
        _evidence(evidence) if type(evidence) is dict else None,
        turn if type(turn) is int else None, d.get("always") is True))


def _item(d: Any) -> CriterionResult:
    d = _obj(d, "a check item")
    get = d.get
    status, label, reason = get("status"), get("label"), get("reason")
    score, min_score = get("score"), get("min_score")
    return _build(CriterionResult, (
        label if type(label) is str else "", status if status in _STATUS else "error",
        score if type(score) is float or type(score) is int else None,
        min_score if type(min_score) is float or type(min_score) is int else 0.0,
        reason if type(reason) is str else ""))


_NO_ANSWER = JudgeAnswer()


def _answer(d: Any) -> JudgeAnswer:
    """The judge's answer to one question. Its fields are only shown and counted, so a
    value of another type reads as its default (as a check's label does). (Every judged
    check of every attempt has one: read here with no more than a lookup per field.)"""
    if type(d) is not dict:
        return _NO_ANSWER
    get = d.get
    replies = get("replies")
    if type(replies) is list:
        replies = tuple([r if type(r) is str else json.dumps(r) for r in replies])
    else:  # lines written before every reply was kept had the last one alone
        raw = get("raw_reply")
        replies = (raw,) if type(raw) is str else ()
    model, verdict, reason, prompt = get("judge_model"), get("verdict"), get("reason"), \
        get("prompt")
    score, confidence, key, tokens = get("score"), get("confidence"), get("cache_key"), \
        get("tokens")
    p_pass, logprobs = get("p_pass"), get("logprobs")
    return _build(JudgeAnswer, (
        model if type(model) is str else "", verdict if type(verdict) is str else "",
        score if type(score) is float or type(score) is int else None,
        confidence if type(confidence) is float or type(confidence) is int else None,
        reason if type(reason) is str else "", prompt if type(prompt) is str else "",
        replies, get("cached") is True, key if type(key) is str else "",
        tokens if type(tokens) is int else 0,
        p_pass if type(p_pass) is float or type(p_pass) is int else None,
        logprobs if type(logprobs) is dict else None))


def _evidence(d: dict[str, Any]) -> Evidence:
    items = d.get("items")
    if type(items) is list:
        return _build(Evidence, (tuple([_answer(i) for i in items]), True))
    return _build(Evidence, ((_answer(d),), False))


def _model_call(d: Any) -> ModelCallStat:
    if type(d) is not dict:
        raise RecordError(f"a model call is {_kind(d)}, not an object")
    latency = d.get("latency_ms")
    reason = d.get("finish_reason")
    tokens = d.get("tokens")
    retries = d.get("retries")
    return _build(ModelCallStat, (
        float(latency) if type(latency) is float or type(latency) is int else None,
        reason if type(reason) is str else None,
        tokens if type(tokens) is int else 0,
        retries if type(retries) is int else 0))


def record_from_json(d: Any) -> AttemptRecord:
    """A record from the JSON of one results.jsonl line. Raises RecordError (what is wrong,
    in words) for a line that is not a record of this version; RunDirError for another
    schema_version."""
    if type(d) is not dict:
        raise RecordError(f"the line is {_kind(d)}, not an object")
    get = d.get
    if get("schema_version") != SCHEMA_VERSION:
        check_version(d, "the line")
    status = get("status")
    if status not in _STATUS:
        if type(status) is not str:
            raise _wrong("status", status, str)
        raise RecordError(f"'status' is {status!r}, not pass, fail, unsure or error")
    scenario, target, run = get("scenario"), get("target"), get("run")
    if type(scenario) is not str:
        raise _wrong("scenario", scenario, str)
    if type(target) is not str:
        raise _wrong("target", target, str)
    if type(run) is not int:
        raise _wrong("run", run, int)
    tokens = get("tokens")
    if type(tokens) is not dict and tokens is not None:
        tokens = {}
    err = get("error")
    failure = get("failure")
    latency = get("latency_ms")
    mcp = get("mcp")
    answer = get("answer")
    reason = get("reason")
    started = get("started_at")
    messages = _get(d, "messages", list, ())
    if not all(type(m) is dict for m in messages):
        bad = next(m for m in messages if type(m) is not dict)
        raise RecordError(f"a message is {_kind(bad)}, not an object")
    return AttemptRecord(
        scenario, target, run, status,
        reason if type(reason) is str else "",
        started if type(started) is str else "",
        answer if type(answer) is str else "" if answer is None else str(answer),
        tuple([_call(c) for c in _get(d, "calls", list, ())]),
        tuple(messages),
        _get(d, "steps", int, 0),
        float(latency) if type(latency) is float or type(latency) is int else None,
        None if tokens is None else
        Tokens(_count(tokens.get("prompt")), _count(tokens.get("completion"))),
        _get(d, "retries", int, 0),
        tuple([_model_call(m) for m in _get(d, "model_calls", list, ())]),
        tuple([_check(c) for c in _get(d, "checks", list, ())]),
        None if type(err) is not dict else AttemptError(
            str(err.get("kind") or "unknown"), str(err.get("message") or ""),
            err.get("status") if type(err.get("status")) is int else None),
        failure if type(failure) is str and failure else None,
        _failure_kind(get("failure_kind"), failure),
        *(_conversation(d) if "turns" in d or "history" in d or "goal_reached" in d
          else ((), 0, None)),
        stderr=_get(d, "stderr", str, ""),
        mcp=mcp if mcp in MCP_USES else None,
        world=_world(d),
        world_turns=tuple(tuple(_world({"world": t}) or ()) for t in
                          _get(d, "world_turns", list, ())),
        user_messages=_texts(_get(d, "user_messages", list, ()), "a user message"),
        ended_by=_get(d, "ended_by", str, None),
        retried=tuple([_retried(t) for t in _get(d, "retried", list, ())]),
    )


def _retried(d: Any) -> Retried:
    t = _obj(d, "a turn sent again")
    turn, kind, reason = t.get("turn"), t.get("kind"), t.get("reason")
    if type(turn) is not int:
        raise RecordError("a turn sent again has no 'turn' (a number)")
    gone = _get(t, "discarded", list, ())
    return Retried(turn, kind if type(kind) is str else "", reason if type(reason) is str
                   else "", tuple(_obj(c, "a discarded call") for c in gone))


def _texts(values: list[Any], what: str) -> tuple[str, ...]:
    for v in values:
        if type(v) is not str:
            raise RecordError(f"{what} is {_kind(v)}, not text")
    return tuple(values)


def _world(d: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...] | None:
    if "world" not in d:
        return None
    made = _get(d, "world", list)
    for c in made:
        if type(_obj(c, "a change of the world").get("table")) is not str:
            raise RecordError("a change of the world has no 'table'")
    return tuple(made)


def failure_kind(failure: str) -> str:
    """The kind of a loop failure, from its words: for lines written before the kind was
    kept (the loop's own words for each, dsl/execution/loop.py and
    dsl/execution/conversation.py)."""
    if "reached max_steps" in failure:
        return "max_steps"
    if "waiting for confirmation" in failure:
        return "nothing_to_confirm"
    return "model_output"


def _failure_kind(kind: Any, failure: Any) -> str | None:
    if type(failure) is not str or not failure:
        return None
    return kind if type(kind) is str and kind else failure_kind(failure)


def _conversation(d: dict[str, Any]) -> tuple[tuple[Turn, ...], int, bool | None]:
    """A conversation's turns, its number of history messages, whether its simulated user
    reached its goal (only lines of conversations, or with history, have them)."""
    goal = d.get("goal_reached")
    return (tuple([_turn(t) for t in _get(d, "turns", list, ())]),
            _get(d, "history", int, 0), goal if type(goal) is bool else None)


def _count(value: Any) -> int:
    return value if type(value) is int and value >= 0 else 0
