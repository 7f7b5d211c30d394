"""``plan.json``: what a run planned, as the run folder keeps it.

:class:`PlanFile` and its parts are the only description of the file;
:func:`plan_json` writes one (the compiler makes it from the live plan:
:func:`dsl.compiler.plan.plan_file`) and :func:`plan_from_json` reads one back, checking
``schema_version`` and every field's type. Resume and merge compare fingerprints and refuse
a plan that changed; the summary, the report, recheck and conformance read it (never the
live Plan).

The file, as written (keys in this order; ``file_runs`` only when ``--runs`` changed the
runs, ``targets``, ``case``, ``attachments``, ``history``, ``turns`` and ``user`` only
for the scenarios that have them; in a check, ``turn``, ``always`` and ``named`` only when
set — so plans without them keep their fingerprint)::

    {"schema_version": 1, "suite": PATH, "targets": [{"name", "kind", ...its settings}],
     "scenarios": [{"id", "file", "line", "description", "tags", "at", "system",
                    "message", "tools": [{"name", "action", "confirm", "description"}],
                    "expected_tools", "tool_expectation", "given_when",
                    "checks": [{"check", "label", "judge", "line", "turn"?, "always"?,
                                "named"?}],
                    "runs", "min_pass", "max_steps", "file_runs"?, "targets"?,
                    "case"?: {"id", "number", "file", "line", "values"},
                    "attachments"?, "history"?,
                    "turns"?: [{"kind", "text", "line", "attachments"?}],
                    "user"?: {"goal", "persona", "target", "max_turns"},
                    "world"?: {TABLE: FINGERPRINT}, "tools_given"?: FINGERPRINT}],
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

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NamedTuple

from ..model import SCHEMA_VERSION
from ..toolcalls import ToolExpectation
from .fields import (
    JSONObject,
    counts,
    each,
    maybe,
    maybe_inner,
    need,
    obj,
    shard,
    texts,
)
from .jsonfile import read_file, write_json

PLAN = "plan.json"


class PlannedTarget(NamedTuple):
    """A target as a plan keeps it: its name, its kind, and its kind's settings as the kind
    writes them down (never a key; :func:`dsl.targets.kinds.target_json`)."""

    name: str
    kind: str
    settings: JSONObject  # read only by dsl/targets/ (what it runs, how it is shown)

    def as_json(self) -> dict[str, Any]:
        return {"name": self.name, "kind": self.kind, **self.settings}


class PlannedCheck(NamedTuple):
    check: str  # the check's key: contains
    label: str  # how people see it: contains: "18:00", or the name its author gave
    judge: bool = False
    line: int = 0
    turn: int | None = None  # a check of that turn (1, 2, ...)
    always: bool = False  # it must pass in every attempt
    named: bool = False  # the label is a name its author gave (name:)


class PlannedTool(NamedTuple):
    name: str
    action: str | None
    confirm: bool
    description: str


class PlannedCase(NamedTuple):
    """The case a scenario was expanded from, and where it is written."""

    id: str
    number: int
    file: str
    line: int
    values: JSONObject


class PlannedTurn(NamedTuple):
    kind: str  # say | confirm | cancel
    text: str
    line: int
    attachments: tuple[JSONObject, ...] = ()  # what an attachment's record keeps of it


class PlannedUser(NamedTuple):
    goal: str
    persona: str
    target: str
    max_turns: int


class PlannedScenario(NamedTuple):
    """One scenario as the plan keeps it. (A named tuple, like its parts: a plan of 10,000
    scenarios makes as many while its first attempts run.)"""

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
    tool_expectation: ToolExpectation | None = None
    given_when: str = ""  # the fingerprint of its question (dsl.compiler.plan)
    max_steps: int = 0
    file_runs: int | None = None  # what the file asks, when --runs changed it
    targets: tuple[str, ...] = ()  # the targets it is meant for (empty: every one)
    case: PlannedCase | None = None
    attachments: tuple[JSONObject, ...] = ()
    history: tuple[JSONObject, ...] = ()  # given.history: OpenAI messages
    turns: tuple[PlannedTurn, ...] = ()
    user: PlannedUser | None = None
    # a scenario with a world: each table's fingerprint (its rows), and the tools' (all they
    # are and do); what recheck names when the question changed (dsl/pipeline/recheck.py)
    world: tuple[tuple[str, str], ...] = ()
    tools_given: str = ""

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


class PlannedJudge(NamedTuple):
    target: str
    model: str | None
    min_confidence: float
    mode: str
    calibration: tuple[float, float] | None = None  # logprobs mode: yes_no, digits


@dataclass(frozen=True, slots=True)
class PlanFile:
    """plan.json: the targets, the scenarios, and what the run may cost."""

    suite: str | None
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

    @property
    def target_names(self) -> list[str]:
        return [t.name for t in self.targets]

    def keys(self) -> list[tuple[str, str]]:
        """Every scenario × target it plans (those its scenarios' ``targets:`` skip too)."""
        return [(s.id, t.name) for s in self.scenarios for t in self.targets]

    def replace(self, **changes: Any) -> PlanFile:
        return dataclasses.replace(self, **changes)


# ---- writing -----------------------------------------------------------------------------

def check_json(c: PlannedCheck) -> dict[str, Any]:
    check, label, judge, line, turn, always, named = c
    out: dict[str, Any] = {"check": check, "label": label, "judge": judge, "line": line}
    if turn is not None:
        out["turn"] = turn
    if always:
        out["always"] = True
    if named:
        out["named"] = True
    return out


_TOOL_JSON: dict[int, tuple[PlannedTool, dict[str, Any]]] = {}


def tool_json(t: PlannedTool) -> dict[str, Any]:
    """A tool as a plan writes it; made once for each tool however many scenarios share it
    (a thousand cases share their file's tools; the JSON writer needs no copy)."""
    hit = _TOOL_JSON.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    out = {"name": t.name, "action": t.action, "confirm": t.confirm,
           "description": t.description}
    if len(_TOOL_JSON) > 4096:
        _TOOL_JSON.clear()
    _TOOL_JSON[id(t)] = (t, out)  # the tool is kept: its id stays its own
    return out


def scenario_json(s: PlannedScenario) -> dict[str, Any]:
    e = s.tool_expectation
    out: dict[str, Any] = {
        "id": s.id,
        "file": s.file,
        "line": s.line,
        "description": s.description,
        "tags": list(s.tags),
        "at": s.at,
        "system": s.system,
        "message": s.message,
        "tools": [tool_json(t) for t in s.tools],
        "expected_tools": list(e.all_expected) if e else [],
        "tool_expectation": e.as_json() if e else None,
        "given_when": s.given_when,
        "checks": [{"check": c[0], "label": c[1], "judge": c[2], "line": c[3]}
                   if c[4] is None and not c[5] and not c[6] else check_json(c)
                   for c in s.checks],  # (most checks have no turn, always or name)
        "runs": s.runs,
        "min_pass": s.min_pass,
        "max_steps": s.max_steps,
    }
    if s.file_runs is not None:
        out["file_runs"] = s.file_runs
    if s.targets:
        out["targets"] = list(s.targets)
    if s.case is not None:
        c = s.case
        out["case"] = {"id": c.id, "number": c.number, "file": c.file, "line": c.line,
                       "values": dict(c.values)}
    if s.attachments:
        out["attachments"] = [dict(a) for a in s.attachments]
    if s.history:
        out["history"] = [dict(m) for m in s.history]
    if s.turns:
        out["turns"] = [{"kind": t.kind, "text": t.text, "line": t.line,
                         **({"attachments": [dict(a) for a in t.attachments]}
                            if t.attachments else {})}
                        for t in s.turns]
    if s.user is not None:
        u = s.user
        out["user"] = {"goal": u.goal, "persona": u.persona, "target": u.target,
                       "max_turns": u.max_turns}
    if s.world:
        out["world"] = dict(s.world)
        out["tools_given"] = s.tools_given
    return out


def judge_json(j: PlannedJudge | None) -> dict[str, Any] | None:
    if j is None:
        return None
    out: dict[str, Any] = {"target": j.target, "model": j.model,
                           "min_confidence": j.min_confidence, "mode": j.mode}
    if j.calibration is not None:
        out["calibration"] = {"yes_no": j.calibration[0], "digits": j.calibration[1]}
    return out


def plan_json(p: PlanFile) -> dict[str, Any]:
    """The plan as the JSON object of plan.json (a shard's with its ``fingerprints``)."""
    out: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "suite": p.suite,
        "targets": [t.as_json() for t in p.targets],
        "scenarios": [scenario_json(s) for s in p.scenarios],
        "attempts": p.attempts,
        "max_model_calls": p.max_model_calls,
        "concurrency": p.concurrency,
        "shard": list(p.shard) if p.shard else None,
        "full_plan": p.full_plan,
        "judge": judge_json(p.judge),
        "judge_calls": p.judge_calls,
    }
    if p.shard:
        if p.full_scenarios:
            out["full_scenarios"] = list(p.full_scenarios)
        out["fingerprints"] = fingerprints(out)
    return out


