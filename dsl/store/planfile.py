"""``plan.json``: what a run planned, as the run folder keeps it.

:class:`PlanFile` and its parts (frozen msgspec Structs) are the only description of the
file: :func:`write_plan` writes one (the compiler makes it from the live plan:
:func:`dsl.compiler.plan.plan_file`; :func:`plan_json` is its JSON, which ``scenarist plan
--json`` prints) and :func:`read_plan` reads one back — msgspec decodes the file into the
PlanFile, checking ``schema_version`` and every field's type (:mod:`dsl.store.typed`).
Resume and merge compare fingerprints and refuse a plan that changed; the summary, the
report, recheck and conformance read it (never the live Plan).

The file, as written (keys in the order of the Structs' fields; ``file_runs`` only when
``--runs`` changed the runs, ``targets``, ``case``, ``attachments``, ``history``,
``turns`` and ``user`` only for the scenarios that have them; in a check, ``turn``,
``always`` and ``named`` only when set — so plans without them keep their fingerprint)::

    {"schema_version": 1, "suite": PATH, "targets": [{"name", "kind", ...its settings}],
     "scenarios": [{"id", "file", "line", "runs", "min_pass",
                    "checks": [{"check", "label", "judge", "line", "turn"?, "always"?,
                                "named"?}],
                    "description", "tags", "at", "system",
                    "message", "tools": [{"name", "action", "confirm", "description"}],
                    "tool_expectation", "given_when", "max_steps", "file_runs"?, "targets"?,
                    "case"?: {"id", "number", "file", "line", "values"},
                    "attachments"?, "history"?,
                    "turns"?: [{"kind", "text", "line", "attachments"?}],
                    "user"?: {"goal", "persona", "target", "max_turns"},
                    "expected_tools", "world"?: {TABLE: FINGERPRINT},
                    "tools_given"?: FINGERPRINT}],
     "attempts", "max_model_calls", "concurrency", "shard": [I, N] | null,
     "full_plan": FINGERPRINT,
     "judge": {"target", "model", "min_confidence", "mode", "calibration"?} | null,
     "judge_calls", "full_scenarios"?: [ID],
     "fingerprints"?: {"plan": FINGERPRINT, "scenarios": [FINGERPRINT, ...]}}

``full_scenarios`` and ``fingerprints`` only in a shard's plan. ``full_scenarios`` is the
id of every scenario of the whole plan, sorted — the split is every N-th of them
(:func:`shard_ids`), so ``merge`` can name the scenarios of a shard it was not given.
``fingerprints``: one of everything but the scenarios, and one per scenario, of the JSON as
written. ``merge`` recomputes them from the file it reads and
refuses a plan.json edited after its run, naming the scenario that differs
(:func:`edited`).

A target's settings are its kind's (:func:`dsl.targets.kinds.target_json`): only
``dsl/targets/`` reads them. Plans written before a field existed read as they always did:
``tool_expectation`` from ``expected_tools``, the rest at its default.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

import msgspec

from ..model import SCHEMA_VERSION
from ..toolcalls import ToolExpectation, expectation_of
from .jsonfile import read_file, write_json
from .typed import Reading, from_data, json_data

PLAN = "plan.json"


class PlannedTarget:
    """A target as a plan keeps it: its name, its kind, and its kind's settings as the kind
    writes them down (never a key; :func:`dsl.targets.kinds.target_json`). In the file it
    is one object, ``{"name", "kind", ...its settings}``, which no Struct can hold (its
    keys are the kind's): msgspec reads and writes it through :meth:`from_json` and
    :meth:`as_json` (:mod:`dsl.store.typed`'s hooks). Frozen, compared by value."""

    __slots__ = ("kind", "name", "settings")
    name: str
    kind: str
    settings: Mapping[str, Any]  # read only by dsl/targets/ (what it runs, how it is shown)

    def __init__(self, name: str, kind: str, settings: Mapping[str, Any]) -> None:
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "kind", kind)
        object.__setattr__(self, "settings", MappingProxyType(dict(settings)))

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"a PlannedTarget is frozen: cannot set {name}")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, PlannedTarget) and self.as_json() == other.as_json()

    def __hash__(self) -> int:
        return hash((self.name, self.kind))

    def __repr__(self) -> str:
        return f"PlannedTarget({self.name!r}, {self.kind!r}, {dict(self.settings)!r})"

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, **self.settings}

    @classmethod
    def from_json(cls, data: Any) -> PlannedTarget:
        """From the file's object (a ValueError in words when it is not one)."""
        if type(data) is not dict:
            raise ValueError(f"is {_what(data)}, not an object")
        for key in ("name", "kind"):
            value = data.get(key)
            if type(value) is not str:
                raise ValueError(f"{key} is missing" if value is None else
                                 f"{key} is {_what(value)}, not text")
        return cls(data["name"], data["kind"],
                   {k: v for k, v in data.items() if k not in ("name", "kind")})


