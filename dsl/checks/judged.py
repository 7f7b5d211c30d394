"""Checks decided by the LLM judge (see dsl/judge/ask.py for how it is asked and read).

An empty answer is not a question: every judge check fails it with the reason
:data:`NO_ANSWER` and asks nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ..model import AttemptData, CheckStatus, CriterionResult, Evidence, Outcome
from .answer import TRUE_SCHEMA, prepare_true
from .registry import CheckContext, CheckType, register, schema_doc

if TYPE_CHECKING:
    from ..judge import Judge
    from ..judge.ask import Verdict

NO_ANSWER = "no answer to judge"


def _no_answer(a: AttemptData) -> bool:
    return not a.answer.strip()


def _needs_judge(p: Any, a: AttemptData) -> Outcome:
    return Outcome("error", "this check needs the LLM judge, which this run does not have")


def _outcome(v: Verdict, passed: bool, reason: str, score: float | None) -> Outcome:
    evidence = Evidence.of(v.evidence())
    if v.status == "error":
        return Outcome("error", v.reason, None, evidence, judge_error=True)
    if v.status == "unsure":
        return Outcome("unsure", v.reason, score, evidence)
    return Outcome("pass" if passed else "fail", reason, score, evidence)


async def faithful(p: bool, a: AttemptData, judge: Judge) -> Outcome:
    # why: the judge; plan, lint, run, recheck or checks load this module without it
    from ..judge import context

    if _no_answer(a):
        return Outcome("fail", NO_ANSWER, 0.0)
    v = await judge.ask("faithful", context(a))
    ok = v.status == "pass"
    what = "faithful to the tool results" if ok else "not faithful to the tool results"
    return _outcome(v, ok, f"the judge found the answer {what}: {v.reason}", v.score)


async def answers(p: bool, a: AttemptData, judge: Judge) -> Outcome:
    # why: the judge; plan, lint, run, recheck or checks load this module without it
    from ..judge import context

    if _no_answer(a):
        return Outcome("fail", NO_ANSWER, 0.0)
    v = await judge.ask("answers_the_question", context(a))
    ok = v.status == "pass"
    what = "answers the question" if ok else "does not answer the question"
    return _outcome(v, ok, f"the judge found that the answer {what}: {v.reason}", v.score)


class Rubric(msgspec.Struct, frozen=True):
    rubric: str
    pass_score: float


def prepare_rubric(param: Any, ctx: CheckContext) -> Rubric:
    return Rubric(str(param["rubric"]), float(param.get("pass_score", 0.7)))


async def rubric(p: Rubric, a: AttemptData, judge: Judge) -> Outcome:
    # why: the judge; plan, lint, run, recheck or checks load this module without it
    from ..judge import context
    from ..judge.logprobs import at_least

    if _no_answer(a):
        return Outcome("fail", NO_ANSWER, 0.0)
    v = await judge.ask("rubric", context(a, rubric=p.rubric), threshold=p.pass_score)
    if v.status in ("error", "unsure"):
        return _outcome(v, False, "", v.score)
    score = v.score if v.score is not None else 0.0
    ok = v.status == "pass" and at_least(score, p.pass_score)
    said = f"the judge said {v.status} with score {score:.2f} (needs {p.pass_score:.2f})"
    return _outcome(v, ok, f"{said}: {v.reason}", score)


class Criterion(msgspec.Struct, frozen=True):
    label: str
    min_score: float


def prepare_criteria(param: Any, ctx: CheckContext) -> tuple[Criterion, ...]:
    out = []
    for item in param:
        if isinstance(item, str):
            out.append(Criterion(item, 7.0))
        else:
            out.append(Criterion(str(item["label"]), float(item.get("min_score", 7))))
    return tuple(out)


def _item_text(i: CriterionResult) -> str:
    """``✓ polite (9 ≥ 7)``, ``✗ gives the price (4 < 7)``, ``? cites a source (unsure)``."""
    if i.status in ("unsure", "error"):
        return f"? {i.label} ({i.status})"
    if i.score is None:  # nothing was asked (no answer)
        return f"✗ {i.label}"
    mark, op = ("✓", "≥") if i.status == "pass" else ("✗", "<")
    return f"{mark} {i.label} ({round(i.score, 2):g} {op} {i.min_score:g})"


async def criteria(p: tuple[Criterion, ...], a: AttemptData, judge: Judge) -> Outcome:
    # why: asyncio and more; plan, lint, run, recheck or checks load this module without it
    import asyncio

    from ..judge import context
    from ..judge.logprobs import at_least

    if _no_answer(a):
        return Outcome("fail", NO_ANSWER, 0.0, None, tuple(
            CriterionResult(c.label, "fail", None, c.min_score, NO_ANSWER) for c in p))
    verdicts = await asyncio.gather(*(judge.ask("criterion", context(a, criterion=c.label),
                                                scale=10, threshold=c.min_score) for c in p))
    items = []
    for c, v in zip(p, verdicts, strict=True):
        status: CheckStatus
        if v.status in ("error", "unsure"):
            status = "error" if v.status == "error" else "unsure"
        else:
            status = "pass" if at_least(v.score or 0, c.min_score) else "fail"
        items.append(CriterionResult(c.label, status, v.score, c.min_score, v.reason))
    met = sum(i.status == "pass" for i in items)
    detail = "; ".join(_item_text(i) for i in items)
    reason = f"{met} of {len(items)} criteria met: {detail}"
    evidence = Evidence(items=tuple(v.evidence() for v in verdicts))
    score = met / len(items)
    if any(i.status == "error" for i in items):
        return Outcome("error", reason, None, evidence, tuple(items), judge_error=True)
    if any(i.status == "fail" for i in items):
        return Outcome("fail", reason, score, evidence, tuple(items))
    if any(i.status == "unsure" for i in items):
        return Outcome("unsure", reason, score, evidence, tuple(items))
    return Outcome("pass", reason, score, evidence, tuple(items))


def _one(p: Any) -> int:
    return 1


register(CheckType(
    "faithful", "Everything the answer states is supported by what the tools returned.",
    TRUE_SCHEMA, ("faithful: true",), prepare_true, _needs_judge, judge=True, group="judge",
    details="The judge sees the person's message, the answer and every tool result "
    "automatically (nothing to wire by hand). Greetings and questions back need no support; "
    "an invented hour, price or name fails.",
    evaluate_async=faithful, judge_calls=_one))

register(CheckType(
    "answers_the_question", "The answer addresses what the person actually asked.",
    TRUE_SCHEMA, ("answers_the_question: true",), prepare_true, _needs_judge, judge=True,
    group="judge",
    details="Judges relevance, not correctness (use faithful or checks on the answer for "
    "that). A necessary clarifying question counts as answering.",
    evaluate_async=answers, judge_calls=_one))

register(CheckType(
    "judge", "The judge grades the answer against your rubric (score 0 to 1).",
    {
        "type": "object",
        **schema_doc("`{rubric, pass_score}`: what a good answer does, in plain words, and the "
                     "score it needs (0 to 1, default 0.7).",
                     {"rubric": "Offers the earliest free slot and asks for confirmation.",
                      "pass_score": 0.8}),
        "required": ["rubric"],
        "additionalProperties": False,
        "properties": {
            "rubric": {"type": "string", "minLength": 1,
                       **schema_doc("What a good answer does, in plain words.",
                                    "Apologizes once and offers a concrete next step.")},
            "pass_score": {"type": "number", "minimum": 0, "maximum": 1,
                           **schema_doc("The score needed to pass, 0 to 1 (default 0.7).", 0.8)},
        },
    },
    ("judge: {rubric: Offers the earliest free slot and asks for confirmation., "
     "pass_score: 0.8}",),
    prepare_rubric, _needs_judge, judge=True, group="judge",
    details="Passes only when the judge says pass *and* its score is at least pass_score.",
    evaluate_async=rubric, judge_calls=_one))

register(CheckType(
    "criteria", "The judge scores each criterion from 0 to 10; every one must reach its "
    "min_score.",
    {
        "type": "array",
        "minItems": 1,
        **schema_doc("A list of criteria: plain text (min_score 7), or `{label, min_score}`.",
                     ["Is polite", {"label": "Gives the clinic's phone number", "min_score": 9}]),
        "items": {
            "type": ["string", "object"],
            **schema_doc("One criterion.", "Is polite"),
            "minLength": 1,
            "if": {"type": "object"},
            "then": {
                "required": ["label"],
                "additionalProperties": False,
                "properties": {
                    "label": {"type": "string", "minLength": 1,
                              **schema_doc("The criterion, in plain words.", "Is polite")},
                    "min_score": {"type": "number", "minimum": 0, "maximum": 10,
                                  **schema_doc("The score it needs, 0 to 10 (default 7).", 8)},
                },
            },
        },
    },
    ("criteria: [Is polite, {label: Uses the patient's name, min_score: 8}]",),
    prepare_criteria, _needs_judge, judge=True, group="judge",
    details="Each criterion is a separate question to the judge and is reported "
    "separately; the check passes only when every criterion meets its min_score.",
    evaluate_async=criteria, judge_calls=len))
