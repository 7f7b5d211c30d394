"""The functions an expression can call: a fixed allow-list, one plain dict.

Each :class:`Function` carries everything about itself: how the docs show it (signature,
one-line doc, examples with what they check), its type rule (used by ``typecheck`` at lint
time) and its implementation (used by ``compile``). ``docs/expressions.md`` embeds
:func:`reference_markdown`; a test keeps the two identical, and another evaluates every
example on the sample attempt of ``dsl.expr.sample``.

Implementations get plain values (``runtime``) and raise :class:`ArgValueError` for a bad
argument; the evaluator turns that into a message naming the argument as the author
wrote it.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from .runtime import (
    NOT_JSON,
    NUMS,
    Bindings,
    display,
    exact,
    kind,
    number_in,
    order_key,
    ordered,
    plain,
    read_json,
    same,
)
from .types import BOOL, CALL, DATE, JSON, NUMBER, TEXT, Type, describe, list_of, maybe


class ArgTypeError(Exception):
    """Type rule failure: argument ``index`` should be ``expected`` (lint time)."""

    def __init__(self, index: int, expected: str, hint: str = "") -> None:
        super().__init__(expected)
        self.index = index
        self.expected = expected
        self.hint = hint


class ArgValueError(Exception):
    """Run-time failure of one argument. In ``message``, ``{arg}`` stands for the argument
    as the author wrote it and ``{kind}`` for the kind of its value: ``"{arg} is not a
    number"``. (Plain replacement, not ``str.format``: the message may quote model output.)
    """

    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


TypeRule = Callable[[Sequence[Type]], Type]


@dataclass(frozen=True, slots=True)
class Function:
    name: str
    signature: str  # as the docs show it: len(text or list) → number
    doc: str
    examples: tuple[tuple[str, str], ...]  # (expression, what it checks)
    arity: tuple[int, int]
    typing: TypeRule
    impl: Callable[..., Any]
    env: bool = False  # impl gets the Bindings first (called, call, json)
    nulls: bool = False  # null as the first argument gives null; impl is not called
    # With a per-item condition as second argument (count, any, all): the answers of the
    # condition for each item, in order, and the number of items.
    condition: Callable[[Iterable[bool]], Any] | None = None
    condition_result: Type = BOOL  # the type of what ``condition`` gives
    # With a value for each item as second argument (sum, map): what it makes of the
    # values, in order, and its type from the value's (raising ArgTypeError(1, ...))
    per_value: Callable[[list[Any]], Any] | None = None
    per_value_type: Callable[[Type], Type] = lambda t: t

    def takes_condition(self, first: Type) -> bool:
        """Whether the second argument is a condition over the items of the first.
        ``count(text, part)`` counts a part of a text instead."""
        return self.condition is not None and not (self.name == "count" and
                                                   first.kind == "text")


FUNCTIONS: dict[str, Function] = {}


def _register(f: Function) -> None:
    FUNCTIONS[f.name] = f


def _need(types: Sequence[Type], i: int, expected: str, *kinds: str, hint: str = "") -> Type:
    t = types[i]
    if maybe(t, *kinds) or t.kind == "null":
        return t
    raise ArgTypeError(i, expected, hint)


def _bad(i: int, expected: str) -> ArgValueError:
    return ArgValueError(i, "{arg} is {kind}, not " + expected)


def _null(i: int) -> ArgValueError:
    return ArgValueError(i, "{arg} is null")


def _check(v: Any, i: int, expected: str, *types: type) -> None:
    if v is None:
        raise _null(i)
    if type(v) not in types:
        raise _bad(i, expected)


# ---------------------------------------------------------------- sizes and counts


def _len_type(a: Sequence[Type]) -> Type:
    _need(a, 0, "text or a list", "text", "list",
          hint="len counts the characters of a text or the items of a list")
    return NUMBER


def _len(v: Any) -> int:
    _check(v, 0, "text or a list", str, list, dict)
    return len(v)


_register(Function(
    "len", "len(text or list) → number",
    "The number of characters of a text, or of items of a list.",
    (("len(answer) < 400", "the answer is shorter than 400 characters"),
     ("len(call('search_slots').output.slots) >= 1", "the search found at least one slot")),
    (1, 1), _len_type, _len,
))


def _count_type(a: Sequence[Type]) -> Type:
    if len(a) == 2 and a[0].kind == "text":
        _need(a, 1, "text", "text", hint="count(text, part) counts how often part appears")
        return NUMBER
    _need(a, 0, "a list", "list",
          hint="to count the characters of a text use len(...); to count a word in a "
               "text, count(answer, 'word')")
    return NUMBER


def _count(v: Any, part: Any = None) -> int:
    if part is not None or type(v) is str:
        _check(v, 0, "text", str)
        _check(part, 1, "text", str)
        if not part:
            raise ArgValueError(1, "{arg} is empty: there is nothing to count")
        return int(v.count(part))
    _check(v, 0, "a list", list)
    return len(v)


_register(Function(
    "count", "count(list) · count(list, condition) · count(text, part) → number",
    "How many items a list has; with a condition, how many items meet it; with a text "
    "and a part, how many times the part appears in the text.",
    (("count(calls) <= 2", "at most two tool calls"),
     ("count(calls, action != 'read') == 1", "exactly one call that changes something"),
     ("count(answer, '?') <= 1", "the answer asks at most one question")),
    (1, 2), _count_type, _count,
    condition=lambda tests: sum(1 for t in tests if t), condition_result=NUMBER,
))

# ---------------------------------------------------------------- calls


def _tool_name_type(result: Type) -> TypeRule:
    def rule(a: Sequence[Type]) -> Type:
        _need(a, 0, "a tool's name in quotes", "text",
              hint="write the tool's name in quotes: called('book_table')")
        return result

    return rule


def _called(env: Bindings, name: Any) -> bool:
    _check(name, 0, "text", str)
    return name in env.first_call


def _call(env: Bindings, name: Any) -> Any:
    _check(name, 0, "text", str)
    return env.first_call.get(name)


_register(Function(
    "called", "called(tool name) → true/false",
    "Whether the agent called the tool (a call waiting for confirmation counts).",
    (("called('book_appointment')", "the agent booked"),
     ("not called('cancel_appointment')", "the agent cancelled nothing")),
    (1, 1), _tool_name_type(BOOL), _called, env=True,
))
_register(Function(
    "call", "call(tool name) → call or null",
    "The first call to the tool, or null when it was not called (its fields are then null "
    "too).",
    (("call('book_appointment').args.time == '15:00'", "the booking is for 15:00"),
     ("call('book_appointment').pending", "the booking waits for the person's yes")),
    (1, 1), _tool_name_type(CALL), _call, env=True,
))


def _item_type(a: Sequence[Type]) -> Type:
    t = _need(a, 0, "a list", "list")
    return t.item if t.kind == "list" and t.item is not None else JSON


def _first(v: Any) -> Any:
    _check(v, 0, "a list", list)
    return v[0] if v else None


def _last(v: Any) -> Any:
    _check(v, 0, "a list", list)
    return v[-1] if v else None


_register(Function(
    "first", "first(list) → item or null",
    "The first item of a list, or null when the list is empty.",
    (("first(calls).name == 'search_slots'", "the agent searched before anything else"),),
    (1, 1), _item_type, _first, nulls=True,
))
_register(Function(
    "last", "last(list) → item or null",
    "The last item of a list, or null when the list is empty.",
    (("last(calls).name == 'book_appointment'", "booking was the last thing it did"),),
    (1, 1), _item_type, _last, nulls=True,
))

# ---------------------------------------------------------------- text


def _text_to_text(a: Sequence[Type]) -> Type:
    _need(a, 0, "text", "text")
    return TEXT


def _text_op(op: Callable[[str], str]) -> Callable[[Any], str]:
    def impl(v: Any) -> str:
        _check(v, 0, "text", str)
        return op(v)

    return impl


_register(Function(
    "lower", "lower(text) → text", "The text in lower case, to compare without regard to "
    "case.",
    (("'pérez' in lower(answer)", "the answer names Pérez, however it is capitalised"),),
    (1, 1), _text_to_text, _text_op(str.lower), nulls=True,
))
_register(Function(
    "upper", "upper(text) → text", "The text in upper case.",
    (("upper(call('book_appointment').args.treatment) == 'CLEANING'",
      "the treatment is cleaning, in any case"),),
    (1, 1), _text_to_text, _text_op(str.upper), nulls=True,
))
_register(Function(
    "trim", "trim(text) → text", "The text without spaces and line breaks at either end.",
    (("trim(answer) != ''", "the answer is not only spaces"),),
    (1, 1), _text_to_text, _text_op(str.strip), nulls=True,
))


def _two_texts(a: Sequence[Type]) -> Type:
    _need(a, 0, "text", "text")
    _need(a, 1, "text", "text")
    return BOOL


def _starts_with(v: Any, part: Any) -> bool:
    _check(v, 0, "text", str)
    _check(part, 1, "text", str)
    return bool(v.startswith(part))


def _ends_with(v: Any, part: Any) -> bool:
    _check(v, 0, "text", str)
    _check(part, 1, "text", str)
    return bool(v.endswith(part))


_register(Function(
    "starts_with", "starts_with(text, start) → true/false", "Whether the text begins with "
    "the other text.",
    (("starts_with(answer, 'Listo')", "the answer opens with Listo"),),
    (2, 2), _two_texts, _starts_with,
))
_register(Function(
    "ends_with", "ends_with(text, end) → true/false", "Whether the text ends with the other "
    "text.",
    (("not ends_with(trim(answer), '?')", "the answer does not end with a question"),),
    (2, 2), _two_texts, _ends_with,
))

# ---------------------------------------------------------------- conversions


def _json_type(a: Sequence[Type]) -> Type:
    _need(a, 0, "text", "text", hint="json reads JSON written in a text, such as the answer")
    return JSON


def _json(env: Bindings, v: Any) -> Any:
    if type(v) is str:
        value = read_json(env, v)
        return None if value is NOT_JSON else value
    if type(v) in (list, dict, int, float, bool):
        return v  # already data (a call's args, a field of JSON)
    raise _bad(0, "text")


_register(Function(
    "json", "json(text) → JSON data or null",
    "The text read as JSON, so its fields can be used; null when the text is not JSON. A "
    "```json fence around it is accepted.",
    (("json(answer) == null", "the answer is not JSON"),
     ("json(call('search_slots').output).doctor == 'Dra. Pérez'",
      "the search returned Dra. Pérez (output.doctor says the same)")),
    (1, 1), _json_type, _json, env=True, nulls=True,
))

_NUMBER_TEXT = re.compile(r"\s*[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\s*\Z")


def _number_type(a: Sequence[Type]) -> Type:
    _need(a, 0, "text or a number", "text", "number")
    return NUMBER


def _number(v: Any) -> int | float:
    t = type(v)
    if t in NUMS:
        return v  # type: ignore[no-any-return]
    _check(v, 0, "text", str)
    if len(v) > 100 or not _NUMBER_TEXT.match(v):
        raise ArgValueError(0, "{arg} is not a number (write it with digits and a '.' for "
                               "decimals, like 12.5)")
    s = v.strip()
    if any(c in s for c in ".eE"):
        f = float(s)
        if f != f or f in (float("inf"), float("-inf")):
            raise ArgValueError(0, "{arg} is too large a number")
        return f
    return int(s)


_register(Function(
    "number", "number(text) → number",
    "The number written in a text ('12', '-3.5'). A text that is not a number makes the check "
    "end as error.",
    (("number(call('search_slots').output.price) < 50", "the quoted price is under 50"),),
    (1, 1), _number_type, _number, nulls=True,
))


def _to_text_type(a: Sequence[Type]) -> Type:
    return TEXT


def _text(v: Any) -> str:
    t = type(v)
    if t is str:
        return str(v)
    if t is int and abs(v) >= 10**30:
        try:
            return str(v)
        except ValueError:  # more digits than Python writes out
            raise ArgValueError(0, "{arg} is too large to write as text") from None
    if t is bool or t in NUMS:
        return display(v)
    if t is dt.date:
        return str(v.isoformat())
    return json.dumps(v, ensure_ascii=False)


_register(Function(
    "text", "text(value) → text",
    "A value written as text: text(3) is '3', text(true) is 'true', a date is 'YYYY-MM-DD', "
    "lists and objects become JSON.",
    (("text(count(calls)) == '2'", "exactly two calls, said as text"),),
    (1, 1), _to_text_type, _text, nulls=True,
))

# ---------------------------------------------------------------- lists


def _bool_list_type(a: Sequence[Type]) -> Type:
    t = _need(a, 0, "a list", "list")
    if t.kind == "list" and t.item is not None and t.item.kind not in ("bool", "json", "null"):
        raise ArgTypeError(
            0, "a list of true/false values",
            "to test each item, add a condition: any(calls, pending) or all(calls, "
            "action == 'read')")
    return BOOL


def _bools(v: Any) -> list[bool]:
    _check(v, 0, "a list", list)
    out: list[bool] = []
    for x in v:
        if type(x) is not bool:
            raise ArgValueError(0, f"{{arg}} has the item {display(x)}, which is not true "
                                   "or false")
        out.append(x)
    return out


_register(Function(
    "any", "any(list) · any(list, condition) → true/false",
    "Whether at least one item is true; with a condition, whether at least one item meets "
    "it. An empty list gives false.",
    (("any(calls, action == 'delete')", "some call deletes something"),
     ("any([called('search_slots'), called('list_slots')])", "one of the two searches ran")),
    (1, 2), _bool_list_type, lambda v: any(_bools(v)), condition=any,
))
_register(Function(
    "all", "all(list) · all(list, condition) → true/false",
    "Whether every item is true; with a condition, whether every item meets it. An empty "
    "list gives true.",
    (("all(calls, error == null)", "every call had valid arguments and an existing tool"),
     ("all(calls, action == 'read' or pending)", "nothing was changed without asking")),
    (1, 2), _bool_list_type, lambda v: all(_bools(v)), condition=all,
))


def _sum_type(a: Sequence[Type]) -> Type:
    t = _need(a, 0, "a list of numbers", "list")
    if t.kind == "list" and t.item is not None and t.item.kind not in ("number", "json"):
        raise ArgTypeError(0, "a list of numbers")
    return NUMBER


def _total(items: Iterable[Any], index: int, what: str) -> int | float:
    """The exact sum (0.1 + 0.2 is 0.3) of numbers, or numbers written as text."""
    total = exact(0)
    ints = True
    for x in items:
        t = type(x)
        if t in NUMS and (t is int or math.isfinite(x)):
            ints = ints and t is int
            total += exact(x)
            continue
        d = number_in(x) if t is str else None
        if d is None:
            raise ArgValueError(index, f"{what} {display(x)}, which is not a number")
        ints = ints and d == d.to_integral_value() and "." not in x
        total += d
    try:
        return plain(total, ints)
    except OverflowError:
        raise ArgValueError(index, "the sum of {arg} is too large") from None


def _sum(v: Any) -> int | float:
    _check(v, 0, "a list", list)
    return _total(v, 0, "{arg} has the item")


def _sum_value_type(t: Type) -> Type:
    if not maybe(t, "number", "null"):
        raise ArgTypeError(1, "a number", "for example: sum(row.items, price)")
    return NUMBER


def _sum_values(values: list[Any]) -> int | float:
    return _total(values, 1, "{arg} is, for one item,")


_register(Function(
    "sum", "sum(list of numbers) · sum(list, value) → number",
    "The sum of the numbers of a list (0 when empty); with a value, the sum of that value "
    "for each item. Decimals add exactly: 0.1 + 0.2 is 0.3.",
    (("sum(call('search_slots').output.prices) < 100", "the prices add up to less than 100"),
     ("sum(calls, len(output)) < 2000", "the tools answered less than 2,000 characters "
                                        "in all")),
    (1, 2), _sum_type, _sum, per_value=_sum_values, per_value_type=_sum_value_type,
))


def _map_type(a: Sequence[Type]) -> Type:
    raise ArgTypeError(1, "a value for each item", "for example: map(row.items, item_id)")


_register(Function(
    "map", "map(list, value) → list",
    "The value for each item of a list, in order: the list of its fields, or of anything "
    "worked out from each item.",
    (("map(calls, name) == ['search_slots', 'book_appointment']",
      "it searched, then booked, and nothing else"),),
    (2, 2), _map_type, lambda *a: None, per_value=list, per_value_type=list_of,
))


def _sorted_type(a: Sequence[Type]) -> Type:
    t = _need(a, 0, "a list", "list")
    item = t.item if t.kind == "list" and t.item is not None else JSON
    if item.kind not in ("number", "text", "date", "json"):
        raise ArgTypeError(0, "a list of numbers, texts or dates")
    return t if t.kind == "list" else JSON


def _sorted(v: Any) -> list[Any]:
    _check(v, 0, "a list", list)
    items = list(v)
    for x in items:
        if items and not ordered(items[0], x):
            raise ArgValueError(0, f"{{arg}} mixes {kind(items[0])} and {kind(x)}, which "
                                   "cannot be put in order")
    return sorted(items, key=_key_of(items))


_register(Function(
    "sorted", "sorted(list) → list",
    "The list in order: numbers from the smallest, texts alphabetically (as Python "
    "sorts them: capitals first), dates from the earliest.",
    (("sorted(map(calls, name)) == ['book_appointment', 'search_slots']",
      "it called these two tools, in either order, once each"),),
    (1, 1), _sorted_type, _sorted, nulls=True,
))


def _replace_type(a: Sequence[Type]) -> Type:
    t = _need(a, 0, "a list", "list")
    _need(a, 1, "a list", "list")
    _need(a, 2, "a list", "list")
    return t if t.kind == "list" else JSON


def _replace(v: Any, old: Any, new: Any) -> list[Any]:
    _check(v, 0, "a list", list)
    _check(old, 1, "a list", list)
    _check(new, 2, "a list", list)
    if len(old) != len(new):
        raise ArgValueError(2, f"{{arg}} has {len(new)} items and the list of what it "
                               f"replaces has {len(old)}: they go in pairs")
    out = list(v)
    done: set[int] = set()
    for was, now in zip(old, new, strict=True):
        at = next((i for i, x in enumerate(out) if i not in done and same(x, was)), None)
        if at is None:
            raise ArgValueError(1, f"{{arg}} has {display(was)}, which is not in the list "
                                   "(or not as many times)")
        out[at] = now
        done.add(at)
    return out


_register(Function(
    "replace", "replace(list, old, new) → list",
    "The list with each item of old replaced by the item of new at the same position — "
    "each where it first appears and was not replaced yet (old and new have as many "
    "items). An item of old the list does not have makes the check end as error.",
    (("replace(['a', 'b', 'a'], ['a'], ['c']) == ['c', 'b', 'a']",
      "the first 'a' is replaced"),),
    (3, 3), _replace_type, _replace,
))


def _extreme_type(a: Sequence[Type]) -> Type:
    if len(a) == 1:
        t = _need(a, 0, "a list", "list", hint="give a list, or two or more values: "
                                                "min(a, b)")
        item = t.item if t.kind == "list" and t.item is not None else JSON
        if item.kind not in ("number", "text", "date", "json"):
            raise ArgTypeError(0, "a list of numbers, texts or dates")
        return item
    first = a[0]
    for i, t in enumerate(a):
        if not maybe(t, "number", "text", "date"):
            raise ArgTypeError(i, "a number, a text or a date")
        if first.kind != "json" and t.kind != "json" and t.kind != first.kind:
            raise ArgTypeError(i, describe(first))
    return next((t for t in a if t.kind != "json"), JSON)


def _key_of(items: list[Any], index: int = 0) -> Callable[[Any], Any]:
    """How to order ``items`` (already known to be pairwise ``ordered`` with the first):
    by value when any is a number (a number written as text then counts by value), else
    as they are."""
    if any(type(x) in NUMS for x in items):
        for x in items:
            if type(x) is str and number_in(x) is None:
                raise ArgValueError(index, f"{{arg}} mixes numbers and the text {display(x)}, "
                                           "which cannot be compared")
        return lambda x: order_key(x) if type(x) in NUMS else number_in(x)
    return lambda x: x


def _extreme(pick: Callable[..., Any]) -> Callable[..., Any]:
    def impl(*values: Any) -> Any:
        if len(values) == 1:
            _check(values[0], 0, "a list", list)
            items = list(values[0])
            if not items:
                raise ArgValueError(0, "{arg} is an empty list")
        else:
            items = list(values)
        first = items[0]
        for i, x in enumerate(items):
            if not ordered(first, x):
                where = 0 if len(values) == 1 else i
                raise ArgValueError(where, f"{{arg}} mixes {kind(first)} and {kind(x)}, which "
                                           "cannot be compared")
        return pick(items, key=_key_of(items))

    return impl


_register(Function(
    "min", "min(list) · min(a, b, …) → the smallest",
    "The smallest number (or earliest text or date) of a list, or of the values given. An "
    "empty list makes the check end as error.",
    (("min(call('search_slots').output.prices) >= 40", "no price under 40"),),
    (1, 50), _extreme_type, _extreme(min),
))
_register(Function(
    "max", "max(list) · max(a, b, …) → the largest",
    "The largest number (or latest text or date) of a list, or of the values given. An "
    "empty list makes the check end as error.",
    (("max(call('search_slots').output.prices) <= 60", "no price over 60"),),
    (1, 50), _extreme_type, _extreme(max),
))

# ---------------------------------------------------------------- numbers


def _num_type(a: Sequence[Type]) -> Type:
    for i in range(len(a)):
        _need(a, i, "a number", "number")
    return NUMBER


def _as_number(v: Any) -> Any:
    """A number written as text ('135.20') as the number; anything else as it is."""
    if type(v) is str:
        d = number_in(v)
        if d is not None:
            return plain(d, "." not in v)
    return v


def _abs(v: Any) -> int | float:
    v = _as_number(v)
    _check(v, 0, "a number", int, float)
    return abs(v)  # type: ignore[no-any-return]


def _round(v: Any, digits: Any = 0) -> int | float:
    v = _as_number(v)
    _check(v, 0, "a number", int, float)
    _check(digits, 1, "a whole number", int)
    if not 0 <= digits <= 10:
        raise ArgValueError(1, "{arg} is not between 0 and 10")
    if type(v) is float and not math.isfinite(v):
        return v
    if abs(v) >= 2**52:  # already whole, and past the digits a Decimal quantizes
        return int(v) if digits == 0 else v
    # Half away from zero, as people round (Python's round(2.5) is 2).
    q = decimal.Decimal(1).scaleb(-digits)
    r = decimal.Decimal(repr(v)).quantize(q, rounding=decimal.ROUND_HALF_UP)
    return int(r) if digits == 0 else float(r)


_register(Function(
    "abs", "abs(number) → number", "The number without its sign.",
    (("abs(latency_ms - 2000) < 5000", "the attempt took within 5 s of 2 s"),),
    (1, 1), _num_type, _abs, nulls=True,
))
_register(Function(
    "round", "round(number) · round(number, digits) → number",
    "The number rounded to a whole number, or to that many decimals (halves round away "
    "from zero).",
    (("round(latency_ms / 1000) <= 30", "the attempt took about 30 seconds or less"),),
    (1, 2), _num_type, _round, nulls=True,
))

# ---------------------------------------------------------------- dates


def _date_type(a: Sequence[Type]) -> Type:
    _need(a, 0, "a date written as text (YYYY-MM-DD)", "text", "date")
    return DATE


def parse_date(s: str) -> dt.date:
    t = s.strip()
    if len(t) < 10 or not t[:4].isdigit():
        raise ValueError(t)
    if len(t) == 10:
        return dt.date.fromisoformat(t)
    return dt.datetime.fromisoformat(t).date()


def _date(v: Any) -> dt.date:
    if type(v) is dt.date:
        return v
    _check(v, 0, "text", str)
    try:
        return parse_date(v)
    except ValueError:
        raise ArgValueError(0, "{arg} is not a date like 2026-10-06 (year-month-day)") \
            from None


def _weekday_type(a: Sequence[Type]) -> Type:
    _date_type(a)
    return NUMBER


_register(Function(
    "date", "date(text) → date",
    "A date written YYYY-MM-DD (a date and time such as 2026-10-06T15:00 gives its date). "
    "Dates compare with <, ==, and subtract to a number of days: date(a) - date(b). A "
    "text that is not a date makes the check end as error.",
    (("date(call('book_appointment').args.date) > date(at.date)",
      "the booking is after today"),
     ("date(call('book_appointment').args.date) - date(at.date) <= 7",
      "the booking is within a week")),
    (1, 1), _date_type, _date, nulls=True,
))
_register(Function(
    "weekday", "weekday(date) → number",
    "The day of the week of a date (or of a text YYYY-MM-DD): 0 Monday, 1 Tuesday, 2 "
    "Wednesday, 3 Thursday, 4 Friday, 5 Saturday, 6 Sunday.",
    (("weekday(date(call('book_appointment').args.date)) < 5", "the booking is on a weekday"),),
    (1, 1), _weekday_type, lambda v: _date(v).weekday(), nulls=True,
))


# ---------------------------------------------------------------- docs


def reference_markdown() -> str:
    """The functions' reference, as docs/expressions.md embeds it."""
    out: list[str] = []
    for f in FUNCTIONS.values():
        out.append(f"### `{f.signature}`\n")
        out.append(f"{f.doc}\n")
        for expr, means in f.examples:
            out.append(f"- `{expr}` — {means}")
        out.append("")
    return "\n".join(out).rstrip() + "\n"