def _fingerprint(data: Any) -> str:
    import hashlib
    import json

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

def _target(d: Any) -> PlannedTarget:
    d = obj(d)
    return PlannedTarget(need(d, "name", str), need(d, "kind", str),
                         {k: v for k, v in d.items() if k not in ("name", "kind")})


_build = tuple.__new__


def _check(d: Any) -> PlannedCheck:
    # a plan of 10,000 scenarios has 60,000 of them: the usual shape read at once, anything
    # else field by field (with its place)
    if type(d) is dict and len(d) == 4:
        check, label, judge, line = d.get("check"), d.get("label"), d.get("judge"), \
            d.get("line")
        if (type(check) is str and type(label) is str and type(judge) is bool
                and type(line) is int):
            return _build(PlannedCheck, (check, label, judge, line, None, False, False))
    d = obj(d)
    return PlannedCheck(need(d, "check", str), need(d, "label", str),
                        maybe(d, "judge", bool, False), maybe(d, "line", int, 0),
                        maybe(d, "turn", int), maybe(d, "always", bool, False),
                        maybe(d, "named", bool, False))


def _tool(d: Any) -> PlannedTool:
    if type(d) is dict:
        name, action, confirm, description = d.get("name"), d.get("action"), \
            d.get("confirm"), d.get("description")
        if (type(name) is str and (action is None or type(action) is str)
                and type(confirm) is bool and type(description) is str):
            return _build(PlannedTool, (name, action, confirm, description))
    d = obj(d)
    return PlannedTool(need(d, "name", str), maybe(d, "action", str),
                       maybe(d, "confirm", bool, False), maybe(d, "description", str, ""))


