"""What compiled expressions run on: the attempt's values and the rules for combining them.

An attempt becomes an :class:`Bindings` once (``env_for``): plain ``dict``/``list``/``str``/
numbers/``bool``/``None`` plus ``datetime.date`` — never a Python object with attributes an
expression could walk. Compiled closures take the Bindings and return one of those values.

The rules here are shared by the evaluator and the library of functions: when two values
are equal, when they can be ordered, how a value is shown in a reason.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
import time
from collections.abc import Callable
from typing import Any

from ..model import AttemptData
from .errors import EvalError
from .limits import MAX_EVAL_SECONDS, MAX_ITEMS_VISITED, MAX_JSON_CHARS

NUMS: frozenset[type] = frozenset({int, float})
_SCALARS: frozenset[type] = frozenset({str, int, float, bool, type(None), dt.date})
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


class Bindings:
    """One attempt's values, as an expression sees them.

    ``values`` holds the named values (``answer``, ``calls``, ...); ``items`` is the stack
    of current items while a condition runs over a list (``calls[name == 'x']``);
    ``first_call`` maps a tool name to its first call. ``json_cache`` remembers texts already
    read as JSON (a tool's output read by several fields is parsed once).
    """

    __slots__ = ("budget", "deadline", "first_call", "items", "json_cache", "values")

    def __init__(self, values: dict[str, Any]) -> None:
        self.values = values
        self.items: list[Any] = []
        self.first_call: dict[str, dict[str, Any]] = {}
        for c in values.get("calls", ()):
            self.first_call.setdefault(c["name"], c)
        self.json_cache: dict[str, Any] = {}
        self.budget = MAX_ITEMS_VISITED
        self.deadline = 0.0

    def reset(self) -> None:
        """Called before each evaluation: a fresh budget of items and time."""
        self.budget = MAX_ITEMS_VISITED
        self.deadline = 0.0

    def tick(self) -> None:
        """Count one list item visited by a condition; stop runaway evaluations."""
        self.budget -= 1
        if self.budget < 0:
            raise EvalError(f"the expression visited more than {MAX_ITEMS_VISITED:,} "
                            "list items; simplify the conditions inside [ ]")
        now = time.perf_counter()
        if self.deadline == 0.0:
            self.deadline = now + MAX_EVAL_SECONDS
        elif now > self.deadline:
            raise EvalError(f"the expression took longer than {MAX_EVAL_SECONDS:g} s; "
                            "simplify the conditions inside [ ]")


def call_value(c: Any) -> dict[str, Any]:
    return {
        "name": c.name,
        "args": c.args,
        "output": c.output,
        "action": c.action,
        "pending": c.pending,
        "step": c.step,
        "error": c.error,
        "decision": c.decision,
    }


def moment_value(at: dt.datetime) -> dict[str, Any]:
    return {
        "year": at.year,
        "month": at.month,
        "day": at.day,
        "hour": at.hour,
        "minute": at.minute,
        "weekday": at.weekday(),
        "date": at.date().isoformat(),
        "time": f"{at.hour:02d}:{at.minute:02d}",
    }


def attempt_values(a: AttemptData) -> dict[str, Any]:
    """The named values of an attempt (``GLOBALS`` in ``types``), as plain data."""
    calls = [call_value(c) for c in a.calls]
    return {
        "answer": a.answer,
        "message": a.message,
        "calls": calls,
        "pending": [c for c in calls if c["pending"]],
        "tools": [
            {"name": t.name, "action": t.action, "confirm": t.confirm,
             "description": t.description}
            for t in a.tools
        ],
        "at": moment_value(a.at),
        "latency_ms": a.latency_ms,
        "tokens": a.tokens.total,
        "prompt_tokens": a.tokens.prompt,
        "completion_tokens": a.tokens.completion,
        "steps": a.steps,
        **(_world_values(a.world) if a.world is not None else {}),
    }


def _world_values(run: Any) -> dict[str, Any]:
    """``world`` and ``world_before``: each table's rows, every row with every column the
    table has (null where a row has none)."""
    columns: dict[str, dict[str, None]] = {}
    for tables in (run.before, run.after):
        for name, rows in tables.items():
            cols = columns.setdefault(name, {})
            for r in rows:
                cols.update(dict.fromkeys(r))

    def rows_of(tables: Any) -> dict[str, list[dict[str, Any]]]:
        return {name: [{c: r.get(c) for c in columns.get(name, {})} for r in tables.get(name, ())]
                for name in columns}

    return {"world": rows_of(run.after), "world_before": rows_of(run.before)}


_last: tuple[AttemptData, Bindings] | None = None


def env_for(a: AttemptData) -> Bindings:
    """The Bindings of an attempt, built once: every ``expect`` check of one attempt runs on the
    same Bindings (they are evaluated one after the other)."""
    global _last
    last = _last
    if last is not None and last[0] is a:
        return last[1]
    env = Bindings(attempt_values(a))
    _last = (a, env)
    return env


# ---------------------------------------------------------------- JSON

NOT_JSON: Any = object()  # what read_json gives for text that is not JSON


def read_json(env: Bindings, text: str) -> Any:
    """``text`` as JSON data, or NOT_JSON. A ```json fence around it is accepted."""
    cached = env.json_cache.get(text, env)
    if cached is not env:
        return cached
    if len(text) > MAX_JSON_CHARS:
        raise EvalError(f"the text has {len(text):,} characters; at most {MAX_JSON_CHARS:,} "
                        "are read as JSON")
    t = text.strip()
    if t.startswith("```"):
        first_nl = t.find("\n")
        end = t.rfind("```")
        if 0 < first_nl < end:
            t = t[first_nl + 1 : end].strip()
    try:
        value = json.loads(t, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        value = NOT_JSON
    env.json_cache[text] = value
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# ---------------------------------------------------------------- rules


def kind(v: Any) -> str:
    """The kind of a run-time value, as a message says it."""
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "true/false"
    if t in NUMS:
        return "a number"
    if t is str:
        return "text"
    if t is list:
        return "a list"
    if t is dict:
        return "an object"
    if t is dt.date:
        return "a date"
    return "a value"


def what(v: Any) -> str:
    """A value with its kind: ``the text "4"``, ``the number 4``, ``null``."""
    if v is None or type(v) is bool:
        return display(v)
    t = type(v)
    if t is str:
        return f"the text {display(v)}"
    if t in NUMS:
        return f"the number {display(v)}"
    if t is dt.date:
        return f"the date {display(v)}"
    return f"{kind(v)} {display(v)}"


def display(v: Any, limit: int = 80) -> str:
    """A value as a reason shows it: JSON-like, shortened, with dates spelled out."""
    if v is None:
        return "null"
    t = type(v)
    if t is bool:
        return "true" if v else "false"
    if t is int:
        if abs(v) < 10**30:
            return str(v)
        # Too long to read (and str() refuses ints of more than 4,300 digits).
        return f"(a number of about {int(v.bit_length() * 0.30103) + 1:,} digits)"
    if t is float:
        if math.isfinite(v) and v.is_integer() and abs(v) < 1e15:
            return str(int(v))
        return repr(v)
    if t is dt.date:
        return f"{v.isoformat()} ({DAYS[v.weekday()]})"
    if t is str:
        s = " ".join(v.split()) if len(v) > limit or "\n" in v else v
        if len(s) > limit:
            s = s[: limit - 1] + "…"
        return json.dumps(s, ensure_ascii=False)
    try:
        text = json.dumps(v, ensure_ascii=False, default=str, separators=(", ", ": "))
    except (ValueError, RecursionError):
        text = f"<{kind(v)}>"
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------- numbers

# A number written as text, as a spreadsheet's cell holds it: '135.20', '-3', '7'.
_NUMBER_TEXT = re.compile(r"[ \t]*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)[ \t]*\Z")
MAX_NUMBER_TEXT = 60  # characters of a text read as a number


def exact(x: int | float) -> decimal.Decimal:
    """A number as the decimal it is written as: 0.1 is 0.1, not the binary fraction
    nearest to it (so that 0.1 + 0.2 == 0.3, and money adds up to the cent)."""
    if type(x) is int:
        return decimal.Decimal(x)
    return decimal.Decimal(repr(x))


def number_in(text: str) -> decimal.Decimal | None:
    """The number a text holds ('135.20' → 135.20), or None when it holds no number."""
    if len(text) > MAX_NUMBER_TEXT or not _NUMBER_TEXT.match(text):
        return None
    return decimal.Decimal(text.strip())


def numeric(v: Any) -> decimal.Decimal | None:
    """A number, or a number written as text, as an exact decimal (None otherwise)."""
    t = type(v)
    if t in NUMS:
        return exact(v) if t is int or math.isfinite(v) else None
    if t is str:
        return number_in(v)
    return None


def plain(d: decimal.Decimal, ints: bool) -> int | float:
    """An exact result back as the language's number: a whole number when both operands
    were (``ints``), else the float written as the decimal (95.5, never 95.49999)."""
    if ints and d == d.to_integral_value():
        return int(d)
    f = float(d)
    if not math.isfinite(f):
        raise OverflowError
    return f


def _by_value(a: Any, b: Any) -> bool | None:
    """Whether a number and a number written as text are the same number (None when the
    text holds none)."""
    x, y = numeric(a), numeric(b)
    if x is None or y is None:
        return None
    return x == y


def equal(a: Any, b: Any) -> bool | None:
    """``a == b`` by the language's rules, or None when the two cannot be compared
    (text with a number, a date with text...). null equals only null; true is not 1. A
    number written as text ('135.20') equals the number (135.2)."""
    ta, tb = type(a), type(b)
    if ta is tb and ta in _SCALARS:
        return bool(a == b)
    if a is None or b is None:
        return False
    if ta in NUMS and tb in NUMS:
        return bool(a == b)
    if (ta is str and tb in NUMS) or (tb is str and ta in NUMS):
        return _by_value(a, b)
    if ta is tb and ta is list:
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if ta is tb and ta is dict:
        return a.keys() == b.keys() and all(same(v, b[k]) for k, v in a.items())
    return None


def same(a: Any, b: Any) -> bool:
    """Equality inside lists and objects, and for ``in``: different kinds are not equal."""
    return equal(a, b) is True


def ordered(a: Any, b: Any) -> bool:
    """Whether ``a < b`` can be asked: two numbers, two texts or two dates (or a number and
    a number written as text)."""
    ta, tb = type(a), type(b)
    if (ta in NUMS and tb in NUMS) or (ta is tb and (ta is str or ta is dt.date)):
        return True
    return (ta is str and tb in NUMS and number_in(a) is not None) or \
        (tb is str and ta in NUMS and number_in(b) is not None)


def order_key(v: Any) -> Any:
    """What ``min``, ``max`` and ``sorted`` compare: numbers (and numbers written as text)
    by value, texts and dates as they are."""
    t = type(v)
    if t in NUMS:
        return exact(v) if t is int or math.isfinite(v) else v
    return v


Getter = Callable[[Any], Any]
DATE_GETTERS: dict[str, Getter] = {
    "year": lambda d: d.year,
    "month": lambda d: d.month,
    "day": lambda d: d.day,
    "weekday": lambda d: d.weekday(),
}
