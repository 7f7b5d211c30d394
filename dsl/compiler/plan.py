"""The plan as data: what ``plan.json`` holds, its fingerprint, and what changed between
two plans. ``scenarist plan --json`` prints it; a run writes it into its folder; resume and
merge compare fingerprints and refuse a plan that changed; summaries and reports read it
back (never the live Plan)."""

from __future__ import annotations

import gc
import hashlib
import json
from typing import TYPE_CHECKING, Any

from ..model import Plan, Scenario, Target, ToolSpec
from ..store import planfile
from ..store.planfile import (
    Calibration,
    PlanFile,
    PlannedCase,
    PlannedCheck,
    PlannedJudge,
    PlannedScenario,
    PlannedTarget,
    PlannedTool,
    PlannedTurn,
    PlannedUser,
)
from ..targets.kinds import is_model, target_json

if TYPE_CHECKING:
    from ..model import JudgeConfig
    from .redact import Redactor


def most_calls(scenario: Scenario, target: Target) -> int:
    """The most model calls Scenarist itself makes for ``scenario``'s attempts against
    ``target`` (0 when the scenario is not meant for it) — the one count ``plan``'s table,
    its bound and plan.json's ``max_model_calls`` all show. Against a model endpoint the
    agent loop is Scenarist's: ``max_steps`` calls for each turn (each of a simulated
    user's ``max_turns``). An agent that runs its own loop (python, http, command) makes
    its model calls itself: none is counted. A simulated user is Scenarist's whatever the
    target: ``max_turns`` messages and one more question (was the goal reached?) each
    attempt. Judge questions are counted apart (``Plan.judge_calls``)."""
    if not scenario.runs_on(target.name):
        return 0
    user = scenario.user
    per = 0
    if is_model(target):
        per = scenario.max_steps * (user.max_turns if user is not None
                                    else max(1, len(scenario.turns)))
    if user is not None:
        per += user.max_turns + 1
    return scenario.runs * per


def max_model_calls(plan: Plan) -> int:
    """The most model calls the whole plan makes (:func:`most_calls`, summed)."""
    return sum(most_calls(s, t) for s in plan.scenarios for t in plan.targets)


def planned_scenario(s: Scenario) -> PlannedScenario:
    """A scenario as plan.json keeps it (:mod:`dsl.store.planfile` writes it)."""
    # Imported here: the checks pull in the YAML loader, which readers of a run folder
    # (summarize, report) never need — a quarter of a second at every `scenarist report`.
    from ..checks.tools import scenario_expectation

    case = s.case
    user = s.user
    expectation = scenario_expectation(s)
    return PlannedScenario(
        s.id, s.file, s.span.line, s.runs, s.min_pass,
        checks=tuple([PlannedCheck(c.name, c.label, c.judge, c.span.line, c.turn, c.always,
                                   c.named) for c in s.all_checks]),
        description=s.description, tags=tuple(s.tags), at=s.at.isoformat(), system=s.system,
        message=s.message, tools=tuple([_planned_tool(t) for t in s.tools]),
        expectation=None if expectation is None else expectation.as_json(),
        given_when=given_when_hash(s), max_steps=s.max_steps, file_runs=s.file_runs,
        targets=tuple(s.targets),
        case=None if case is None else PlannedCase(case.id, case.number, case.span.file,
                                                   case.span.line, dict(case.values)),
        attachments=tuple([a.ref() for a in s.attachments]) if s.attachments else (),
        history=tuple([dict(m) for m in s.history]) if s.history else (),
        turns=tuple([PlannedTurn(t.kind, t.text, t.span.line,
                                 tuple([a.ref() for a in t.attachments])) for t in s.turns])
        if s.turns else (),
        user=None if user is None else PlannedUser(user.goal, user.persona, user.target.name,
                                                   user.max_turns),
        expected_tools=expectation.all_expected if expectation is not None else (),
        world={t.name: _fingerprint(list(t.rows)) for t in s.world},
        tools_given=_fingerprint([_tool_text(t) for t in s.tools]) if s.world else "")


