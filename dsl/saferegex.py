"""Regular expressions on untrusted text, bounded in time.

Python's ``re`` has no timeout and holds the GIL while it backtracks: one pattern like
``(a|aa)+$`` on a long model answer would hang the whole run. We compile authors' patterns
with the ``regex`` package (a superset of ``re``'s syntax) and search with its ``timeout``;
a search that runs out of time is reported as a check *error*, never as a pass or a hang.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

REGEX_TIMEOUT_S = 0.25  # per search, on one answer
MAX_PATTERN_CHARS = 2_000


class RegexTimeout(Exception):
    """A search took longer than REGEX_TIMEOUT_S."""


@dataclass(frozen=True, slots=True)
class PatternError:
    message: str
    offset: int  # 0-based offset of the problem in the pattern


@dataclass(frozen=True, slots=True)
class SafePattern:
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
    flags = regex.IGNORECASE if ignore_case else 0
    try:
        return SafePattern(pattern, regex.compile(pattern, flags | regex.VERSION0))
    except regex.error as exc:
        raw_pos = getattr(exc, "pos", None)
        pos = raw_pos if isinstance(raw_pos, int) else 0
        msg = getattr(exc, "msg", None) or str(exc)
        return PatternError(f"invalid regular expression: {msg} at position {pos}", pos)