def _what(value: Any) -> str:
    return {bool: "true/false", int: "a whole number", float: "a decimal number",
            list: "a list", str: "text"}.get(type(value), "null")


class PlannedCheck(msgspec.Struct, frozen=True, gc=False):
    only_when_set: ClassVar[tuple[str, ...]] = ("turn", "always", "named")

    check: str  # the check's key: contains
    label: str  # how people see it: contains: "18:00", or the name its author gave
    judge: bool = False
    line: int = 0
    turn: int | None = None  # a check of that turn (1, 2, ...)
    always: bool = False  # it must pass in every attempt
    named: bool = False  # the label is a name its author gave (name:)


class PlannedTool(msgspec.Struct, frozen=True, gc=False):
    name: str
    action: str | None = None
    confirm: bool = False
    description: str = ""


class PlannedCase(msgspec.Struct, frozen=True, gc=False):
    """The case a scenario was expanded from, and where it is written."""

    id: str
    number: int
    file: str
    line: int
    values: Mapping[str, Any]


class PlannedTurn(msgspec.Struct, frozen=True, gc=False):
    only_when_set: ClassVar[tuple[str, ...]] = ("attachments",)

    kind: str  # say | confirm | cancel
    text: str
    line: int = 0
    attachments: tuple[Mapping[str, Any], ...] = ()  # what an attachment's record keeps


class PlannedUser(msgspec.Struct, frozen=True, gc=False):
    goal: str
    persona: str
    target: str
    max_turns: int


class PlannedScenario(msgspec.Struct, frozen=True, gc=False):
    """One scenario as the plan keeps it."""

    only_when_set: ClassVar[tuple[str, ...]] = (
        "file_runs", "targets", "case", "attachments", "history", "turns", "user", "world",
        "tools_given")

    id: str
    file: str
    line: int
    runs: int  # what the run planned (after --runs)
    min_pass: int
    checks: tuple[PlannedCheck, ...] = ()  # Scenario.all_checks' order: a record's too
    description: str = ""
    tags: tuple[str, ...] = ()
    at: str = ""  # the moment, ISO 8601
    system: str = ""
    message: str = ""
    tools: tuple[PlannedTool, ...] = ()
    # what it expects of the tool calls, as ToolExpectation.as_json writes it (None: nothing)
    expectation: Mapping[str, Any] | None = msgspec.field(default=None,
                                                          name="tool_expectation")
    given_when: str = ""  # the fingerprint of its question (dsl.compiler.plan)
    max_steps: int = 0
    file_runs: int | None = None  # what the file asks, when --runs changed it
    targets: tuple[str, ...] = ()  # the targets it is meant for (empty: every one)
    case: PlannedCase | None = None
    attachments: tuple[Mapping[str, Any], ...] = ()
    history: tuple[Mapping[str, Any], ...] = ()  # given.history: OpenAI messages
    turns: tuple[PlannedTurn, ...] = ()
    user: PlannedUser | None = None
    # every tool expected somewhere (for readers of plans written before tool_expectation)
    expected_tools: tuple[str, ...] = ()

    # a scenario with a world: each table's fingerprint (its rows), and the tools' (all they
    # are and do); what recheck names when the question changed (dsl/pipeline/recheck.py)
    world: Mapping[str, str] = msgspec.field(default_factory=dict)
    tools_given: str = ""

    @property
    def tool_expectation(self) -> ToolExpectation | None:
        """What it expects of the tool calls (a plan written before ``tool_expectation``
        kept only ``expected_tools``)."""
        if self.expectation is not None:
            return ToolExpectation.from_json(self.expectation)
        return expectation_of({"expected_tools": self.expected_tools})

    @property
    def always(self) -> bool:
        """It has a check marked ``always: true``."""
        return any(c.always for c in self.checks)

    def runs_on(self, target: str) -> bool:
        """Does it run on ``target``? (Its ``targets:`` skip the others, as
        :meth:`dsl.model.Scenario.runs_on` says for the live plan.)"""
        return not self.targets or target in self.targets

    @property
    def runs_asked(self) -> int:
        """The runs its file asks for (before ``--runs``)."""
        return self.runs if self.file_runs is None else self.file_runs

    @property
    def named_labels(self) -> frozenset[str]:
        """The labels that are names their authors gave (shown as words, not as code)."""
        return frozenset(c.label for c in self.checks if c.named)


class Calibration(msgspec.Struct, frozen=True, gc=False):
    """logprobs mode: the temperatures the judge's readings are calibrated at."""

    yes_no: float
    digits: float


class PlannedJudge(msgspec.Struct, frozen=True, gc=False):
    only_when_set: ClassVar[tuple[str, ...]] = ("calibration",)

    target: str
    model: str | None = None
    min_confidence: float = 0.0
    mode: str = "json"
    calibration: Calibration | None = None  # logprobs mode