def _fingerprint(data: Any) -> str:
    text = json.dumps(data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def given_when_hash(s: Scenario) -> str:
    """A fingerprint of the question a scenario asks — its ``given`` (the moment, the system
    prompt, every tool as the model sees it and what it returns) and its ``when`` — but not
    its checks: ``scenarist recheck`` re-applies changed checks to stored transcripts only
    while this is the same."""
    given: dict[str, Any] = {"at": s.at.isoformat(), "system": s.system, "message": s.message,
                             "tools": _TOOLS}
    if s.turns:  # a conversation: what the person says and decides, turn by turn
        given["turns"] = [{"kind": t.kind, "text": t.text} for t in s.turns]
        if any(t.attachments for t in s.turns):
            given["turn_attachments"] = [[a.sha256 for a in t.attachments] for t in s.turns]
    if s.attachments:
        given["attachments"] = [[a.kind, a.mime_type, a.label, a.sha256]
                                for a in s.attachments]
    if s.case is not None:  # a tool's answers read the case's values too
        given["case"] = dict(s.case.values)
    if s.history:
        given["history"] = list(s.history)
    if s.user is not None:
        given["user"] = {"goal": s.user.goal, "persona": s.user.persona,
                         "target": s.user.target.name, "max_turns": s.user.max_turns}
    if s.world:  # the tables the tools act on are part of the question (and recheck's start)
        given["world"] = {t.name: list(t.rows) for t in s.world}
    text = json.dumps(given, sort_keys=True, ensure_ascii=False, default=str)
    # the tools' JSON, each written once however many scenarios share it (the text is the
    # one json.dumps writes for the whole list, so the fingerprints are as they were)
    tools = "[" + ", ".join(_tool_text(t) for t in s.tools) + "]"
    text = text.replace(_TOOLS_JSON, tools, 1)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


_PLANNED_TOOLS: dict[int, tuple[ToolSpec, PlannedTool]] = {}


def _planned_tool(t: ToolSpec) -> PlannedTool:
    """A tool as plan.json keeps it: one for each ToolSpec, however many cases share it."""
    hit = _PLANNED_TOOLS.get(id(t))
    if hit is not None and hit[0] is t:
        return hit[1]
    planned = PlannedTool(t.name, t.action, t.confirm, t.description)
    if len(_PLANNED_TOOLS) > 4096:
        _PLANNED_TOOLS.clear()
    _PLANNED_TOOLS[id(t)] = (t, planned)  # the spec is kept: its id stays its own
    return planned


_TOOLS = "\x00tools\x00"  # where the tools go in a fingerprint's text
_TOOLS_JSON = json.dumps(_TOOLS)
_TOOL_TEXTS: dict[tuple[Any, ...], tuple[tuple[Any, ...], str]] = {}


def _tool_text(t: ToolSpec) -> str:
    """A tool as a fingerprint writes it: cached by what it holds (a thousand cases share
    one tool's schema and answers, bound to each case or not)."""
    parts = (t.input_schema, t.returns, t.table,
             *(x for a in t.answers for x in (a.when, a.returns)))
    key = (t.name, t.description, t.action, t.confirm, t.error, *map(id, parts),
           *(a.error for a in t.answers))
    hit = _TOOL_TEXTS.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], parts, strict=True)):
        return hit[1]
    text = json.dumps({"name": t.name, "description": t.description,
                       "input_schema": t.input_schema, "action": t.action,
                       "confirm": t.confirm, "returns": t.returns, "error": t.error,
                       "answers": [{"when": a.when, "returns": a.returns, "error": a.error}
                                   for a in t.answers]},
                      sort_keys=True, ensure_ascii=False, default=str)
    if t.table is not None:  # what it does to the world: its where, set, row as written
        act = t.table
        text = text[:-1] + ", \"table\": " + json.dumps(
            [act.table, [[k, c, _written(v)] for k, items in (("where", act.where),
             ("set", act.set), ("row", act.row)) for c, v in items], act.fields, act.one]
            + ([act.written] if act.written else []) + (["ends"] if t.ends_conversation
                                                        else []),
            ensure_ascii=False, default=str) + "}"
    if len(_TOOL_TEXTS) > 4096:
        _TOOL_TEXTS.clear()
    _TOOL_TEXTS[key] = (parts, text)  # the parts are kept: their ids stay theirs
    return text


