"""The attempt record: what one attempt left behind, as ``results.jsonl`` holds it.

:class:`AttemptRecord` and its parts are the only description of a line of
``results.jsonl``; :func:`record_json` writes one and :func:`record_from_json` reads one
back, checking ``schema_version`` and every field's type. The run writes records, and
the scheduler (resume), the summary, the report, merge and recheck read them — all through
these two functions, never by key.

One line, as written (keys in this order; ``raw_args`` only when the arguments were not
valid JSON, ``error`` only when a call was not executed, ``items`` and ``evidence`` only
when a check has them)::

    {"schema_version": 1, "scenario": ID, "target": NAME, "run": N, "seed": N,
     "status": "pass" | "fail" | "unsure" | "error", "reason": TEXT,
     "started_at": ISO-8601, "answer": TEXT,
     "calls": [{"id", "name", "args", "output", "action", "pending", "step",
                "raw_args"?, "error"?}],
     "messages": [OpenAI chat messages], "steps": N, "latency_ms": MS | null,
     "tokens": {"prompt", "completion", "total"}, "retries": N,
     "model_calls": [{"latency_ms", "finish_reason", "tokens", "retries"}],
     "checks": [{"check", "label", "status", "score", "reason", "items"?, "evidence"?}],
     "error": {"kind", "message", "status"} | null}
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..model import SCHEMA_VERSION, Call, CheckStatus, Tokens
from ..verdict import AttemptStatus

STATUSES = ("pass", "fail", "unsure", "error")


class RecordError(ValueError):
    """A line of results.jsonl that is not an attempt record (the reader adds file:line)."""


@dataclass(frozen=True, slots=True)
class CheckResult:
    """One check's outcome on one attempt, as stored."""

    check: str  # the check's key: contains
    label: str  # how people see it: contains: "18:00"
    status: CheckStatus
    reason: str
    score: float | None = None
    items: tuple[Mapping[str, Any], ...] = ()  # per criterion (criteria)
    evidence: Mapping[str, Any] | None = None  # the judge's reply, confidence, ...


@dataclass(frozen=True, slots=True)
class AttemptError:
    """Why an attempt ended without a verdict: the endpoint (or the judge) failed."""

    kind: str  # connection, timeout, status, malformed, judge, agent, ...
    message: str
    status: int | None = None  # the HTTP status, when there was one


@dataclass(frozen=True, slots=True)
class ModelCallStat:
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
    tokens: Tokens = Tokens()
    retries: int = 0
    model_calls: tuple[ModelCallStat, ...] = ()
    checks: tuple[CheckResult, ...] = ()
    error: AttemptError | None = None

    @property
    def key(self) -> tuple[str, str, int]:
        return (self.scenario, self.target, self.run)

    @property
    def seed(self) -> int:
        return self.run


# ---- writing -----------------------------------------------------------------------------

def call_json(c: Call) -> dict[str, Any]:
    d: dict[str, Any] = {"id": c.id, "name": c.name, "args": c.args, "output": c.output,
                         "action": c.action, "pending": c.pending, "step": c.step}
    if c.args is None:
        d["raw_args"] = c.raw_args
    if c.error:
        d["error"] = c.error
    return d


def check_json(c: CheckResult) -> dict[str, Any]:
    d: dict[str, Any] = {"check": c.check, "label": c.label, "status": c.status,
                         "score": c.score, "reason": c.reason}
    if c.items:
        d["items"] = [dict(i) for i in c.items]
    if c.evidence is not None:
        d["evidence"] = dict(c.evidence)
    return d


def tokens_json(t: Tokens) -> dict[str, int]:
    return {"prompt": t.prompt, "completion": t.completion, "total": t.total}


def record_json(r: AttemptRecord) -> dict[str, Any]:
    """The record as the JSON object of one results.jsonl line."""
    return {
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
        "tokens": tokens_json(r.tokens),
        "retries": r.retries,
        "model_calls": [{"latency_ms": m.latency_ms, "finish_reason": m.finish_reason,
                         "tokens": m.tokens, "retries": m.retries} for m in r.model_calls],
        "checks": [check_json(c) for c in r.checks],
        "error": (None if r.error is None else
                  {"kind": r.error.kind, "message": r.error.message, "status": r.error.status}),
    }


def record_line(r: AttemptRecord, redact: Callable[[Any], Any] | None = None) -> str:
    """The record as one line of results.jsonl (without the newline), its values redacted
    by ``redact`` (dsl/redact.py: never the serialized text, so the line is valid JSON).
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

def check_version(data: Any, where: object) -> None:
    """Refuse a file (or line) written by another version of Scenarist's formats."""
    from ..errors import RunDirError

    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise RunDirError(
            f"{where} has schema_version {version!r}; this Scenarist reads version "
            f"{SCHEMA_VERSION} (upgrade Scenarist, or re-run to regenerate it)"
        )


