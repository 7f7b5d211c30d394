"""``grounded``: every number, time, date and amount of money in the answer appears in what
the agent was given — decided by reading, with no judge.

What the agent was given: the tool results, the person's messages, the system
instructions, earlier turns of the conversation (assistant messages before the person's
last message) and the scenario's moment (its date, weekday, month and time). The
agent's own words in this turn — its tool-call arguments, its answer — ground nothing.

Items are compared by value, not by spelling, in English and Spanish:

* **times**: ``18:00`` = ``18.00 h`` = ``6 pm`` = ``6:00 PM`` = ``18h`` = ``18 hs`` =
  ``las 6 de la tarde``; ``y media``/``y cuarto``; noon, midnight, mediodía, medianoche.
  An hour without a.m./p.m. or a part of the day (``a las 6``, ``at 6``) matches either
  6:00 or 18:00.
* **dates**: ``2026-10-06`` = ``6 October`` = ``October 6th`` = ``Tuesday 6 October`` =
  ``martes 6 de octubre`` = ``06/10/2026`` (day/month or month/day). A date without a
  year takes it from the moment (and matches the year before or after it, for "5 January"
  said in late December); a weekday written with a date must be that date's weekday.
* **UTC offsets** (``UTC-03:00``, ``GMT-3``): the moment's, or one given.
* **weekdays and months** on their own (``martes``, ``October``): given when named there,
  or when a date given there falls on them.
* **numbers and money**: by value. A comma between groups of three digits separates
  thousands (``1,500`` = ``1500``); a point is a decimal point, so ``1.500`` is one and a
  half — decimal commas (``1,5``, Spanish ``1.500``) are out of scope and read as two
  numbers. The currency is not compared, only the amount. Numbers spelled in words
  ("three") are not read; list markers (``1.`` at the start of a line) are not numbers.
* **digits of every script** are read as digits (``١٨:٠٠`` = ``１８：００`` = ``۱۸:۰۰`` =
  ``𝟏𝟖:𝟎𝟎`` = ``18:00``), and so are superscripts, circled numbers and vulgar
  fractions (``⁴⁵ pesos y ½``: 45 pesos and 0.5; ``Turno ⑦ a las ⑨``): see :func:`digits`.

A number or date that is a value from the sources ground it even when it meant something
else there: ``grounded`` catches invented values, not values taken from the wrong row.
"""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

import msgspec

from ..model import AttemptData, Outcome
from .answer import TRUE_SCHEMA, prepare_true
from .registry import check, failed, passed

MONTHS: dict[str, int] = {
    **{m: i for i, m in enumerate(
        ("january", "february", "march", "april", "may", "june", "july", "august",
         "september", "october", "november", "december"), 1)},
    **{m: i for i, m in enumerate(
        ("enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto",
         "septiembre", "octubre", "noviembre", "diciembre"), 1)},
    "setiembre": 9,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12, "ene": 1, "abr": 4, "ago": 8, "dic": 12,
}
# on their own (not in a date): full names only, and never English "may" (a verb)
STANDALONE_MONTHS = frozenset(m for m in MONTHS
                              if len(m) > 3 and m not in ("may", "sept"))
WEEKDAYS: dict[str, int] = {
    **{d: i for i, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday",
                                   "saturday", "sunday"))},
    **{d: i for i, d in enumerate(("lunes", "martes", "miercoles", "jueves", "viernes",
                                   "sabado", "domingo"))},
}
SHORT_WEEKDAYS = {"mon": 0, "tue": 1, "tues": 1, "wed": 2, "thu": 3, "thur": 3, "thurs": 3,
                  "fri": 4, "sat": 5, "sun": 6}  # only written with a date
MAX_TEXT = 200_000  # characters read from one answer or source (model output is unbounded)
_MASK = "\x00"  # consumed text: neither a word, a digit nor a space


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(sorted(words, key=len, reverse=True))