def _written(value: Any) -> Any:
    """A where, set or row value as written (a template's source, inside mappings and
    lists too)."""
    source = getattr(value, "source", None)
    if isinstance(source, str):
        return source
    if isinstance(value, dict):
        return {k: _written(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_written(v) for v in value]
    return value


def plan_file(plan: Plan, hashed: bool = True) -> PlanFile:
    """The plan as plan.json keeps it. ``full_plan`` is the plan's own fingerprint when it
    is a whole plan (a shard's is the whole plan's); ``hashed=False`` leaves it empty then
    (:func:`plan_json` computes it on the JSON it writes anyway)."""
    out = PlanFile(
        suite=plan.suite_file, targets=tuple(planned_target(t) for t in plan.targets),
        scenarios=tuple(planned_scenario(s) for s in plan.scenarios), attempts=plan.attempts,
        max_model_calls=max_model_calls(plan), concurrency=plan.concurrency,
        shard=plan.shard, full_plan=plan.full_hash, judge=_planned_judge(plan.judge),
        judge_calls=plan.judge_calls, full_scenarios=plan.full_scenarios)
    if hashed and not out.full_plan:  # a whole plan (not a shard) is its own full plan
        out = out.replace(full_plan=plan_hash(planfile.plan_json(out)))
    return out


def plan_json(plan: Plan) -> dict[str, Any]:
    """plan.json's contents: what ``scenarist plan --json`` prints and a run writes. Made
    with the collector paused: a plan of 10,000 scenarios is a few hundred thousand small
    containers and no cycles, which it would otherwise walk again and again."""
    paused = gc.isenabled()
    gc.disable()
    try:
        out = planfile.plan_json(plan_file(plan, hashed=False))
        if not out["full_plan"]:  # a whole plan (not a shard) is its own full plan
            out["full_plan"] = plan_hash(out)
        return out
    finally:
        if paused:
            gc.enable()


# What plan.json writes as it is (names, places, counts, fingerprints); every other text is
# redacted as results.jsonl is (a secret in a system prompt, a message, a target's header)
PLAN_KEPT = frozenset({"schema_version", "suite", "attempts", "max_model_calls",
                       "concurrency", "shard", "full_plan", "judge_calls", "fingerprints"})
SCENARIO_KEPT = frozenset({"id", "file", "line", "runs", "min_pass", "given_when",
                           "max_steps", "file_runs", "targets", "at", "tags",
                           "expected_tools"})
TARGET_KEPT = frozenset({"name", "kind"})
# where a number may be a secret: a call's arguments a check expects, a case's values
PLAN_NUMBERS = frozenset({"args", "values"})


def kept_plan(data: dict[str, Any], redactor: Redactor | None) -> dict[str, Any]:
    """plan.json's contents as the run folder keeps them: every text redacted by the run's
    ``redactor`` (dsl/compiler/redact.py) but the names, places, counts and fingerprints
    that tie it to results.jsonl. Made after the fingerprints, which are of the plan."""
    if redactor is None or not redactor.patterns:
        return data
    out: dict[str, Any] = {}
    for k, v in data.items():
        if k in PLAN_KEPT:
            out[k] = v
        elif k == "scenarios":
            out[k] = [kept_fields(x, SCENARIO_KEPT, redactor) for x in v]
        elif k == "targets":
            out[k] = [kept_fields(x, TARGET_KEPT, redactor) for x in v]
        else:
            out[k] = kept_fields(v, frozenset(), redactor)
    return out


def kept_fields(data: Any, kept: frozenset[str], redactor: Redactor) -> Any:
    """``data``'s texts redacted but the values of the keys ``kept`` (its numbers stay)."""
    # why: regex, only for a run that redacts
    from .redact import Known

    return redactor.traced(data, Known({}), kept, PLAN_NUMBERS)[0]


def kept_target(t: PlannedTarget, redactor: Redactor | None) -> PlannedTarget:
    """A target as run.json keeps it: its settings redacted (a header's bearer token)."""
    if redactor is None or not redactor.patterns:
        return t
    return PlannedTarget(t.name, t.kind, kept_fields(dict(t.settings), frozenset(), redactor))


def planned_target(t: Target) -> PlannedTarget:
    data = target_json(t)
    return PlannedTarget(t.name, t.kind, {k: v for k, v in data.items()
                                          if k not in ("name", "kind")})


def _planned_judge(judge: JudgeConfig | None) -> PlannedJudge | None:
    if judge is None:
        return None
    calibration = (Calibration(judge.calibration.yes_no, judge.calibration.digits)
                   if judge.mode == "logprobs" else None)
    return PlannedJudge(judge.target.name, judge.model, judge.min_confidence, judge.mode,
                        calibration)


def plan_hash(plan: dict[str, Any]) -> str:
    """A fingerprint of what a plan runs (resume and merge refuse a plan that changed)."""
    keep = {k: plan[k] for k in ("targets", "scenarios") if k in plan}
    text = json.dumps(keep, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def plan_changes(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What differs between two plans, in words."""
    out: list[str] = []
    old_s = {s["id"]: s for s in old.get("scenarios", [])}
    new_s = {s["id"]: s for s in new.get("scenarios", [])}
    for sid in sorted(new_s.keys() - old_s.keys()):
        out.append(f"scenario {sid} was added")
    for sid in sorted(old_s.keys() - new_s.keys()):
        out.append(f"scenario {sid} was removed")
    for sid in sorted(old_s.keys() & new_s.keys()):
        a, b = old_s[sid], new_s[sid]
        fields = [k for k in sorted(set(a) | set(b)) if a.get(k) != b.get(k) and k != "line"]
        if fields:
            out.append(f"scenario {sid} changed ({', '.join(fields)})")
    old_t = [(t["name"], t) for t in old.get("targets", [])]
    new_t = [(t["name"], t) for t in new.get("targets", [])]
    if old_t != new_t:
        out.append("the targets changed: " + ", ".join(n for n, _ in old_t) + " → "
                   + ", ".join(n for n, _ in new_t))
    return out
