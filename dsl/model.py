"""The values that flow between stages: frozen values (msgspec Structs), no behaviour
beyond small derived properties.

``compile`` produces a :class:`Plan` (scenarios × targets × runs with compiled checks);
a target's agent produces one :class:`AttemptData` per (scenario, target, run index), which
the checks read; ``run`` turns it into an :class:`~dsl.store.AttemptRecord`, one JSON line
of ``results.jsonl``, which ``summarize`` and ``report`` read back.

What a record keeps of an attempt — its calls (:class:`Call`), turns (:class:`Turn`),
:class:`Tokens`, the judge's answers (:class:`JudgeAnswer`, :class:`Evidence`) and each
criterion's :class:`CriterionResult` — the store reads and writes as they are
(:mod:`dsl.store.typed`): each Struct's fields are the keys of its JSON object, in order;
``only_when_set`` names the keys written only when they differ from their default, and a
class whose rule depends on its other fields says it in its ``unwritten()``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal, NamedTuple, TypeVar

import msgspec
from msgspec.structs import force_setattr

from .errors import Span
from .settings import TargetSettings

Action = Literal["read", "create", "update", "delete"]
ACTIONS: tuple[Action, ...] = ("read", "create", "update", "delete")

CheckStatus = Literal["pass", "fail", "unsure", "error", "not_evaluated"]
# not_evaluated: the check's turn was never played (an earlier turn failed, a confirm had
# nothing waiting): it says nothing about the agent and never counts as broken

# What the person does in one turn of a conversation: says something, or presses confirm
# or cancel on the calls the agent holds for confirmation.
TurnKind = Literal["say", "confirm", "cancel"]
TURN_KINDS: tuple[TurnKind, ...] = ("say", "confirm", "cancel")

SCHEMA_VERSION = 1

S = TypeVar("S")


class ToolAnswer(msgspec.Struct, frozen=True):
    """One entry of a fake tool's ``answers``: when the call's arguments include every
    argument of ``when`` with an equal value, the tool returns ``returns`` — or fails with
    ``error`` (dsl/compiler/faketools.py answers a call)."""

    when: Mapping[str, Any]
    returns: Any
    span: Span
    error: str | None = None
    template: Any = None  # renders ``returns`` (or ``error``) when it holds templates


class ToolSpec(msgspec.Struct, frozen=True):
    """A fake tool: what the model sees (name, description, input_schema) and what it
    gets back when it calls it: the first of ``answers`` whose arguments match, else
    ``returns`` (fixed data, or data whose strings are templates over ``args``); a tool
    with ``error`` always fails with that text."""

    name: str
    description: str
    input_schema: Mapping[str, Any]
    action: Action
    confirm: bool
    returns: Any
    span: Span
    template: Any = None  # renders ``returns`` when it holds templates
    answers: tuple[ToolAnswer, ...] = ()
    error: str | None = None  # the tool always fails with this text
    has_returns: bool = True  # False: only ``answers`` (no match is an error the model sees)
    # Whether the author wrote the input_schema: True, False (the tool takes no arguments
    # as the model sees it), None when it cannot be trusted (not valid): lint checks the
    # arguments a check expects against it only when True (dsl/compiler/arguments.py).
    args_declared: bool | None = True
    table: TableAction | None = None  # ``table:``: the tool acts on a table of the world
    # ``ends_conversation: true`` (a transfer to a human): once it is called, the
    # conversation ends after that turn
    ends_conversation: bool = False

    def openai(self) -> dict[str, Any]:
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": dict(self.input_schema),
            },
        }


class Located(msgspec.Struct, frozen=True):
    """A column named in a table tool's ``where``, ``set``, ``row`` or ``fields``, where it
    is written (lint checks it against the table's columns)."""

    key: str  # where | set | row | fields | compute | append (of the tool or an effect)
    column: str
    span: Span


@dataclass(frozen=True, slots=True)
class RuleExpr:
    """An expression of a table tool's rules (``require``'s ``if``, ``compute``, an
    effect's ``if``), as written: ``locate`` turns an offset in it into its place in the
    file (dsl/compiler/rules.py compiles it against the world it runs on)."""

    source: str
    span: Span
    locate: Callable[[int], Span] = field(compare=False, repr=False)
    condition: bool = True  # it must be true or false (require, if); compute: any value


class Rule(msgspec.Struct, frozen=True):
    """One entry of ``require``: when ``condition`` is false the call is refused, and the
    agent gets ``otherwise`` (the ``else`` text, or its template over args and row)."""

    condition: RuleExpr
    otherwise: Any  # text, or a LazyTemplate
    span: Span


class TableStep(msgspec.Struct, frozen=True):
    """One step of a table tool's call (dsl/compiler/rules.py): its own (the tool's
    ``table``, ``action``, ``where`` ...) or one of its ``effects``. Values of ``where``,
    ``set``, ``row`` and ``append`` are data whose strings may be templates;
    ``compute`` maps a column to an expression; ``when`` is the effect's ``if``."""

    table: str
    action: Action
    span: Span  # the table's name, as written
    where: tuple[tuple[str, Any], ...] = ()
    set: tuple[tuple[str, Any], ...] = ()
    row: tuple[tuple[str, Any], ...] = ()
    compute: tuple[tuple[str, RuleExpr], ...] = ()
    append: tuple[tuple[str, Any], ...] = ()
    require: tuple[Rule, ...] = ()
    when: RuleExpr | None = None
    places: tuple[Located, ...] = ()


class TableAction(msgspec.Struct, frozen=True):
    """What a fake tool with ``table:`` does to that table of the world
    (dsl/compiler/world.py): its ``action`` on the rows ``where`` matches (each value fixed
    or a template over the call), ``set`` (update), ``row`` (create), the columns it answers
    (``fields``; None: all), ``one`` (read: the single row, or an error). ``returns``, when
    the author wrote one, replaces the answer (a template that may read ``rows``).
    ``require`` refuses a call, ``compute`` and ``append`` change columns, and
    ``effects`` are further steps of the same call, all or nothing
    (dsl/compiler/rules.py)."""

    table: str
    span: Span  # the table's name, as written
    where: tuple[tuple[str, Any], ...] = ()  # (column, value or its template)
    set: tuple[tuple[str, Any], ...] = ()
    row: tuple[tuple[str, Any], ...] = ()
    fields: tuple[str, ...] | None = None
    one: bool = False
    returns: bool = False  # the tool's own ``returns`` replaces the rows as the answer
    places: tuple[Located, ...] = ()
    compute: tuple[tuple[str, RuleExpr], ...] = ()
    append: tuple[tuple[str, Any], ...] = ()
    require: tuple[Rule, ...] = ()
    effects: tuple[TableStep, ...] = ()
    written: str = ""  # the rules and effects as written (JSON), for the plan's fingerprint


class WorldTable(msgspec.Struct, frozen=True):
    """A table of the world (``world:`` of the suite, ``given.world`` of a scenario): rows
    whose identity is their ``id``. ``columns``: every column a row has, in order, each
    where it is first written; ``ids``: where each row's id is written."""

    name: str
    rows: tuple[Mapping[str, Any], ...]
    span: Span  # the table's name, as written
    columns: Mapping[str, Span]
    file: str = ""  # the CSV or JSONL file it was read from ("" when written inline)


class WorldRun(msgspec.Struct, frozen=True):
    """The world of one attempt: its tables at the start and at the end (table → rows),
    and in a conversation as each turn ended (what that turn's own checks see)."""

    before: Mapping[str, tuple[Mapping[str, Any], ...]]
    after: Mapping[str, tuple[Mapping[str, Any], ...]]
    turns: tuple[Mapping[str, tuple[Mapping[str, Any], ...]], ...] = ()

    def at_turn(self, index: int) -> WorldRun:
        """The world as turn ``index`` (0-based) left it."""
        if index >= len(self.turns):
            return self
        return WorldRun(self.before, self.turns[index], self.turns[:index + 1])


class JudgeAnswer(msgspec.Struct, frozen=True, gc=False):
    """What the judge answered to one question, as a judged check keeps it for people to
    read (its prompt, its replies, its verdict) and for the summary to count (cached,
    tokens)."""

    only_when_set: ClassVar[tuple[str, ...]] = ("p_pass", "logprobs", "raw_reply")

    judge_model: str = ""
    verdict: str = ""  # pass | fail | unsure | error
    score: float | None = None
    confidence: float | None = None
    reason: str = ""
    prompt: str = ""
    replies: tuple[str, ...] = ()  # every reply asked for, the last one read
    cached: bool = False
    cache_key: str = ""
    tokens: int = 0
    p_pass: float | None = None  # the judge's probability of pass, when it gave one
    logprobs: Mapping[str, Any] | None = None  # logprobs mode: the first token's reading
    # records written before every reply was kept had the last one alone (the store reads
    # it into replies: dsl.store.records)
    raw_reply: str | None = None


class Evidence(JudgeAnswer, frozen=True, gc=False):
    """A judged check's evidence: the judge's answer to its question (the fields it has of
    :class:`JudgeAnswer`), or, for ``criteria``, one answer per criterion (``items``; then
    the answer's own fields are not written)."""

    items: tuple[JudgeAnswer, ...] = ()

    @classmethod
    def of(cls, answer: JudgeAnswer) -> Evidence:
        """The evidence of a check that asked one question."""
        return cls(*msgspec.structs.astuple(answer))

    @property
    def per_item(self) -> bool:
        return bool(self.items)

    @property
    def answers(self) -> tuple[JudgeAnswer, ...]:
        """The judge's answers: one per criterion, or the one it gave."""
        return self.items if self.items else (self,)

    def unwritten(self) -> tuple[str, ...]:
        if self.items:
            return _ANSWER_FIELDS
        return ("items", *(name for name in JudgeAnswer.only_when_set
                           if getattr(self, name) is None))


_ANSWER_FIELDS = JudgeAnswer.__struct_fields__


class CriterionResult(msgspec.Struct, frozen=True, gc=False):
    """One criterion of a ``criteria`` check on one attempt."""

    label: str = ""
    status: CheckStatus = "error"
    score: float | None = None  # 0..10; None when nothing was asked (no answer)
    min_score: float = 0.0
    reason: str = ""


class Outcome(msgspec.Struct, frozen=True):
    """What a check concluded about one attempt."""

    status: CheckStatus
    reason: str
    score: float | None = None
    evidence: Evidence | None = None  # the judge's prompt, replies, verdict...
    items: tuple[CriterionResult, ...] = ()  # per-criterion results (criteria)
    judge_error: bool = False  # the judge's endpoint failed: the attempt is an error


@dataclass(frozen=True, slots=True)
class CompiledCheck:
    """A check from a scenario's ``then``, ready to evaluate.

    ``shown`` is its :attr:`label`, or what makes it when it is first shown: a plan of
    10,000 data-driven cases compiles 30,000 checks, and making their labels (JSON of each
    parameter) would delay the run's first request by ~60 ms for text no request needs."""

    name: str
    shown: str | Callable[[], str] = field(compare=False)  # see label
    params: object  # the check's own prepared value: only its evaluate reads it
    evaluate: Callable[[Any, AttemptData], Outcome]
    span: Span
    judge: bool = False
    evaluate_async: Callable[[Any, AttemptData, Any], Awaitable[Outcome]] | None = None
    judge_calls: int = 0  # questions asked to the judge per attempt
    turn: int | None = None  # 1, 2, ...: a check of that turn; None: the whole attempt
    always: bool = False  # `always: true`: one failed attempt fails the scenario
    named: bool = False  # the label is the readable name its author gave it (`name:`)
    item: Any = None  # the compile.CheckItem it came from: the check as written, its place

    def run(self, attempt: AttemptData) -> Outcome:
        return self.evaluate(self.params, attempt)

    @property
    def label(self) -> str:
        """How people see the check: ``contains: "18:00"``, or the name its author gave."""
        shown = self.shown
        if not isinstance(shown, str):
            shown = shown()
            object.__setattr__(self, "shown", shown)  # made once, on first use
        return shown


AttachmentKind = Literal["image", "file"]
ATTACHMENT_KINDS: tuple[AttachmentKind, ...] = ("image", "file")


class Attachment(msgspec.Struct, frozen=True):
    """A file the person sends with a message (``attachments:`` of ``given`` or of a
    turn): an ``image`` goes to the model as an image content part (a data URL), a
    ``file`` (UTF-8 text) as a text part headed by its label. ``content`` is the file's
    bytes, read and checked when the scenario compiled (dsl/compiler/attachments.py); records keep
    only the rest (path, kind, MIME type, label, hash). A text file that holds a secret is
    kept redacted (``kept``), and its hash is of that (:func:`dsl.compiler.attachments.
    redact_attachments`)."""

    path: str  # relative to the suite's folder, with '/' (as written)
    kind: AttachmentKind
    mime_type: str
    label: str  # the name the model reads: the label, else the file's name
    sha256: str  # of what is kept: the content, redacted (``kept``) when it holds a secret
    size: int  # bytes (of what is kept)
    span: Span
    content: bytes = b""  # what the model receives
    kept: bytes | None = None  # the content redacted, when that changed it (the run folder's)

    @property
    def stored(self) -> bytes:
        """What the run folder keeps (``attachments/<sha256>``) and the report shows: the
        content with every secret redacted, like every other text."""
        return self.content if self.kept is None else self.kept

    def ref(self) -> dict[str, Any]:
        """What a record keeps of it (in place of its content)."""
        return {"path": self.path, "kind": self.kind, "mime_type": self.mime_type,
                "label": self.label, "sha256": self.sha256, "size": self.size}


ATTACHMENT_PART = "attachment"  # the content part a record keeps in an attachment's place


def attachment_refs(content: Any) -> list[Mapping[str, Any]]:
    """The attachments of a message's content, as a record keeps them (``Attachment.ref``
    with ``"type": "attachment"``)."""
    if type(content) is not list:
        return []
    return [p for p in content if type(p) is dict and p.get("type") == ATTACHMENT_PART]


class CaseInfo(msgspec.Struct, frozen=True):
    """The case a scenario was expanded from (``cases:`` or ``cases_file:``): its id (its
    ``id`` value, or its 1-based number), its number, its values and where it is
    written (the inline mapping, the JSONL line, the CSV row)."""

    id: str
    number: int
    values: Mapping[str, Any]
    span: Span


class TurnSpec(msgspec.Struct, frozen=True):
    """One scripted turn of a conversation (``when`` as a list): the person says ``text``
    (``say``), or presses confirm or cancel on the pending calls to the tool ``text`` (or
    to every tool: ``all``); ``checks`` look at that turn only; ``attachments`` go with
    what the person says in it."""

    kind: TurnKind
    text: str
    span: Span
    checks: tuple[CompiledCheck, ...] = ()
    attachments: tuple[Attachment, ...] = ()


class SimulatedUser(msgspec.Struct, frozen=True):
    """``when: {user: ...}``: a model of the suite plays the person, with a goal."""

    goal: str
    persona: str
    target: Target
    max_turns: int
    span: Span


class Scenario(msgspec.Struct, frozen=True):
    """One compiled scenario.

    ``message`` is what the person says first (empty with a simulated user). A scenario
    whose ``when`` is a list of turns or a simulated user is a *conversation*: its attempts
    record their turns. ``history`` holds the OpenAI messages of ``given.history`` (the
    conversation starts from them) and ``history_calls`` the tool calls among them, which
    no check counts."""

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
    max_steps: int  # model calls per turn
    turns: tuple[TurnSpec, ...] = ()  # empty: one turn, the person says ``message``
    user: SimulatedUser | None = None
    history: tuple[Mapping[str, Any], ...] = ()
    history_calls: tuple[Call, ...] = ()
    file_runs: int | None = None  # the runs the file asks for, when --runs changed them
    attachments: tuple[Attachment, ...] = ()  # given.attachments: with the first message
    targets: tuple[str, ...] = ()  # the targets it is meant for (empty: every target)
    case: CaseInfo | None = None  # the case it was expanded from
    world: tuple[WorldTable, ...] = ()  # the tables every attempt starts from (a fresh copy)

    def runs_on(self, target: str) -> bool:
        """Is the scenario meant for ``target``? (Others skip it: shown as skipped.)"""
        return not self.targets or target in self.targets

    @property
    def conversation(self) -> bool:
        return bool(self.turns) or self.user is not None

    @property
    def all_checks(self) -> tuple[CompiledCheck, ...]:
        """Every check, in the order a record keeps their results: each turn's, then the
        scenario's own ``then`` (the whole conversation)."""
        if not self.turns:
            return self.checks
        return (*(c for t in self.turns for c in t.checks), *self.checks)

    @property
    def always(self) -> bool:
        """Some check — the scenario's or a turn's — must pass in every attempt
        (``always: true``)."""
        return any(c.always for c in self.all_checks)

    def tool(self, name: str) -> ToolSpec | None:
        for t in self.tools:
            if t.name == name:
                return t
        return None

    @property
    def all_attachments(self) -> tuple[Attachment, ...]:
        """Every file the person sends in this scenario (given's, then each turn's)."""
        return (*self.attachments, *(a for t in self.turns for a in t.attachments))

    def attachments_for(self, turn: int, said_before: bool) -> tuple[Attachment, ...]:
        """What goes with what the person says in turn ``turn`` (0-based; a simulated
        user's turns have none of their own): given.attachments go with the first thing
        the person says."""
        own = self.turns[turn].attachments if turn < len(self.turns) else ()
        return own if said_before else (*self.attachments, *own)


class Target(msgspec.Struct, frozen=True):
    """A system under test, as the suite defines it. ``config`` holds the settings of its
    kind (one frozen Struct per kind: dsl/targets/kinds.py says what each kind is)."""

    name: str
    kind: str  # a key of dsl.targets.kinds.KINDS
    span: Span
    config: TargetSettings
    concurrency: int | None = None
    attempt_timeout_ms: int | None = None  # the whole attempt (all its model calls)

    def settings(self, kind: type[S]) -> S:
        """``config`` as the settings class of the target's kind; TypeError for a target of
        another kind (a mistake in Scenarist, never in the suite)."""
        if not isinstance(self.config, kind):
            raise TypeError(f"the target '{self.name}' is kind: {self.kind}, not "
                            f"{kind.__name__}")
        return self.config


# ``judge.mode: logprobs`` asks for one token: yes or no, or a digit (dsl/judge/logprobs.py)
Kind = Literal["yes_no", "digits"]


class Calibration(msgspec.Struct, frozen=True):
    """``judge.calibration``: the temperature of each kind of question (1.0: as the model
    says)."""

    yes_no: float = 1.0
    digits: float = 1.0

    def of(self, kind: Kind) -> float:
        return self.yes_no if kind == "yes_no" else self.digits


class Prompt(msgspec.Struct, frozen=True):
    """A judge prompt, compiled (``dsl.judge.ask.prompt_from_source``): built in or the
    suite's own; ``version`` goes into every cache key."""

    name: str
    source: str
    version: str
    template: Any  # a compiled Jinja template (dsl/compiler/templates.py)


class JudgeConfig(msgspec.Struct, frozen=True):
    """``judge:`` in scenarist.yaml, compiled (dsl/compiler/suite.py); the judge asks with
    it (dsl/judge/ask.py)."""

    target: Target
    model: str | None = None  # overrides the target's model
    temperature: float = 0.0
    seed: int = 0
    min_confidence: float = 0.8
    max_attempts: int = 3
    cache_dir: Path | None = None  # None: no cache
    prompts: Mapping[str, Prompt] = msgspec.field(default_factory=dict)  # overrides
    mode: str = "json"  # json: the judge's own words; logprobs: its token probabilities
    calibration: Calibration = msgspec.field(default_factory=Calibration)  # logprobs mode

    @property
    def tries(self) -> int:
        """Requests per question at most: logprobs mode asks once (its reading does not
        change with the seed); json mode asks again when the reply cannot be read."""
        return 1 if self.mode == "logprobs" else self.max_attempts


class RedactConfig(msgspec.Struct, frozen=True):
    """``redact:`` in scenarist.yaml: what is replaced by [REDACTED:NAME] before anything
    reaches the judge or a file (``dsl.compiler.redact.redactor_for`` builds it)."""

    env: tuple[str, ...] = ()  # variables whose values are secrets (api_key_env added)
    patterns: Mapping[str, str] = msgspec.field(default_factory=dict)  # name → regular expression
    default_patterns: bool = True


# ``history:`` in scenarist.yaml as written: a PostgreSQL URL or a file (str), false (off);
# None: the default (dsl/history/locate.py reads it)
History = str | bool | None


class Plan(msgspec.Struct, frozen=True):
    """What a run will do: every scenario against every selected target, ``runs`` times."""

    suite_root: str
    suite_file: str
    scenarios: tuple[Scenario, ...]
    targets: tuple[Target, ...]
    concurrency: int
    suite_targets: tuple[Target, ...] = ()  # every target of the suite (python agents use them)
    shard: tuple[int, int] | None = None  # (i, n): this plan is shard i of n
    full_hash: str = ""  # fingerprint of the whole plan, before sharding (merge checks it)
    full_scenarios: tuple[str, ...] = ()  # a shard's: every scenario id of the whole plan, sorted
    judge: JudgeConfig | None = None  # when the suite has one
    redact: RedactConfig | None = None  # the suite's redaction settings
    compare: tuple[tuple[str, str], ...] = ()  # target pairs (old, new) compared in the run
    history: History = None  # the suite's history: setting (dsl/history/locate.py reads it)

    def targets_of(self, scenario: Scenario) -> int:
        """How many of the plan's targets run ``scenario`` (its ``targets:`` skip others)."""
        if not scenario.targets:
            return len(self.targets)
        return sum(scenario.runs_on(t.name) for t in self.targets)

    @property
    def attempts(self) -> int:
        return sum(s.runs * self.targets_of(s) for s in self.scenarios)

    @property
    def judge_calls(self) -> int:
        """Questions the judge is asked if every attempt runs (before retries and cache)."""
        return sum(s.runs * sum(c.judge_calls for c in s.all_checks) * self.targets_of(s)
                   for s in self.scenarios)

    @property
    def skipped(self) -> list[tuple[str, str]]:
        """(scenario, target) pairs the plan does not run: the scenario's ``targets:``
        leave the target out."""
        return [(s.id, t.name) for s in self.scenarios if s.targets
                for t in self.targets if not s.runs_on(t.name)]


class Tokens(msgspec.Struct, frozen=True, gc=False):
    """Tokens a model used; ``total`` is always ``prompt + completion`` (files keep it)."""

    prompt: int = 0
    completion: int = 0
    total: int = 0

    def __post_init__(self) -> None:
        force_setattr(self, "total", self.prompt + self.completion)

    def __add__(self, other: Tokens) -> Tokens:
        return Tokens(self.prompt + other.prompt, self.completion + other.completion)


class Call(msgspec.Struct, frozen=True, gc=False):
    """One tool call the agent made.

    ``args`` is the parsed arguments (``None`` when they were not valid JSON, with the
    text kept in ``raw_args``, which a record keeps only then); ``output`` is what the fake
    tool returned (``None`` while the call is pending confirmation); ``error`` says why a
    call was not executed
    (``invalid-json``, ``unknown-tool``) or that the fake tool answered with an error
    (``tool-error``: its ``error``; ``no-record``: no entry of its ``answers`` matched the
    arguments and it has no ``returns``; ``no-row``: a table tool's ``where`` matched no
    row of the world; ``row-exists``: a table tool's ``create`` gave a new row an id the
    table already has; ``refused``: a rule of a table tool's
    ``require`` was false; ``invalid-args``: a table tool's arguments broke its
    input_schema — neither changed anything). ``decision`` is what the person did
    with a call held for confirmation in a later turn: ``confirmed`` (it ran),
    ``cancelled``, or ``dismissed`` (the person wrote something else instead; it did not
    run).
    """

    id: str = ""
    name: str = ""
    args: Any = None
    raw_args: str = ""
    output: str | None = None
    action: str | None = None
    pending: bool = False
    error: str | None = None
    step: int = 1
    decision: str | None = None

    def unwritten(self) -> tuple[str, ...]:
        """raw_args only for arguments that were not JSON; error and decision when set."""
        return (*(("raw_args",) if self.args is not None else ()),
                *(("error",) if not self.error else ()),
                *(("decision",) if not self.decision else ()))

    @property
    def over_mcp(self) -> bool:
        """A call an agent that runs its own loop made at its MCP endpoint
        (dsl/clients/toolserver.py numbers them ``mcp_1``, ``mcp_2``, …)."""
        return self.id.startswith("mcp_")

    @property
    def executed(self) -> bool:
        """The fake tool ran (an answer that is an error included)."""
        return (not self.pending and self.error not in NOT_RUN
                and self.decision not in NOT_CONFIRMED)

    @property
    def held(self) -> bool:
        """The call waited for the person's confirmation (whatever they did then)."""
        return self.pending or self.decision is not None


NOT_RUN = frozenset({"invalid-json", "unknown-tool", "invalid-args"})  # Call.error: never ran
NOT_CONFIRMED = frozenset({"cancelled", "dismissed"})


class Turn(msgspec.Struct, frozen=True, gc=False):
    """One turn of a conversation, as it ended: what the person did, and what the agent
    did in reply. ``calls`` is how many calls the agent made in this turn (the next ones
    of the attempt's calls, in order); ``decided`` the indexes (in the attempt's calls) of
    the held calls this turn confirmed, cancelled or dismissed; ``messages`` how many
    messages the conversation had when the turn ended."""

    only_when_set: ClassVar[tuple[str, ...]] = ("failure", "simulated")

    kind: TurnKind
    text: str = ""  # what the person said; for confirm and cancel, the tool's name or "all"
    answer: str = ""
    calls: int = 0
    decided: tuple[int, ...] = ()
    steps: int = 0  # model calls in this turn
    messages: int = 0
    failure: str | None = None
    simulated: bool = False  # said by the simulated user


class Retried(msgspec.Struct, frozen=True, gc=False):
    """A turn of an agent that runs its own loop sent again after a try that failed when
    the agent may have acted (an ``http`` target's ``retry: {turns: true}``): which turn,
    why (the endpoint error's kind and words), and the calls that try made — discarded,
    each ``{name, args, output}``, with what they changed in the world undone."""

    turn: int
    kind: str = ""
    reason: str = ""
    discarded: tuple[Mapping[str, Any], ...] = ()


# The checks whose failure no more of the attempt could undo: a forbidden call made, a change
# executed, a call held, an invalid call sent, forbidden words said. In a part of an attempt
# that failed before its checks could decide (:func:`undecided`), such a failure still
# stands — it is what the agent did — while every other outcome there (a pass that rests
# on what never came, a fail for an answer that never came) is *not evaluated*.
FAILS_FOR_GOOD = frozenset({"not_calls", "not_contains", "does_not_modify",
                            "asks_nothing_to_confirm", "valid_args"})


def stands(check: str, status: str) -> bool:
    """Whether a check's outcome stands in a part that failed before its checks could
    decide: only a failure no more of the attempt could undo (:data:`FAILS_FOR_GOOD`)."""
    return status == "fail" and check in FAILS_FOR_GOOD


def undecided(turn: int | None, failure: str | None,
              turns: tuple[Turn, ...] | list[Turn]) -> str | None:
    """Why a check of ``turn`` (1, 2, …; None: the scenario's own, on the whole attempt)
    could not decide on an attempt that failed with ``failure`` (max_steps, a reply the
    server could not parse, a confirm with nothing waiting: the first failure ends the
    attempt) — its reason, *not evaluated* — or None when it could. The checks of turns
    played to their end before the failure decide; those of the turn that failed, of the
    turns never reached and the scenario's own do not: an answer that never came is no
    evidence either way — except a failure that :func:`stands`. The run stage asks it before
    evaluating a check, and readers of records written before it did, after."""
    if turn is None:
        return (None if not failure else
                f"not evaluated: the attempt failed before its checks could decide ({failure})")
    if turn > len(turns):
        ended = next((f"turn {k}: {t.failure}" for k, t in enumerate(turns, 1) if t.failure),
                     "it ended earlier")
        return f"not evaluated: the conversation never reached turn {turn} ({ended})"
    failed = turns[turn - 1].failure
    if failed is None:
        return None
    if not turns[turn - 1].steps:  # the agent was never asked (a confirm with nothing held)
        return f"not evaluated: turn {turn} failed ({failed})"
    return f"not evaluated: turn {turn} failed before its checks could decide ({failed})"


def turn_calls(calls: tuple[Call, ...], turns: tuple[Turn, ...] | list[Turn],
               index: int) -> tuple[Call, ...]:
    """The calls the agent made in turn ``index`` (0-based), as they stood when that turn
    ended: a call the person decided in a later turn is shown still pending."""
    start = sum(t.calls for t in turns[:index])
    mine = calls[start:start + turns[index].calls]
    later = {i for t in turns[index + 1:] for i in t.decided}
    if not later:
        return mine
    return tuple(msgspec.structs.replace(c, pending=True, output=None, decision=None)
                 if start + k in later and c.decision is not None else c
                 for k, c in enumerate(mine))


def ended_by(calls: Sequence[Call], tools: Sequence[ToolSpec]) -> str | None:
    """The tool with ``ends_conversation: true`` whose call ended the conversation: the
    first call to one that ran (held calls count once confirmed); None when none did."""
    ending = {t.name for t in tools if t.ends_conversation}
    if not ending:
        return None
    return next((c.name for c in calls if c.name in ending and not c.pending
                 and c.decision in (None, "confirmed")), None)


class Ending(NamedTuple):
    """What a conversation comes to, as its attempt keeps it (:func:`ending`)."""

    answer: str  # the agent's last answer
    failure: str | None  # ``turn N: why``: the first turn that failed (it ended the talk)
    message: str  # the last thing the person said


def ending(turns: tuple[Turn, ...] | list[Turn], first_message: str) -> Ending:
    """How a conversation of ``turns`` ended, for every agent that holds one (the loop
    over a model, a python agent); ``first_message`` stands for what the person said when
    no turn said anything."""
    failure = next((f"turn {n}: {t.failure}" for n, t in enumerate(turns, 1) if t.failure),
                   None)
    message = next((t.text for t in reversed(turns) if t.kind == "say"), first_message)
    return Ending(turns[-1].answer if turns else "", failure, message)


# How an own-loop agent used its attempt's MCP endpoint (AttemptData.mcp): it listed the
# tools; it connected but never listed them; it never connected at all.
MCP_USES = ("listed", "connected", "never")


class AttemptData(msgspec.Struct, frozen=True):
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
    turns: tuple[Turn, ...] = ()  # a conversation's turns (empty for one message)
    history: tuple[Call, ...] = ()  # the calls of given.history: the agent had their results
    history_messages: int = 0  # messages after the system prompt that were given.history
    goal_reached: bool | None = None  # a simulated user said its goal was reached
    # every message a simulated user wrote, in order: one per turn, then the last one (its
    # stop marker included, or its reply after max_turns), which no turn sent to the agent
    user_messages: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()  # what the person attached (messages refer to
    # each by its hash, as records keep them)
    stderr: str = ""  # what an agent program wrote to its standard error (bounded)
    world: WorldRun | None = None  # the world's tables at the start and end (None: no world)
    tokens_known: bool = True  # False: the agent does not say what it used (http, command)
    # how an agent that runs its own loop (http, command) used its MCP endpoint: MCP_USES;
    # None: not such an agent (or a replay of a cassette that did not keep it)
    mcp: str | None = None
    retried: tuple[Retried, ...] = ()  # turns of an own-loop agent sent again, and why
    # the run's Redactor (dsl/compiler/redact.py): checks see the true values, and
    # no_secrets asks it what a secret is (None: nothing is redacted)
    secrets: Any = None

    def attached(self) -> dict[str, Attachment]:
        """The attachments by their hash (the key a message's attachment part holds)."""
        return {a.sha256: a for a in self.attachments}

    @property
    def pending(self) -> tuple[Call, ...]:
        return tuple(c for c in self.calls if c.pending)

    @property
    def held(self) -> tuple[Call, ...]:
        """The calls that waited for the person's confirmation (pending, or decided in a
        later turn)."""
        return tuple(c for c in self.calls if c.held)

    def turn(self, index: int) -> AttemptData:
        """What turn ``index`` (0-based) produced, as its own checks see it: what the
        person said, the turn's answer and calls, the conversation up to its end."""
        t = self.turns[index]
        said = next((u.text for u in reversed(self.turns[:index + 1]) if u.kind == "say"),
                    self.message)
        return msgspec.structs.replace(
            self, message=said, answer=t.answer,
            calls=turn_calls(self.calls, self.turns, index), steps=t.steps,
            messages=self.messages[:t.messages], failure=t.failure,
            turns=self.turns[:index + 1],
            world=self.world.at_turn(index) if self.world is not None else None)

    @property
    def called_names(self) -> list[str]:
        """Names of the calls the agent made, in order (pending and failed included)."""
        return [c.name for c in self.calls]
