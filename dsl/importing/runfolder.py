"""The ``scenarist`` format: attempts of a Scenarist run folder, so that a failure seen in a
run becomes a scenario of its own.

Read through the store's readers only (``plan.json``: :func:`dsl.store.read_plan`;
``results.jsonl``: :func:`dsl.store.latest_records`). Of each attempt: its ``messages``
(after its ``history``, which becomes ``given.history`` as it was), its ``calls`` (each
held call's ``pending`` and ``decision``: the confirm and cancel turns, exactly; a call's
``error``: the tool's error), and of its planned scenario: ``at``, ``system``, the tools'
``description``, ``action`` and ``confirm``. A run's records do not keep the tools'
``input_schema``: it is inferred from the arguments, as for a log without definitions.

Which attempts: those named with ``--attempt SCENARIO@TARGET/RUN``, else every attempt
whose status is ``fail``.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import NotReady, RunDirError
from ..store import latest_records, read_plan
from .conversation import Built, Decision, Message, Moment, Place, Problem, ToolDef, build
from .names import slug
from .openai import messages_of
from .sources import shown

# the tool answered an error
TOOL_ERRORS = frozenset({"tool-error", "no-record", "no-row", "row-exists"})
NOT_RUN = frozenset({"unknown-tool", "invalid-json"})  # the call never reached a tool


@dataclass(frozen=True, slots=True)
class Attempt:
    """``SCENARIO@TARGET/RUN``: one attempt of a run."""

    scenario: str
    target: str
    run: int

    def __str__(self) -> str:
        return f"{self.scenario}@{self.target}/{self.run}"


def parse_attempt(text: str) -> Attempt | None:
    """``clinic.hours@local/3`` as an :class:`Attempt`; None when it is not one."""
    rest, slash, run = text.rpartition("/")
    scenario, at, target = rest.rpartition("@")
    if not (slash and at and scenario and target and run.isdigit() and int(run) >= 1):
        return None
    return Attempt(scenario, target, int(run))


def run_dir_of(path: Path) -> Path:
    return path.parent if path.name == "results.jsonl" else path


def read(path: Path, attempts: Sequence[Attempt], problems: list[Problem]) -> list[Built]:
    """The conversations of the chosen attempts (every failed one when none is named).
    NotReady when an attempt named is not in the run."""
    run_dir = run_dir_of(path)
    name = shown(run_dir)
    try:
        plan = read_plan(run_dir)
    except RunDirError as exc:
        problems.append(Problem(Place(name), f"{exc}: the tools' descriptions and the "
                                             "scenarios' moments are not known"))
        plan = None
    planned = {s.id: s for s in plan.scenarios} if plan is not None else {}
    records = list(latest_records(run_dir))
    if attempts:
        have = {Attempt(r.scenario, r.target, r.run): r for r in records}
        missing = [a for a in attempts if a not in have]
        if missing:
            ordered = sorted(have, key=lambda a: (a.scenario, a.target, a.run))
            shown_have = ", ".join(str(a) for a in ordered[:10]) or "none"
            raise NotReady(f"{name} has no attempt {', '.join(map(str, missing))}; its "
                           f"attempts: {shown_have}{' …' if len(have) > 10 else ''}")
        chosen = [have[a] for a in attempts]
    else:
        chosen = sorted((r for r in records if r.status == "fail"),
                        key=lambda r: (r.scenario, r.target, r.run))
        if not chosen:
            problems.append(Problem(Place(name), "no attempt of this run failed: name one "
                                                 "with --attempt SCENARIO@TARGET/RUN"))
    return [_conversation(r, planned.get(r.scenario), name, problems) for r in chosen]


def _conversation(record: Any, planned: Any, name: str, problems: list[Problem]) -> Built:
    attempt = Attempt(record.scenario, record.target, record.run)
    place = Place(name, attempt=str(attempt))
    raw = list(record.messages)
    system_raw = [m for m in raw[:1] if isinstance(m, dict) and m.get("role") == "system"]
    rest = raw[len(system_raw):]
    history_raw, chat_raw = rest[:record.history], rest[record.history:]
    messages = messages_of(chat_raw, place, problems)
    errors = {c.id for c in record.calls if c.error in TOOL_ERRORS}
    messages = [Message(m.role, m.text, m.place, m.calls, m.call_id, m.name,
                        m.call_id in errors) if m.role == "tool" else m for m in messages]
    decisions: dict[str, Decision] = {}
    for c in record.calls:
        if c.pending:
            decisions[c.id] = "pending"
        elif c.decision in ("confirmed", "cancelled", "dismissed"):
            decisions[c.id] = c.decision
    system = planned.system if planned is not None else _system_text(system_raw)
    tools = [ToolDef(t.name, t.description, None, place, t.action, t.confirm)
             for t in (planned.tools if planned is not None else ())]
    moment = None
    if planned is not None and planned.at:
        try:
            moment = Moment(dt.datetime.fromisoformat(planned.at), True,
                            f"the given.at of the scenario {record.scenario}")
        except ValueError:
            moment = None
    failed = record.reason + (f" ({record.failure})" if record.failure else "")
    history = messages_of(history_raw, place, problems)
    return build([Message("system", system, place), *history, *messages], tools,
                 source=name, key=f"attempt {attempt}", place=place,
                 name=slug(f"{record.scenario} {record.target} {record.run}"),
                 moment=moment, decisions=decisions, failed=failed, history=len(history),
                 closed_tools=True,
                 not_run=frozenset(x.id for x in record.calls if x.error in NOT_RUN))


def _system_text(system: list[Any]) -> str:
    return str(system[0].get("content") or "") if system else ""
