"""The plan as data: what ``plan.json`` holds, its fingerprint, and what changed between
two plans. ``scenarist plan --json`` prints it; a run writes it into its folder; resume and
merge compare fingerprints and refuse a plan that changed; summaries and reports read it
back (never the live Plan)."""

from __future__ import annotations

import json
from typing import Any

from ..model import SCHEMA_VERSION, CompiledCheck, Plan, Scenario, ToolSpec
from ..targets.kinds import target_json


def scenario_json(s: Scenario) -> dict[str, Any]:
    # Imported here: the checks pull in the YAML loader, which readers of a run folder
    # (summarize, report) never need — a quarter of a second at every `scenarist report`.
    from ..checks.tools import scenario_expectation

    checks = s.all_checks
    expectation = scenario_expectation(s)
    out: dict[str, Any] = {
        "id": s.id,
        "file": s.file,
        "line": s.span.line,
        "description": s.description,
        "tags": list(s.tags),
        "at": s.at.isoformat(),
        "system": s.system,
        "message": s.message,
        "tools": [
            {"name": t.name, "action": t.action, "confirm": t.confirm,
             "description": t.description}
            for t in s.tools
        ],
        "expected_tools": list(expectation.all_expected) if expectation else [],
        "tool_expectation": expectation.as_json() if expectation else None,
        "given_when": given_when_hash(s),
        "checks": [_check_json(c) for c in checks],
        "runs": s.runs,
        "min_pass": s.min_pass,
        "max_steps": s.max_steps,
        # only when --runs changed them (a plan's fingerprint stays as it was otherwise)
        **({"file_runs": s.file_runs} if s.file_runs is not None else {}),
    }
    # only scenarios that have them carry these (other plans' fingerprints stay the same)
    if s.targets:
        out["targets"] = list(s.targets)
    if s.case is not None:
        out["case"] = {"id": s.case.id, "number": s.case.number, "file": s.case.span.file,
                       "line": s.case.span.line, "values": dict(s.case.values)}
    if s.attachments:
        out["attachments"] = [a.ref() for a in s.attachments]
    if s.history:
        out["history"] = [dict(m) for m in s.history]
    if s.turns:
        out["turns"] = [{"kind": t.kind, "text": t.text, "line": t.span.line,
                         **({"attachments": [a.ref() for a in t.attachments]}
                            if t.attachments else {})}
                        for t in s.turns]
    if s.user is not None:
        out["user"] = {"goal": s.user.goal, "persona": s.user.persona,
                       "target": s.user.target.name, "max_turns": s.user.max_turns}
    return out


def given_when_hash(s: Scenario) -> str:
    """A fingerprint of the question a scenario asks — its ``given`` (the moment, the system
    prompt, every tool as the model sees it and what it returns) and its ``when`` — but not
    its checks: ``scenarist recheck`` re-applies changed checks to stored transcripts only
    while this is the same."""
    import hashlib

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
    text = json.dumps(given, sort_keys=True, ensure_ascii=False, default=str)
    # the tools' JSON, each written once however many scenarios share it (the text is the
    # one json.dumps writes for the whole list, so the fingerprints are as they were)
    tools = "[" + ", ".join(_tool_text(t) for t in s.tools) + "]"
    text = text.replace(_TOOLS_JSON, tools, 1)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


def _check_json(c: CompiledCheck) -> dict[str, Any]:
    out: dict[str, Any] = {"check": c.name, "label": c.label, "judge": c.judge,
                           "line": c.span.line}
    if c.turn is not None:
        out["turn"] = c.turn
    if c.always:  # only when set: plans without them keep their fingerprint
        out["always"] = True
    if c.named:
        out["named"] = True
    return out


_TOOLS = "\x00tools\x00"  # where the tools go in a fingerprint's text
_TOOLS_JSON = json.dumps(_TOOLS)
_TOOL_TEXTS: dict[tuple[Any, ...], tuple[tuple[Any, ...], str]] = {}


def _tool_text(t: ToolSpec) -> str:
    """A tool as a fingerprint writes it: cached by what it holds (a thousand cases share
    one tool's schema and answers, bound to each case or not)."""
    parts = (t.input_schema, t.returns, *(x for a in t.answers for x in (a.when, a.returns)))
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
    if len(_TOOL_TEXTS) > 4096:
        _TOOL_TEXTS.clear()
    _TOOL_TEXTS[key] = (parts, text)  # the parts are kept: their ids stay theirs
    return text


def plan_json(plan: Plan) -> dict[str, Any]:
    out = {
        "schema_version": SCHEMA_VERSION,
        "suite": plan.suite_file,
        "targets": [target_json(t) for t in plan.targets],
        "scenarios": [scenario_json(s) for s in plan.scenarios],
        "attempts": plan.attempts,
        "max_model_calls": plan.max_model_calls,
        "concurrency": plan.concurrency,
        "shard": list(plan.shard) if plan.shard else None,
        "full_plan": plan.full_hash,
        "judge": _judge_json(plan.judge),
        "judge_calls": plan.judge_calls,
    }
    if not out["full_plan"]:  # a whole plan (not a shard) is its own full plan
        out["full_plan"] = plan_hash(out)
    return out


def _judge_json(judge: Any) -> dict[str, Any] | None:
    if judge is None:
        return None
    out: dict[str, Any] = {"target": judge.target.name, "model": judge.model,
                           "min_confidence": judge.min_confidence, "mode": judge.mode}
    if judge.mode == "logprobs":
        out["calibration"] = {"yes_no": judge.calibration.yes_no,
                              "digits": judge.calibration.digits}
    return out


def plan_hash(plan: dict[str, Any]) -> str:
    """A fingerprint of what a plan runs (resume and merge refuse a plan that changed)."""
    import hashlib

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