_MONTH = rf"(?P<month>{_alternatives(MONTHS)})\.?"
_WD = rf"(?P<wd>{_alternatives([*WEEKDAYS, *SHORT_WEEKDAYS])})\.?"
_DAY = r"(?P<day>3[01]|[12]\d|0?[1-9])(?:st|nd|rd|th|º|°)?"
_YEAR = r"(?P<year>(?:19|20)\d{2})"
_NUM = r"(?P<num>\d{1,3}(?:,\d{3})+(?!\d)|\d+)(?:\.(?P<frac>\d+))?"
_AMPM = r"(?P<ampm>[ap]\.?\s?m\b\.?)"  # the final point of "p.m." is its own
_HOUR24 = r"(?P<h>2[0-3]|[01]?\d)"  # 20-23 first: "las 20:00" is not "las 2" and "0:00"
_HOUR12 = r"(?P<h>1[0-2]|0?[1-9])"
_PART = (r"(?:\s+(?P<part>de\s+la\s+manana|de\s+la\s+madrugada|de\s+la\s+tarde|"
         r"de\s+la\s+noche|del\s+mediodia|in\s+the\s+morning|in\s+the\s+afternoon|"
         r"in\s+the\s+evening|at\s+night))")
_NOT_AFTER_NUMBER = r"(?<![\w.,:/])"
_END_OF_NUMBER = r"(?![\d:%]|[.,]\d)"


