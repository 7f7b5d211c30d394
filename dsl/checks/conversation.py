"""Checks on a conversation as a whole."""

from __future__ import annotations

from typing import Any

from ..model import AttemptData, Outcome
from .answer import TRUE_SCHEMA
from .registry import CheckContext, check, failed, passed


def prepare_goal(param: Any, ctx: CheckContext) -> bool | None:
    if not ctx.extra.get("simulated_user"):
        ctx.error("E226",
                  "goal_reached needs a simulated user, and this scenario has none",
                  "write when: {user: {goal: ..., target: ...}}, or remove the check",
                  at=ctx.doc.key_span(ctx.path) if ctx.path[-1] == "goal_reached"
                  else ctx.span())
        return None
    return True


@check(
    "goal_reached",
    doc="The simulated user said its goal was reached before max_turns.",
    schema=TRUE_SCHEMA,
    examples=("goal_reached: true",),
    prepare=prepare_goal,
    group="conversation",
    details="Only with a simulated user (`when: {user: {goal, target, ...}}`): it passes "
    "when the model playing the person wrote the stop marker `GOAL_REACHED`. Pair it with "
    "checks on what the agent did (`calls`, `does_not_modify`): the simulated user is a "
    "model too, and may be satisfied too easily.",
)
def goal_reached(p: bool, a: AttemptData) -> Outcome:
    turns = len(a.turns)
    said = f"{turns} turn{'s' if turns != 1 else ''}"
    if a.goal_reached:
        return passed(f"the simulated user said its goal was reached after {said}")
    return failed(f"the simulated user did not say its goal was reached ({said})")