def _case(d: JSONObject) -> PlannedCase:
    return PlannedCase(str(need(d, "id", str)), need(d, "number", int), need(d, "file", str),
                       need(d, "line", int), obj(d.get("values"), "values"))


def _turn(d: Any) -> PlannedTurn:
    d = obj(d)
    return PlannedTurn(need(d, "kind", str), need(d, "text", str), maybe(d, "line", int, 0),
                       each(d, "attachments", obj, required=False))


def _user(d: JSONObject) -> PlannedUser:
    return PlannedUser(need(d, "goal", str), maybe(d, "persona", str, ""),
                       need(d, "target", str), need(d, "max_turns", int))


def _expectation(d: JSONObject) -> ToolExpectation | None:
    if "tool_expectation" in d:
        value = d["tool_expectation"]
        if value is not None:
            obj(value, "tool_expectation")
        return ToolExpectation.from_json(value)
    expected = texts(d, "expected_tools")  # a plan written before tool_expectation
    return ToolExpectation(expected) if expected else None


def scenario_from_json(d: Any) -> PlannedScenario:
    d = obj(d)
    return PlannedScenario(
        id=need(d, "id", str), file=need(d, "file", str), line=need(d, "line", int),
        runs=need(d, "runs", int), min_pass=need(d, "min_pass", int),
        checks=each(d, "checks", _check),
        description=maybe(d, "description", str, ""), tags=texts(d, "tags"),
        at=maybe(d, "at", str, ""), system=maybe(d, "system", str, ""),
        message=maybe(d, "message", str, ""),
        tools=each(d, "tools", _tool, required=False),
        tool_expectation=_expectation(d), given_when=maybe(d, "given_when", str, ""),
        max_steps=maybe(d, "max_steps", int, 0), file_runs=maybe(d, "file_runs", int),
        targets=texts(d, "targets"), case=maybe_inner(d, "case", _case),
        attachments=each(d, "attachments", obj, required=False),
        history=each(d, "history", obj, required=False),
        turns=each(d, "turns", _turn, required=False), user=maybe_inner(d, "user", _user),
        world=tuple(counts(d, "world", str).items()),
        tools_given=maybe(d, "tools_given", str, ""))


def _judge(d: JSONObject) -> PlannedJudge:
    cal = d.get("calibration")
    calibration = None
    if cal is not None:
        cal = obj(cal, "calibration")
        calibration = (float(need(cal, "yes_no", float)), float(need(cal, "digits", float)))
    return PlannedJudge(need(d, "target", str), maybe(d, "model", str),
                        maybe(d, "min_confidence", float, 0.0), maybe(d, "mode", str, "json"),
                        calibration)


def plan_from_json(d: JSONObject) -> PlanFile:
    """A plan from plan.json's JSON (its version already checked). Raises FieldError."""
    return PlanFile(
        suite=maybe(d, "suite", str), targets=each(d, "targets", _target),
        scenarios=each(d, "scenarios", scenario_from_json),
        attempts=maybe(d, "attempts", int, 0),
        max_model_calls=maybe(d, "max_model_calls", int, 0),
        concurrency=maybe(d, "concurrency", int, 0), shard=shard(d),
        full_plan=maybe(d, "full_plan", str, ""), judge=maybe_inner(d, "judge", _judge),
        judge_calls=maybe(d, "judge_calls", int, 0),
        full_scenarios=texts(d, "full_scenarios") if d.get("full_scenarios") else ())


def read_plan(run_dir: Path) -> PlanFile:
    """The run folder's plan.json. RunDirError (with the file) when it is missing, of
    another version, or not a plan."""
    return read_file(run_dir / PLAN, plan_from_json, "a run's plan")
