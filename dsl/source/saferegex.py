"""Regular expressions on untrusted text, bounded in time.

Python's ``re`` has no timeout and holds the GIL while it backtracks: one pattern like
``(a|aa)+$`` on a long model answer would hang the whole run. We compile authors' patterns
with the ``regex`` package (a superset of ``re``'s syntax) and search with its ``timeout``;
a search that runs out of time is reported as a check *error*, never as a pass or a hang.

Compiling is bounded too: ``regex`` writes a counted repetition out, so ``a{1000000000}``
asks for gigabytes and ``(a{1000}){1000}`` for 300 MB before any text is searched. A
pattern is refused, with the place of the repetition, when one minimum count passes
MAX_REPEAT or nested minimum counts multiply past MAX_REPEAT_PRODUCT (``{0,100000}`` is a
loop, not written out, and stays allowed).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:
    import regex
# regex (the library with timeouts) is imported by compile_pattern, when a suite has a
# pattern: importing it is ~15 ms (issue 27)

REGEX_TIMEOUT_S = 0.25  # per search, on one answer
MAX_PATTERN_CHARS = 2_000
MAX_REPEAT = 1_000  # the largest m in {m}, {m,} or {m,n}
MAX_REPEAT_PRODUCT = 10_000  # m of nested repetitions, multiplied: (a{100}){100}
_COUNT = re.compile(r"\{(\d*)(?:,(\d*))?\}")


class RegexTimeout(Exception):
    """A search took longer than REGEX_TIMEOUT_S."""


class PatternError(msgspec.Struct, frozen=True):
    message: str
    offset: int  # 0-based offset of the problem in the pattern


class SafePattern(msgspec.Struct, frozen=True):
    source: str
    compiled: regex.Pattern[str]

    def search(self, text: str) -> regex.Match[str] | None:
        try:
            return self.compiled.search(text, timeout=REGEX_TIMEOUT_S)
        except TimeoutError:
            raise RegexTimeout(
                f"the pattern '{self.source}' took longer than {REGEX_TIMEOUT_S} s on a "
                f"text of {len(text):,} characters; simplify it (nested repeats like "
                "(a+)+ can take forever)"
            ) from None


def compile_pattern(pattern: str, *, ignore_case: bool = False) -> SafePattern | PatternError:
    """Compile an author's pattern, or say what is wrong with it and where."""
    if len(pattern) > MAX_PATTERN_CHARS:
        return PatternError(
            f"the pattern has {len(pattern):,} characters; at most {MAX_PATTERN_CHARS:,} "
            "are allowed",
            0,
        )
    too_many = repetition_problem(pattern)
    if too_many is not None:
        return too_many
    # why: regex; plan or checks load this module without it
    import regex

    flags = regex.IGNORECASE if ignore_case else 0
    try:
        return SafePattern(pattern, regex.compile(pattern, flags | regex.VERSION0))
    except regex.error as exc:
        raw_pos = getattr(exc, "pos", None)
        pos = raw_pos if isinstance(raw_pos, int) else 0
        msg = getattr(exc, "msg", None) or str(exc)
        return PatternError(f"invalid regular expression: {msg} at position {pos}", pos)


def repetition_problem(pattern: str) -> PatternError | None:
    """A counted repetition too large to compile, or None. Walks the pattern once:
    escapes and character classes are skipped, groups multiply their counts."""
    stack = [1]  # per open group: the largest count product inside it so far
    last = 1  # the product of the item just before the current position
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\":
            i += 2
            last = 1
            continue
        if ch == "[":
            i = _class_end(pattern, i)
            last = 1
            continue
        if ch == "(":
            stack.append(1)
            i += 1
            continue
        if ch == ")" and len(stack) > 1:
            last = stack.pop()
            stack[-1] = max(stack[-1], last)
            i += 1
            continue
        m = _COUNT.match(pattern, i) if ch == "{" else None
        if m is not None and (m.group(1) or m.group(2)):
            # regex writes out the minimum count (the rest is a loop): only it costs
            count = int(m.group(1) or 0)
            if count > MAX_REPEAT:
                least = "" if m.group(2) is None else "at least "
                return PatternError(f"the repetition {m.group(0)} repeats {least}{count:,} "
                                    f"times; a count may be at most {MAX_REPEAT:,}", i)
            product = last * max(count, 1)
            if product > MAX_REPEAT_PRODUCT:
                return PatternError(f"the nested repetitions ending with {m.group(0)} repeat "
                                    f"{product:,} times; at most {MAX_REPEAT_PRODUCT:,} are "
                                    "allowed", i)
            stack[-1] = max(stack[-1], product)
            last = product
            i = m.end()
            continue
        last = 1
        i += 1
    return None


def _class_end(pattern: str, start: int) -> int:
    """The index after the ``]`` that closes the class opened at ``start``."""
    i = start + 1
    if i < len(pattern) and pattern[i] == "^":
        i += 1
    if i < len(pattern) and pattern[i] == "]":
        i += 1
    while i < len(pattern):
        if pattern[i] == "\\":
            i += 2
            continue
        if pattern[i] == "]":
            return i + 1
        i += 1
    return i
