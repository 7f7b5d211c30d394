"""The values that flow between stages: frozen dataclasses, no behaviour beyond small
derived properties.

``compile`` produces a :class:`Plan` (scenarios × targets × runs with compiled checks);
a target's agent produces one :class:`AttemptData` per (scenario, target, run index), which
the checks read; ``run`` turns it into an :class:`~dsl.store.AttemptRecord`, one JSON line
of ``results.jsonl``, which ``summarize`` and ``report`` read back.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple

from .errors import Span

Action = Literal["read", "create", "update", "delete"]
ACTIONS: tuple[Action, ...] = ("read", "create", "update", "delete")

CheckStatus = Literal["pass", "fail", "unsure", "error"]

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """A fake tool: what the model sees (name, description, input_schema) and what it
    gets back when it calls it (``returns``: fixed data, or a template over ``args``)."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    action: Action
    confirm: bool
    returns: Any
    span: Span
    template: Any = None  # a compiled jinja2 Template when ``returns`` is a template
    # Whether the author wrote the input_schema: True, False (the tool takes no arguments
    # as the model sees it), None when it cannot be trusted (not valid): lint checks the
    # arguments a check expects against it only when True (dsl/arguments.py).
    args_declared: bool | None = True

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.input_schema),
            },
        }


@dataclass(frozen=True, slots=True)
class Outcome:
    """What a check concluded about one attempt."""

    status: CheckStatus
    reason: str
    score: float | None = None
    evidence: Mapping[str, Any] | None = None  # the judge's prompt, replies, verdict...
    items: tuple[Mapping[str, Any], ...] = ()  # per-criterion results (criteria)
    judge_error: bool = False  # the judge's endpoint failed: the attempt is an error


@dataclass(frozen=True, slots=True)
class CompiledCheck:
    """A check from a scenario's ``then``, ready to evaluate."""

    name: str
    label: str  # how people see it: contains: "18:00"
    params: Any  # the check's own prepared parameters
    evaluate: Callable[[Any, AttemptData], Outcome]
    span: Span
    judge: bool = False
    evaluate_async: Callable[[Any, AttemptData, Any], Awaitable[Outcome]] | None = None
    judge_calls: int = 0  # questions asked to the judge per attempt
    always: bool = False  # `always: true`: one failed attempt fails the scenario
    named: bool = False  # the label is the readable name its author gave it (`name:`)
    item: Any = None  # the compile.CheckItem it came from: the check as written, its place

    def run(self, attempt: AttemptData) -> Outcome:
        return self.evaluate(self.params, attempt)


@dataclass(frozen=True, slots=True)
class Scenario:
    """One compiled scenario."""

    id: str
    file: str
    span: Span
    description: str
    tags: tuple[str, ...]
    at: dt.datetime  # aware: the moment the person speaks, in its own UTC offset
    system: str
    tools: tuple[ToolSpec, ...]
    message: str
    checks: tuple[CompiledCheck, ...]
    runs: int
    min_pass: int
    max_steps: int
    file_runs: int | None = None  # the runs the file asks for, when --runs changed them

    @property
    def always(self) -> bool:
        """Some check must pass in every attempt (``always: true``)."""
        return any(c.always for c in self.checks)

    @property
    def most_calls(self) -> int:
        """The most model calls this scenario can make against one target."""
        return self.runs * self.max_steps

    def tool(self, name: str) -> ToolSpec | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None


@dataclass(frozen=True, slots=True)
class Target:
    """A system under test, as the suite defines it. ``config`` holds the settings of its
    kind (one frozen dataclass per kind: dsl/targets/kinds.py says what each kind is)."""

    name: str
    kind: str  # a key of dsl.targets.kinds.KINDS
    span: Span
    config: Any
    concurrency: int | None = None
    attempt_timeout_ms: int | None = None  # the whole attempt (all its model calls)


@dataclass(frozen=True, slots=True)
class Plan:
    """What a run will do: every scenario against every selected target, ``runs`` times."""

    suite_root: str
    suite_file: str
    scenarios: tuple[Scenario, ...]
    targets: tuple[Target, ...]
    concurrency: int
    suite_targets: tuple[Target, ...] = ()  # every target of the suite (python agents use them)
    shard: tuple[int, int] | None = None  # (i, n): this plan is shard i of n
    full_hash: str = ""  # fingerprint of the whole plan, before sharding (merge checks it)
    judge: Any = None  # a JudgeConfig when the suite has one
    redact: Any = None  # the suite's redaction settings (RedactConfig)

    @property
    def attempts(self) -> int:
        return sum(s.runs for s in self.scenarios) * len(self.targets)

    @property
    def max_model_calls(self) -> int:
        return sum(s.most_calls for s in self.scenarios) * len(self.targets)

    @property
    def judge_calls(self) -> int:
        """Questions the judge is asked if every attempt runs (before retries and cache)."""
        return sum(s.runs * sum(c.judge_calls for c in s.checks)
                   for s in self.scenarios) * len(self.targets)


@dataclass(frozen=True, slots=True)
class Tokens:
    prompt: int = 0
    completion: int = 0

    @property
    def total(self) -> int:
        return self.prompt + self.completion

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.prompt + other.prompt, self.completion + other.completion)


class Call(NamedTuple):
    """One tool call the agent made.

    ``args`` is the parsed arguments (``None`` when they were not valid JSON, with the
    text kept in ``raw_args``); ``output`` is what the fake tool returned (``None`` when the
    call is pending confirmation or was not executed); ``error`` says why a call was not
    executed (``invalid-json``, ``unknown-tool``).

    A named tuple rather than a dataclass: as frozen, and built four times faster — every
    attempt record read back (a report reads 100,000) holds several.
    """

    id: str
    name: str
    args: Any
    raw_args: str
    output: str | None
    action: str | None
    pending: bool = False
    error: str | None = None
    step: int = 1

    @property
    def executed(self) -> bool:
        return not self.pending and self.error is None


@dataclass(frozen=True, slots=True)
class AttemptData:
    """What one attempt produced — everything a check may look at."""

    message: str
    answer: str
    calls: tuple[Call, ...]
    at: dt.datetime
    tools: tuple[ToolSpec, ...]
    steps: int
    latency_ms: float
    tokens: Tokens
    messages: tuple[Mapping[str, Any], ...] = ()
    failure: str | None = None  # the loop itself failed the attempt (max_steps)
    failure_kind: str | None = None  # max_steps, or model_output (dsl/errors.py explains)
    retries: int = 0  # requests retried after 429/5xx/timeouts
    model_calls: tuple[Mapping[str, Any], ...] = ()  # per model call: latency, tokens, ...

    @property
    def pending(self) -> tuple[Call, ...]:
        return tuple(c for c in self.calls if c.pending)

    @property
    def called_names(self) -> list[str]:
        """Names of the calls the agent made, in order (pending and failed included)."""
        return [c.name for c in self.calls]
