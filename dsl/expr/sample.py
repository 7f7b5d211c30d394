"""A realistic attempt, for the examples of docs/expressions.md, tests and the benchmark.

A clinic assistant is asked for an appointment: it searches the free slots, books one and
answers in Spanish. Every example in ``functions.FUNCTIONS`` runs on this attempt in the
test suite, so the documentation cannot drift from what the language does.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Mapping, Sequence
from typing import Any

from ..errors import Span
from ..model import Action, AttemptData, Call, Tokens, ToolSpec

AT = "2026-09-29T10:00:00-03:00"  # a Tuesday, 10:00 in Buenos Aires
ANSWER = ("Listo, reservé su turno de limpieza con la Dra. Pérez para el martes 6 de "
          "octubre a las 15:00. ¿Necesita algo más?")
SLOTS = {"doctor": "Dra. Pérez", "date": "2026-10-06", "slots": ["15:00", "16:30"],
         "prices": [45.5, 52], "price": "45.50"}
CALLS: tuple[Mapping[str, Any], ...] = (
    {"name": "search_slots", "args": {"date": "2026-10-06", "treatment": "cleaning"},
     "output": json.dumps(SLOTS, ensure_ascii=False), "action": "read"},
    {"name": "book_appointment",
     "args": {"date": "2026-10-06", "time": "15:00", "treatment": "cleaning",
              "patient": "Ana Gómez"},
     "output": "Booked: code A-1043", "action": "create"},
)
TOOLS: tuple[tuple[str, Action, bool], ...] = (
    ("search_slots", "read", False),
    ("book_appointment", "create", False),
    ("cancel_appointment", "delete", True),
)


def tool(name: str, action: Action = "read", confirm: bool = False) -> ToolSpec:
    return ToolSpec(name, f"The {name.replace('_', ' ')} tool.", {"type": "object"}, action,
                    confirm, "OK", Span("<sample>", 1, 1))


def call(i: int, c: Mapping[str, Any]) -> Call:
    args = c.get("args", {})
    pending = bool(c.get("pending", False))
    output = c.get("output", None if pending else "OK")
    return Call(f"call_{i}", c["name"], args, json.dumps(args, ensure_ascii=False), output,
                c.get("action", "read"), pending, c.get("error"), int(c.get("step", i)))


def attempt(
    *,
    answer: str = ANSWER,
    calls: Sequence[Mapping[str, Any]] = CALLS,
    at: str = AT,
    tools: Sequence[tuple[str, Action, bool]] = TOOLS,
    message: str = "Quiero un turno para una limpieza el martes que viene",
    latency_ms: float = 2350.0,
    prompt_tokens: int = 1480,
    completion_tokens: int = 96,
    steps: int = 3,
) -> AttemptData:
    """The sample attempt, with any part replaced."""
    return AttemptData(
        message=message,
        answer=answer,
        calls=tuple(call(i, c) for i, c in enumerate(calls, 1)),
        at=dt.datetime.fromisoformat(at),
        tools=tuple(tool(*t) for t in tools),
        steps=steps,
        latency_ms=latency_ms,
        tokens=Tokens(prompt_tokens, completion_tokens),
    )
