"""The moment a scenario happens: parsing ``given.at`` and saying it in words; and how the
report and the terminal show a run's times (:func:`minute`)."""

from __future__ import annotations

import datetime as dt

DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August",
          "September", "October", "November", "December")


class MomentError(ValueError):
    def __init__(self, code: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.code = code
        self.hint = hint


def parse_moment(text: str) -> dt.datetime:
    """An ISO 8601 date and time *with* a UTC offset; anything else is a MomentError."""
    raw = text.strip()
    try:
        value = dt.datetime.fromisoformat(raw)
    except ValueError:
        raise MomentError(
            "E209",
            f"'{raw}' is not a date and time",
            "write it as 2026-09-29T10:00:00-03:00 (date, 'T', time, UTC offset)",
        ) from None
    if "T" not in raw.upper() and " " not in raw:
        raise MomentError(
            "E209",
            f"'{raw}' has a date but no time",
            f"add the time and the UTC offset, e.g. {raw}T10:00:00-03:00",
        )
    if value.tzinfo is None or value.utcoffset() is None:
        raise MomentError(
            "E203",
            f"the moment '{raw}' has no UTC offset, so the agent cannot know the local time",
            f"add the offset, e.g. {raw}-03:00, or Z for UTC",
        )
    return value


def utc_offset(at: dt.datetime) -> str:
    off = at.utcoffset() or dt.timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    minutes = abs(minutes)
    return f"UTC{sign}{minutes // 60:02d}:{minutes % 60:02d}"


def say(at: dt.datetime) -> str:
    """``Tuesday 29 September 2026, 10:00 (UTC-03:00)``."""
    return (f"{DAYS[at.weekday()]} {at.day} {MONTHS[at.month - 1]} {at.year}, "
            f"{at.hour:02d}:{at.minute:02d} ({utc_offset(at)})")


def minute(iso: str | None, *, missing: str = "", zone: str = "") -> str:
    """A time kept as ISO text (when a run started) to the minute, in UTC —
    ``2026-11-30 09:15``, then ``zone`` (`` UTC``) when the text had an offset; ``missing``
    when there is no time, the text itself when it is not one."""
    if not iso:
        return missing
    try:
        t = dt.datetime.fromisoformat(iso)
    except ValueError:
        return iso
    if t.tzinfo is None:
        return t.strftime("%Y-%m-%d %H:%M")
    return t.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M") + zone