class Fingerprints(msgspec.Struct, frozen=True, gc=False):
    """What a shard's plan.json keeps to show it was not edited (:func:`edited`)."""

    plan: str
    scenarios: tuple[str, ...]


class PlanFile(msgspec.Struct, frozen=True, kw_only=True, tag_field="schema_version",
               tag=SCHEMA_VERSION):
    """plan.json: the targets, the scenarios, and what the run may cost."""

    only_when_set: ClassVar[tuple[str, ...]] = ("full_scenarios", "fingerprints")

    suite: str | None = None
    targets: tuple[PlannedTarget, ...]
    scenarios: tuple[PlannedScenario, ...]
    attempts: int = 0
    max_model_calls: int = 0
    concurrency: int = 0
    shard: tuple[int, int] | None = None
    full_plan: str = ""  # the whole plan's fingerprint (a shard's: the plan it is part of)
    judge: PlannedJudge | None = None
    judge_calls: int = 0
    full_scenarios: tuple[str, ...] = ()  # a shard's: every scenario of the whole plan, sorted
    fingerprints: Fingerprints | None = None  # a shard's (plan_json makes them)

    @property
    def target_names(self) -> list[str]:
        return [t.name for t in self.targets]

    def keys(self) -> list[tuple[str, str]]:
        """Every scenario × target it plans (those its scenarios' ``targets:`` skip too)."""
        return [(s.id, t.name) for s in self.scenarios for t in self.targets]

    def replace(self, **changes: Any) -> PlanFile:
        return msgspec.structs.replace(self, **changes)


# ---- writing -----------------------------------------------------------------------------

def plan_json(p: PlanFile) -> dict[str, Any]:
    """The plan as the JSON object of plan.json (a shard's with its ``fingerprints``)."""
    out: dict[str, Any] = json_data(p.replace(fingerprints=None))
    if p.shard:
        out["fingerprints"] = fingerprints(out)
    return out


def _fingerprint(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def fingerprints(plan: Mapping[str, Any]) -> dict[str, Any]:
    """What a shard's plan.json keeps to show it was not edited: a fingerprint of all but
    its scenarios, and one of each scenario, in order."""
    rest = {k: v for k, v in plan.items() if k not in ("scenarios", "fingerprints")}
    scenarios = plan.get("scenarios")
    return {"plan": _fingerprint(rest),
            "scenarios": [_fingerprint(s) for s in scenarios]
            if isinstance(scenarios, list) else []}


def edited(plan: Mapping[str, Any]) -> str | None:
    """What was changed in a shard's plan.json (its JSON as read) since its run wrote it,
    in words — "the scenario X", "its targets, judge or counts" — or None when it is as
    written (or has no fingerprints: it is not a shard's, or an older Scenarist's)."""
    kept = plan.get("fingerprints")
    if not isinstance(kept, dict):
        return None
    now = fingerprints(plan)
    said = kept.get("scenarios")
    scenarios = plan.get("scenarios")
    if isinstance(said, list) and isinstance(scenarios, list):
        for i, s in enumerate(scenarios):
            if i >= len(said) or said[i] != now["scenarios"][i]:
                name = s.get("id") if isinstance(s, dict) else None
                return f"the scenario {name}" if isinstance(name, str) \
                    else f"the scenario at scenarios[{i}]"
        if len(said) != len(scenarios):
            return "its list of scenarios"
    if kept.get("plan") != now["plan"]:
        return "its targets, judge or counts"
    return None


def shard_ids(ordered: Sequence[str], i: int, n: int) -> list[str]:
    """The scenarios of shard ``i`` of ``n`` (from 1): every n-th of the whole plan's
    scenario ids, sorted, starting at the i-th — the one rule of ``run --shard`` and of
    ``merge``'s scenarios not run."""
    return [sid for k, sid in enumerate(ordered) if k % n == i - 1]


def write_plan(run_dir: Path, plan: PlanFile | Mapping[str, Any]) -> None:
    """Write plan.json into ``run_dir`` (``plan``: a PlanFile, or the JSON of one already
    made by :func:`plan_json`)."""
    write_json(run_dir / PLAN, plan_json(plan) if isinstance(plan, PlanFile) else plan)


# ---- reading -----------------------------------------------------------------------------

def plan_from_json(data: Any, where: object = "the plan") -> PlanFile:
    """A plan from plan.json's JSON already parsed, its schema_version checked when it has
    one (RunDirError as :func:`read_plan`'s)."""
    return from_data(data, PlanFile, Reading(where, "a run's plan"), versioned=False)


def read_plan(run_dir: Path) -> PlanFile:
    """The run folder's plan.json. RunDirError (with the file) when it is missing, of
    another version, or not a plan."""
    return read_file(run_dir / PLAN, PlanFile, "a run's plan")