class _Pattern:
    """A regular expression compiled on first use: lint imports every check and never runs
    this one."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._compiled: re.Pattern[str] | None = None

    def finditer(self, text: str) -> Iterator[re.Match[str]]:
        if self._compiled is None:
            self._compiled = re.compile(self.source, re.M)
        return self._compiled.finditer(text)


_c = _Pattern


ISO = _c(r"(?<![\d-])(?P<year>\d{4})-(?P<m>\d{2})-(?P<d>\d{2})"
         r"(?:[t ](?P<h>\d{2}):(?P<mi>\d{2})(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?"
         r"(?!\d)")
SLASH_DATE = _c(r"(?<![\d/])(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<year>\d{4}|\d{2})(?![\d/])")
_ARTICLE = r"(?:(?:the|el)\s+)?"
DATE_DAY_MONTH = _c(rf"\b{_ARTICLE}(?P<item>(?:{_WD},?\s+)?{_ARTICLE}(?:dia\s+)?{_DAY}\s+"
                    rf"(?:of\s+|de\s+)?{_MONTH}(?![a-z])(?:,?\s+(?:de\s+|del\s+)?{_YEAR}"
                    rf"(?!\d))?)")
DATE_MONTH_DAY = _c(rf"\b{_ARTICLE}(?P<item>(?:{_WD},?\s+)?{_MONTH}\s+(?:the\s+)?{_DAY}"
                    rf"(?![\d:])\b(?:,?\s+{_YEAR}(?!\d))?)")
SPANISH_TIME = _c(rf"\b(?:(?P<prep>a|de|desde|hasta|entre|y|o|para|por|sobre)\s+)?"
                  rf"las?\s+(?P<item>{_HOUR24}(?:[:.](?P<mi>[0-5]\d))?"
                  rf"(?:\s+y\s+(?P<frac>media|cuarto))?{_PART}?(?:\s?(?P<hs>hs|h)\b)?)")
CLOCK = _c(rf"{_NOT_AFTER_NUMBER}{_HOUR24}[:h](?P<mi>[0-5]\d)(?::[0-5]\d)?(?!\d)"
           rf"(?:\s?{_AMPM})?{_PART}?(?:\s?(?:hs|h|hrs)\b)?")
CLOCK_DOT = _c(rf"{_NOT_AFTER_NUMBER}{_HOUR24}\.(?P<mi>[0-5]\d)\s?(?:hs|h)\b")  # 18.00 h
HOUR_AMPM = _c(rf"{_NOT_AFTER_NUMBER}{_HOUR12}\s?{_AMPM}")
HOUR_H = _c(rf"{_NOT_AFTER_NUMBER}{_HOUR24}\s?(?:hs|h)\b")
ENGLISH_HOUR = _c(rf"\b(?:at|until|till|til|from|to|by|before|after|around)\s+"
                  rf"(?P<item>{_HOUR12}(?:\.(?P<mi>[0-5]\d))?{_END_OF_NUMBER}(?:\s+o'?clock)?"
                  rf"{_PART}?)(?!\s*%)")  # "at 10.30": a British time, not a decimal
UTC_OFFSET = _c(r"\b(?:utc|gmt)\s?(?P<sign>[+\-\u2212])\s?(?P<h>\d{1,2})(?::?(?P<mi>\d{2}))?"
                r"(?!\d)")
NAMED_TIME = _c(r"\b(?P<word>noon|midday|midnight|mediodia|medianoche)\b")
MONEY_BEFORE = _c(rf"(?P<cur>us\$|u\$s|usd|ars|eur|mxn|gbp|\$|€|£)\s?{_NUM}")
MONEY_AFTER = _c(rf"{_NOT_AFTER_NUMBER}{_NUM}\s?(?P<cur>usd|ars|eur|mxn|gbp|€|\$|pesos?|"
                 r"euros?|dolares|dollars?|bucks)(?![a-z])")
PHONE = _c(r"(?<![\w+])(?P<phone>(?:\+\d{1,3}[\s-]?)?(?:\(\d{1,4}\)[\s-]?)?\d{2,4}"
           r"(?:[\s-]\d{2,5}){1,4})(?![\w])")
PERCENT = _c(rf"{_NOT_AFTER_NUMBER}{_NUM}\s?%")
LIST_MARKER = _c(r"^\s*(?:[-*]\s+)?\d{1,2}[.)](?=\s)")
NUMBER = _c(rf"(?<![a-z\d]){_NUM}")
WEEKDAY = _c(rf"\b(?P<wd>{_alternatives(WEEKDAYS)})s?\b")
MONTH_WORD = _c(rf"\b(?P<month>{_alternatives(STANDALONE_MONTHS)})\b")
DIGIT_RUN = _c(r"\d+")
GENEROUS_NUMBER = _c(r"\d{1,3}(?:,\d{3})+(?!\d)|\d+\.\d+|\d+")


# ----------------------------------------------------------------------- items


class Item(msgspec.Struct, frozen=True):
    """One number, time, date or amount, as written and as a value."""

    kind: str  # number | money | time | date | weekday | month | phone | offset
    text: str  # as written
    number: Decimal | None = None  # number, money; an ambiguous hour's hour
    minutes: tuple[int, ...] = ()  # time: the minutes after midnight it may mean
    dates: tuple[tuple[int | None, int, int], ...] = ()  # date: (year, month, day) readings
    weekday: int | None = None  # weekday; a date's written weekday
    month: int | None = None  # month
    digits: str = ""  # phone
    offset: int | None = None  # a UTC offset, in minutes


def digits(text: str) -> tuple[str, list[int]]:
    """The text with every digit written the ASCII way, and where each of its characters
    was in ``text`` (``where[i]``: the index of the character it came from).

    Every Unicode decimal digit (Arabic-Indic ``١٨``, Persian ``۱۸``, fullwidth ``１８``,
    mathematical ``𝟏𝟖``, ...) is its digit; superscripts and circled numbers (``⁴⁵``,
    ``⑦``, ``⑳``) their NFKC digits; a vulgar fraction (``½``) its value (``0.5``, or
    ``.5`` right after a digit: ``4½`` is 4.5); a fullwidth sign (``：``) its ASCII form."""
    if text.isascii():
        return text, list(range(len(text)))
    out: list[str] = []
    where: list[int] = []
    for i, c in enumerate(text):
        form = c if c.isascii() else _digit_form(c, bool(out) and out[-1][-1:].isdigit())
        out.append(form)
        where.extend([i] * len(form))
    return "".join(out), where


def _digit_form(c: str, after_digit: bool) -> str:
    value = unicodedata.decimal(c, None)
    if value is not None:
        return str(value)
    compatible = unicodedata.normalize("NFKC", c)
    if "\u2044" in compatible:  # a vulgar fraction: ½ is 1⁄2 (with the fraction slash)
        number = unicodedata.numeric(c, None)
        if number is not None and 0 < number < 1:
            text = f"{Decimal(str(number)).normalize():f}"
            return text[1:] if after_digit else text
    if compatible.isascii() and (any(ch.isdigit() for ch in compatible)
                                 or "\uff00" <= c <= "\uffef"):
        return compatible
    return c


def fold(text: str) -> str:
    """Lower case without accents, one character for one (positions are kept)."""
    return "".join(_fold_char(c) for c in text)


def _fold_char(c: str) -> str:
    if c.isascii():
        return c.lower()
    base = unicodedata.normalize("NFD", c)[0]
    low = base.lower()
    return low if len(low) == 1 else base


def _decimal(num: str, frac: str | None = None) -> Decimal | None:
    try:
        return Decimal(num.replace(",", "") + (f".{frac}" if frac else ""))
    except InvalidOperation:
        return None


def _hour(h: int, minute: int, ampm: str | None, part: str | None) -> tuple[int, ...]:
    """The minutes after midnight an hour may mean."""
    marker = (ampm or "").replace(".", "").replace(" ", "")
    part = " ".join((part or "").split())
    if h > 12 or h == 0:
        return (h * 60 + minute,)
    if marker == "pm" or part in ("de la tarde", "in the afternoon", "in the evening"):
        return ((h % 12 + 12) * 60 + minute,)
    if part in ("de la noche", "at night"):
        return (((h % 12 + 12) % 24 if h != 12 else 0) * 60 + minute,)
    if part == "del mediodia":
        return ((12 if h == 12 else h + 12) * 60 + minute,)
    if marker == "am" or part in ("de la manana", "de la madrugada", "in the morning"):
        return ((h % 12) * 60 + minute,)
    return tuple(sorted({(h % 12) * 60 + minute, (h % 12 + 12) * 60 + minute}))


class _Reader:
    """Finds the items of one text, consuming each piece once, most specific first."""

    def __init__(self, text: str) -> None:
        self.original = text[:MAX_TEXT]
        ascii_digits, self.where = digits(self.original)
        self.work = fold(ascii_digits)
        self.items: list[tuple[int, Item]] = []

    def written(self, start: int, end: int) -> str:
        """The original text of ``work[start:end]`` (its digits as they were written)."""
        if end <= start:
            return ""
        return self.original[self.where[start]:self.where[end - 1] + 1]

    def take(self, pattern: _Pattern,
             make: Callable[[re.Match[str], str], Item | None], group: str | int = 0) -> None:
        spans = []
        for m in pattern.finditer(self.work):
            if _MASK in m.group(0):
                continue
            item = make(m, _written(self.written(m.start(group), m.end(group))))
            if item is None:
                continue
            self.items.append((m.start(group), item))
            spans.append((m.start(), m.end()))
        self.mask(spans)

    def mask(self, spans: Iterable[tuple[int, int]]) -> None:
        """Consume these pieces (in order, not overlapping), so no later pattern reads
        them again."""
        pieces, at = [], 0
        for start, end in spans:
            pieces += [self.work[at:start], _MASK * (end - start)]
            at = end
        if pieces:
            self.work = "".join([*pieces, self.work[at:]])

    def sorted(self) -> list[Item]:
        return [item for _, item in sorted(self.items, key=lambda x: x[0])]


def _written(text: str) -> str:
    """An item as written, without the point that ends the sentence ("7 pm." → "7 pm";
    "8 p.m." stays)."""
    text = text.strip()
    if text.endswith(".") and text.count(".") == 1 and text[-2:-1].isalpha():
        return text[:-1]
    return text


def _iso(m: re.Match[str], text: str) -> Item | None:
    y, mo, d = int(m["year"]), int(m["m"]), int(m["d"])
    if not _valid(y, mo, d):
        return None
    minutes = (int(m["h"]) * 60 + int(m["mi"]),) if m["h"] and int(m["h"]) < 24 else ()
    return Item("date", text, dates=((y, mo, d),), minutes=minutes)


def _slash(m: re.Match[str], text: str) -> Item | None:
    a, b, y = int(m["a"]), int(m["b"]), int(m["year"])
    y = y + 2000 if y < 100 else y
    readings = tuple(r for r in ((y, b, a), (y, a, b)) if _valid(*r))
    return Item("date", text, dates=readings) if readings else None


def _named_date(m: re.Match[str], text: str) -> Item | None:
    month = MONTHS[m["month"].rstrip(".")]
    day = int(m["day"])
    year = int(m["year"]) if m["year"] else None
    if not _valid(year or 2000, month, day):  # 2000: a leap year, so 29 February is a date
        return None
    wd = m["wd"].rstrip(".") if m["wd"] else None
    weekday = WEEKDAYS.get(wd, SHORT_WEEKDAYS.get(wd or "")) if wd else None
    return Item("date", text, dates=((year, month, day),), weekday=weekday)


def _valid(y: int, m: int, d: int) -> bool:
    try:
        dt.date(y, m, d)
    except ValueError:
        return False
    return True


def _spanish_time(m: re.Match[str], text: str) -> Item | None:
    qualified = m["mi"] or m["frac"] or m["part"] or m["hs"]
    if not (qualified or m["prep"]):
        return None  # "las 3 citas": three appointments, not three o'clock
    h = int(m["h"])
    minute = int(m["mi"] or 0) + {"media": 30, "cuarto": 15}.get(m["frac"] or "", 0)
    minutes = _hour(h, minute, None, m["part"])
    return Item("time", text, minutes=minutes,  # "a las 6" may be the number 6 as given
                number=Decimal(h) if len(minutes) > 1 and not m["mi"] and not minute
                else None)  # "a las 9:00" is a time of day, never the number 9


def _clock(m: re.Match[str], text: str) -> Item:
    h, minute = int(m["h"]), int(m["mi"])
    if m["h"].startswith("0") and not (m["ampm"] or m["part"]):
        return Item("time", text, minutes=(h * 60 + minute,))  # 06:00: the 24-hour clock
    return Item("time", text, minutes=_hour(h, minute, m["ampm"], m["part"]))


def _hour_ampm(m: re.Match[str], text: str) -> Item:
    return Item("time", text, minutes=_hour(int(m["h"]), 0, m["ampm"], None))


def _hour_minute(m: re.Match[str], text: str) -> Item:
    return Item("time", text, minutes=(int(m["h"]) * 60 + int(m["mi"]),))


def _hour_h(m: re.Match[str], text: str) -> Item:
    return Item("time", text, minutes=(int(m["h"]) * 60,))


def _english_hour(m: re.Match[str], text: str) -> Item:
    minute = int(m["mi"] or 0)
    minutes = _hour(int(m["h"]), minute, None, m["part"])
    return Item("time", text, minutes=minutes,
                number=Decimal(int(m["h"])) if len(minutes) > 1 and not m["mi"] else None)


def _utc_offset(m: re.Match[str], text: str) -> Item:
    minutes = int(m["h"]) * 60 + int(m["mi"] or 0)
    return Item("offset", text, offset=minutes if m["sign"] == "+" else -minutes)


def _named_time(m: re.Match[str], text: str) -> Item:
    return Item("time", text, minutes=(0 if m["word"] in ("midnight", "medianoche") else 720,))


def _money(m: re.Match[str], text: str) -> Item | None:
    value = _decimal(m["num"], m["frac"])
    return Item("money", text, number=value) if value is not None else None


def _phone(m: re.Match[str], text: str) -> Item | None:
    raw = m["phone"]
    digits = re.sub(r"\D", "", raw)
    if len(digits) < 7 or not (raw.startswith(("+", "(")) or "-" in raw):
        return None  # "11 4567 8901" stays three numbers; "1500 2000" two amounts
    return Item("phone", raw.strip(), digits=digits)


def _number(m: re.Match[str], text: str) -> Item | None:
    value = _decimal(m["num"], m["frac"])
    return Item("number", text, number=value) if value is not None else None


def _weekday(m: re.Match[str], text: str) -> Item:
    return Item("weekday", text, weekday=WEEKDAYS[m["wd"]])


def _month_word(m: re.Match[str], text: str) -> Item | None:
    if m["month"] == "march" and not text[:1].isupper():
        return None  # "march", the verb
    return Item("month", text, month=MONTHS[m["month"]])


def read_items(text: str) -> list[Item]:
    """Every number, time, date and amount in a text, in order."""
    r = _Reader(text)
    r.take(ISO, _iso)
    r.take(SLASH_DATE, _slash)
    r.take(DATE_DAY_MONTH, _named_date, "item")
    r.take(DATE_MONTH_DAY, _named_date, "item")
    r.take(UTC_OFFSET, _utc_offset)  # before the clock: UTC-03:00 is not three o'clock
    r.take(SPANISH_TIME, _spanish_time, "item")
    r.take(CLOCK, _clock)
    r.take(CLOCK_DOT, _hour_minute)
    r.take(HOUR_AMPM, _hour_ampm)
    r.take(HOUR_H, _hour_h)
    r.take(ENGLISH_HOUR, _english_hour, "item")
    r.take(NAMED_TIME, _named_time)
    r.take(MONEY_BEFORE, _money)
    r.take(MONEY_AFTER, _money)
    r.take(PHONE, _phone)
    r.take(PERCENT, _number)
    r.mask([(m.start(), m.end()) for m in LIST_MARKER.finditer(r.work)])
    r.take(NUMBER, _number)
    r.take(WEEKDAY, _weekday)
    r.take(MONTH_WORD, _month_word)
    return r.sorted()


# ----------------------------------------------------------------------- what was given


class Facts(msgspec.Struct):
    """The values found in what the agent was given."""

    year: int  # the moment's: the year of a date written without one
    numbers: set[Decimal] = msgspec.field(default_factory=set)
    minutes: set[int] = msgspec.field(default_factory=set)
    dates: set[dt.date] = msgspec.field(default_factory=set)
    weekdays: set[int] = msgspec.field(default_factory=set)
    months: set[int] = msgspec.field(default_factory=set)
    digits: list[str] = msgspec.field(default_factory=list)
    offsets: set[int] = msgspec.field(default_factory=set)

    def add_text(self, text: str) -> None:
        folded = fold(digits(text[:MAX_TEXT])[0])
        for m in GENEROUS_NUMBER.finditer(folded):  # every number, even inside a time
            value = _decimal(m.group(0))
            if value is not None:
                self.numbers.add(value)
        for m in DIGIT_RUN.finditer(folded):
            self.numbers.add(Decimal(m.group(0)))
            self.digits.append(m.group(0))
        for item in read_items(text):
            self.add_item(item)

    def add_item(self, item: Item) -> None:
        if item.number is not None:
            self.numbers.add(item.number)
        self.minutes.update(item.minutes)
        for y, m, d in item.dates:
            if _valid(y or self.year, m, d):  # 29 February, in a year that has none
                self.add_date(dt.date(y or self.year, m, d))
        if item.weekday is not None and item.kind == "weekday":
            self.weekdays.add(item.weekday)
        if item.month is not None:
            self.months.add(item.month)
        if item.digits:
            self.digits.append(item.digits)
        if item.offset is not None:
            self.offsets.add(item.offset)

    def add_date(self, day: dt.date) -> None:
        self.dates.add(day)
        self.weekdays.add(day.weekday())
        self.months.add(day.month)
        self.numbers.update(Decimal(x) for x in (day.year, day.month, day.day))

    def add_moment(self, at: dt.datetime) -> None:
        self.add_date(at.date())
        self.minutes.add(at.hour * 60 + at.minute)
        self.numbers.update(Decimal(x) for x in (at.hour, at.minute))
        self.offsets.add(int((at.utcoffset() or dt.timedelta(0)).total_seconds() // 60))

    def add_data(self, data: Any) -> None:
        """A tool result that is JSON: every key and value (numbers as numbers)."""
        for value in _leaves(data):
            if isinstance(value, str):
                self.add_text(value)
            else:
                self.numbers.add(Decimal(str(value)))
                if isinstance(value, int):
                    self.digits.append(str(abs(value)))

    def grounds(self, item: Item) -> bool:
        match item.kind:
            case "number" | "money":
                return item.number in self.numbers
            case "time":
                return any(t in self.minutes for t in item.minutes) or (
                    item.number is not None and item.number in self.numbers)
            case "date":
                return any(self._date_given(r, item.weekday) for r in item.dates) and (
                    not item.minutes or any(t in self.minutes for t in item.minutes))
            case "weekday":
                return item.weekday in self.weekdays
            case "month":
                return item.month in self.months
            case "offset":
                return item.offset in self.offsets
            case "phone":  # as given, or each group as given ("1500-2000": a range)
                return any(item.digits in d for d in self.digits) or all(
                    g in self.digits for g in re.findall(r"\d+", item.text))
        return False

    def _date_given(self, reading: tuple[int | None, int, int], weekday: int | None) -> bool:
        y, m, d = reading
        years = (y,) if y is not None else (self.year, self.year - 1, self.year + 1)
        for year in years:
            if not _valid(year, m, d):
                continue
            day = dt.date(year, m, d)
            if day in self.dates and (weekday is None or day.weekday() == weekday):
                return True
        return False


def _leaves(data: Any) -> Iterator[Any]:
    if isinstance(data, Mapping):
        for k, v in data.items():
            yield str(k)
            yield from _leaves(v)
    elif isinstance(data, list):
        for v in data:
            yield from _leaves(v)
    elif isinstance(data, bool) or data is None:
        return
    elif isinstance(data, int | float | str):
        yield data


def _content(message: Mapping[str, Any], attached: Mapping[str, Any] | None = None) -> str:
    c = message.get("content")
    if isinstance(c, str):
        return c
    if isinstance(c, list):  # content parts; an attached text file was given too
        # why: attachments, only when a scenario has some; checks loads this module without it
        from ..compiler.attachments import readable

        return readable(c, attached)
    return ""


def given(attempt: AttemptData) -> Facts:
    """Everything the agent was given, as values."""
    facts = Facts(attempt.at.year)
    facts.add_moment(attempt.at)
    facts.add_text(attempt.message)
    for call in attempt.calls:
        if call.output is not None:
            _add_source(facts, call.output)
    messages = list(attempt.messages)
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"),
                    default=-1)
    attached = attempt.attached()
    for i, m in enumerate(messages):
        role = m.get("role")
        if role in ("system", "user", "tool") or (role == "assistant" and i < last_user):
            _add_source(facts, _content(m, attached))
    return facts


def _add_source(facts: Facts, text: str) -> None:
    stripped = text.strip()
    if stripped[:1] in ("{", "["):
        try:
            facts.add_data(json.loads(stripped))
            return
        except ValueError:
            pass
    facts.add_text(text)


# ----------------------------------------------------------------------- the check


@check(
    "grounded",
    doc="Every number, time, date and amount in the answer appears in what the agent was "
        "given (no judge).",
    schema=TRUE_SCHEMA,
    examples=("grounded: true",),
    prepare=prepare_true,
    group="answer",
    details="What the agent was given: the tool results, the person's messages, the "
    "system instructions, earlier turns of the conversation and the scenario's moment (its "
    "date, weekday and time). Values compare by value, not spelling, in English and "
    "Spanish: `18:00` = `6 pm` = `18 hs` = `las 6 de la tarde`; `2026-10-06` = `6 October` "
    "= `martes 6 de octubre` (a date without a year takes the moment's); an hour without "
    "a.m./p.m. (`a las 6`) matches 6:00 or 18:00. Numbers by value: a comma between groups "
    "of three digits separates thousands (`1,500` = `1500`) and a point is a decimal point "
    "— decimal commas (`1,5`, Spanish `1.500`) are not supported. The currency is not "
    "compared; numbers in words are not read. Digits of every script are digits "
    "(`١٨:٠٠` = `１８：００` = `18:00`), and so are superscripts, circled numbers and "
    "vulgar fractions (`⁴⁵ pesos y ½`, `Turno ⑦`). It catches invented values, not a value "
    "taken from the wrong row (Thursday's hours given for Tuesday): pair it with "
    "`faithful` or `contains` for that. The failure lists each value as the answer wrote "
    "it.",
)
def grounded(p: bool, a: AttemptData) -> Outcome:
    items = read_items(a.answer)
    if not items:
        return passed("the answer states no number, time, date or amount")
    facts = given(a)
    missing = [i for i in items if not facts.grounds(i)]
    if not missing:
        return passed(f"every number, time, date and amount in the answer ({len(items)}) is "
                      "in what the agent was given")
    shown = list(dict.fromkeys(i.text for i in missing))
    listed = ", ".join(json.dumps(t, ensure_ascii=False) for t in shown)
    share = ("its only number, time, date or amount" if len(items) == 1 else
             f"{len(missing)} of its {len(items)} numbers, times, dates and amounts")
    return failed(f"the answer states what the agent was not given: {listed} ({share})",
                  score=round(1 - len(missing) / len(items), 4))