_REQUIRED: Any = object()
_NAMES = {str: "text", int: "a whole number", list: "a list", dict: "an object"}


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "true/false"
    if isinstance(value, float):
        return "a decimal number"
    return _NAMES.get(type(value), type(value).__name__)


def _get(d: Mapping[str, Any], key: str, kind: type, default: Any = _REQUIRED) -> Any:
    """``d[key]``, which must be of ``kind`` (JSON's types: a bool is not a number)."""
    value = d.get(key)
    if value is None:
        if default is _REQUIRED:
            raise RecordError(f"'{key}' is missing")
        return default
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise RecordError(f"'{key}' is {_kind(value)}, not {_NAMES.get(kind, kind.__name__)}")
    return value


def _obj(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise RecordError(f"{what} is {_kind(value)}, not an object")
    return value


def _call(d: Any) -> Call:
    d = _obj(d, "a call")
    args = d.get("args")
    raw = d.get("raw_args")
    if not isinstance(raw, str):
        raw = json.dumps(args, ensure_ascii=False)
    output = d.get("output")
    action = d.get("action")
    error = d.get("error")
    return Call(
        id=str(d.get("id") or ""), name=str(_get(d, "name", str)), args=args, raw_args=raw,
        output=output if isinstance(output, str) or output is None else json.dumps(output),
        action=action if isinstance(action, str) else None,
        pending=bool(d.get("pending", False)),
        error=error if isinstance(error, str) else None,
        step=int(_get(d, "step", int, 1)),
    )


def _check(d: Any) -> CheckResult:
    d = _obj(d, "a check")
    status = _get(d, "status", str)
    if status not in STATUSES:
        raise RecordError(f"a check's status is {status!r}, not pass, fail, unsure or error")
    score = d.get("score")
    items = d.get("items") or ()
    evidence = d.get("evidence")
    return CheckResult(
        check=str(_get(d, "check", str)), label=str(d.get("label") or d["check"]),
        status=status, reason=str(d.get("reason") or ""),
        score=float(score) if isinstance(score, int | float) and not isinstance(score, bool)
        else None,
        items=tuple(_obj(i, "a check item") for i in items) if isinstance(items, list) else (),
        evidence=evidence if isinstance(evidence, dict) else None,
    )


def _model_call(d: Any) -> ModelCallStat:
    d = _obj(d, "a model call")
    latency = d.get("latency_ms")
    reason = d.get("finish_reason")
    tokens = d.get("tokens")
    retries = d.get("retries")
    return ModelCallStat(
        float(latency) if isinstance(latency, int | float) else None,
        reason if isinstance(reason, str) else None,
        tokens if isinstance(tokens, int) else 0,
        retries if isinstance(retries, int) else 0)


def record_from_json(d: Any) -> AttemptRecord:
    """A record from the JSON of one results.jsonl line. Raises RecordError (what is wrong,
    in words) for a line that is not a record of this version; RunDirError for another
    schema_version."""
    d = _obj(d, "the line")
    check_version(d, "the line")
    status = _get(d, "status", str)
    if status not in STATUSES:
        raise RecordError(f"'status' is {status!r}, not pass, fail, unsure or error")
    tokens = d.get("tokens")
    tokens = tokens if isinstance(tokens, dict) else {}
    err = d.get("error")
    latency = d.get("latency_ms")
    calls = _get(d, "calls", list, [])
    messages = _get(d, "messages", list, [])
    model_calls = _get(d, "model_calls", list, [])
    checks = _get(d, "checks", list, [])
    answer = d.get("answer")
    return AttemptRecord(
        scenario=_get(d, "scenario", str),
        target=_get(d, "target", str),
        run=_get(d, "run", int),
        status=status,
        reason=str(d.get("reason") or ""),
        started_at=str(d.get("started_at") or ""),
        answer=answer if isinstance(answer, str) else "" if answer is None else str(answer),
        calls=tuple(_call(c) for c in calls),
        messages=tuple(_obj(m, "a message") for m in messages),
        steps=_get(d, "steps", int, 0),
        latency_ms=float(latency) if isinstance(latency, int | float)
        and not isinstance(latency, bool) else None,
        tokens=Tokens(_count(tokens.get("prompt")), _count(tokens.get("completion"))),
        retries=_get(d, "retries", int, 0),
        model_calls=tuple(_model_call(m) for m in model_calls),
        checks=tuple(_check(c) for c in checks),
        error=None if not isinstance(err, dict) else AttemptError(
            str(err.get("kind") or "unknown"), str(err.get("message") or ""),
            err.get("status") if isinstance(err.get("status"), int) else None),
    )


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0
