"""Redaction: secrets never reach the judge, the terminal or any file Scenarist writes.

Before a judge prompt is sent, before a results line, a cassette line or a judge-cache
entry is written, and before an endpoint's message is shown or kept, two kinds of secrets
are replaced by ``[REDACTED:NAME]``:

* the **values** of the environment variables the suite names (every target's
  ``api_key_env`` and the suite's ``redact.env``) — NAME is the variable's name. A value of
  ``MIN_SECRET_CHARS`` characters or more is replaced wherever it appears; a shorter one
  (a placeholder key such as ``dummy`` for a local server) only where it stands as a whole
  word, so that ordinary text around it survives;
* text matching **patterns**: the defaults below for common key formats, plus the suite's
  ``redact.patterns`` — NAME is the pattern's name.

Structured data (an attempt record, a cassette entry) is redacted value by value, never as
serialized text, so what is written is always valid JSON: every string is redacted; a
number whose digits a pattern matches becomes the replacement text; and an entry whose key
and value read together as an assignment a pattern matches (``"aws_secret_key":
"wJalr…"``) has its value replaced. A text that is itself JSON (a call's arguments as the
model wrote them) stays JSON: when redacting its text would break it, its values are
redacted one by one instead.

**One rule** (docs/suite.md#redaction, docs/architecture.md): what Scenarist writes or
prints is redacted; the agent, its tools and the checks work on the true values. What is
written keeps beside it, for each ``[REDACTED:NAME]`` it holds, *which* of the secrets the
scenario itself holds stood there (:meth:`Redactor.traced`: an index into the scenario's
:class:`Known` secrets, never the secret), so that a replay (the tools are called with the
true arguments) and a recheck (the checks see the true answer) restore exactly what the
live attempt had (:func:`restore`). A secret the scenario does not hold (one the agent made
up or read elsewhere) cannot be restored: there, the live checks see its mark too, so live,
replay and recheck still agree.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec
import regex

from ..model import RedactConfig, Target
from ..targets.kinds import key_env

MIN_SECRET_CHARS = 6  # shorter "secrets" would redact ordinary words

DEFAULT_PATTERNS: dict[str, str] = {
    # OpenAI-style keys: sk-..., sk-proj-..., sk-ant-... (Anthropic)
    "api-key": r"\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}",
    # HTTP bearer tokens
    "bearer-token": r"(?i)\bBearer\s+[A-Za-z0-9._~+/=\-]{12,}",
    # AWS access key ids and secret access keys
    "aws-access-key": r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",
    # the assignment as a whole (a bare 40-character string is too common to redact)
    "aws-secret-key": r"(?i)\baws_?secret_?(?:access_?)?key\b(?:\\?[\"'])?\s*[:=]\s*"
                      r"(?:\\?[\"'])?[A-Za-z0-9/+]{40}\b",
    # GitHub tokens
    "github-token": r"\bgh[pousr]_[A-Za-z0-9]{36,}\b",
}


class Redactor(msgspec.Struct, frozen=True):
    # One pattern per NAME, applied in turn: each keeps its literal-prefix fast path (one
    # alternation of them all was 400x slower on a results line).
    patterns: tuple[tuple[regex.Pattern[str], str], ...]
    # Every pattern matches in the texts of a value joined by a separator exactly where it
    # matches in the texts alone (no anchors, no lookaround): one search of the joined text
    # then tells whether a value holds a secret at all (7x faster on an attempt record).
    probe: bool = True
    # the names of the variables whose values it redacts (set or not): the suite's secrets,
    # which a command program never inherits (dsl/clients/command.py)
    env: frozenset[str] = frozenset()
    # each set variable's replacement and value: a secret every attempt may know
    values: tuple[tuple[str, str], ...] = ()

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for pattern, replacement in self.patterns:
            text = pattern.sub(replacement, text)
        return text

    def value(self, data: Any) -> Any:
        """``data`` (a JSON-like value) with every secret in it redacted; ``data`` itself
        when it holds none (the common case costs one search per pattern)."""
        if not self.patterns:
            return data
        if self.probe:
            texts: list[str] = []
            _texts(data, texts)
            joined = "\n\x00\n".join(texts)
            if not any(p.search(joined) for p, _ in self.patterns):
                return data
        return self._value(data)

    def _value(self, data: Any) -> Any:
        if isinstance(data, str):
            return self._text(data)
        if isinstance(data, bool) or data is None:
            return data
        if isinstance(data, int | float):
            text = str(data)
            redacted = self(text)
            return data if redacted == text else redacted
        if isinstance(data, list | tuple):
            return [self._value(x) for x in data]
        if isinstance(data, dict):
            out = {}
            for k, v in data.items():
                key = self(k) if isinstance(k, str) else k
                if isinstance(v, str) and isinstance(k, str):
                    name = self._assignment(k, v)
                    if name is not None:
                        out[key] = name
                        continue
                out[key] = self._value(v)
            return out
        return data

    def _text(self, text: str) -> str:
        """A text redacted; one that is JSON stays JSON (its values redacted one by one when
        redacting the text would break it)."""
        red = self(text)
        if red == text or not _JSONISH.match(text):
            return red
        try:
            parsed = json.loads(text)
        except ValueError:
            return red
        try:
            json.loads(red)
            return red
        except ValueError:
            return json.dumps(self._value(parsed), ensure_ascii=False)

    # -- the one rule: redacted, with where each mark came from --------------------------

    def known(self, source: Any) -> Known:
        """The secrets ``source`` holds (a scenario, a request: any value; its texts are
        searched), and every set variable's value: for each ``[REDACTED:NAME]``, the texts it
        may stand for, sorted."""
        texts: list[str] = []
        _source_texts(source, texts)
        found: dict[str, set[str]] = {}
        for mark, value in self.values:
            found.setdefault(mark, set()).add(value)
        for pattern, replacement in self.patterns:
            mark = _unescaped(replacement)
            for text in texts:
                for m in pattern.finditer(text):
                    found.setdefault(mark, set()).add(m.group(0))
        return Known({k: tuple(sorted(v)) for k, v in found.items()})

    def traced(self, data: Any, known: Known, kept: frozenset[str] = frozenset(),
               numbers_under: frozenset[str] | None = None) -> tuple[Any, list[Any]]:
        """``data`` redacted (as :meth:`value`), and for each mark in its values, in order,
        which of ``known``'s texts stood there (its index; None when it is none of them —
        the mark stays on :func:`restore`). ``[]`` when ``data`` holds no mark.

        ``kept``: keys of ``data`` (a mapping) whose values are written as they are (a
        record's run, its timings, a cassette line's key). ``numbers_under``: numbers are
        redacted only below these keys (a call's ``args``, the world's rows), so that the
        counts and indexes of a record stay numbers; None: everywhere."""
        if not self.patterns:
            return data, []
        texts: list[str] = []
        _texts(data, texts)
        joined = "\n\x00\n".join(texts)
        if not (MARK.search(joined) or not self.probe
                or any(p.search(joined) for p, _ in self.patterns)):
            return data, []
        hints: list[Any] = []
        if kept and isinstance(data, dict):
            out = {k: v if k in kept else self._traced(v, known, hints, numbers_under,
                                                       numbers_under is None or k in
                                                       numbers_under)
                   for k, v in data.items()}
            return out, hints
        return self._traced(data, known, hints, numbers_under, numbers_under is None), hints

    def _traced(self, data: Any, known: Known, hints: list[Any],
                under: frozenset[str] | None = None, numbers: bool = True) -> Any:
        if isinstance(data, str):
            red = self._text(data)
            if red != data and _JSONISH.match(data) and red != self(data):  # JSON kept
                inner: list[Any] = []
                again = self._traced(json.loads(data), known, inner)
                if inner:
                    hints.append(["j", inner])
                return json.dumps(again, ensure_ascii=False)
            hints.extend(self._hints(data, red, known))
            return red
        if isinstance(data, bool) or data is None:
            return data
        if isinstance(data, int | float):
            if not numbers:
                return data
            text = str(data)
            red = self(text)
            if red == text:
                return data
            found = self._hints(text, red, known)
            if found:
                hints.append(["n", found])
            return red
        if isinstance(data, list | tuple):
            return [self._traced(x, known, hints, under, numbers) for x in data]
        if isinstance(data, dict):
            out = {}
            for k, v in data.items():
                key = self(k) if isinstance(k, str) else k  # keys keep no hint
                if isinstance(v, str) and isinstance(k, str):
                    name = self._assignment(k, v)
                    if name is not None:
                        out[key] = _unescaped(name)
                        hints.extend([None] * len(MARK.findall(out[key])))
                        continue
                out[key] = self._traced(v, known, hints, under,
                                        numbers or (under is not None and k in under))
            return out
        return data

    def restore(self, data: Any, hints: list[Any], known: Known) -> Any:
        """``data`` as :meth:`traced` wrote it, its marks put back (:func:`restore`)."""
        return restore(data, hints, known)

    def _hints(self, text: str, red: str, known: Known) -> list[Any]:
        """For each mark of ``red`` (``text`` redacted), the index of the text it replaced
        among ``known``'s (None: not one of them, or a mark ``text`` itself held)."""
        count = len(MARK.findall(red))
        if not count:
            return []
        found: list[tuple[str, str]] = []

        def stand_in(mark: str) -> Any:
            def sub(m: Any) -> str:
                found.append((mark, m.group(0)))
                return f"\x00{len(found) - 1}\x00"
            return sub

        traced = text
        for pattern, replacement in self.patterns:
            traced = pattern.sub(stand_in(_unescaped(replacement)), traced)
        if _STAND_IN.sub(lambda m: found[int(m.group(1))][0], traced) != red:
            return [None] * count  # a pattern matched across another's mark
        out: list[Any] = []
        for piece in _PIECES.finditer(traced):
            if piece.group(1) is None:  # a mark the text itself held
                out.append(None)
                continue
            mark, secret = found[int(piece.group(1))]
            texts = known.marks.get(mark, ())
            out.append(texts.index(secret) if secret in texts else None)
        return out if len(out) == count else [None] * count

    def _assignment(self, key: str, value: str) -> str | None:
        """The replacement for ``value`` when ``key: value`` reads as an assignment that a
        pattern matches into the value."""
        text = f"{key}: {value}"
        start = len(key) + 2
        for pattern, replacement in self.patterns:
            for m in pattern.finditer(text):
                if m.start() < start < m.end():
                    return replacement
        return None


class Known(msgspec.Struct, frozen=True):
    """The secrets an attempt may know (:meth:`Redactor.known`): for each mark, the texts
    it may stand for."""

    marks: Mapping[str, tuple[str, ...]]


# What redaction leaves where a secret was (the no_secrets check looks for it too)
MARK = regex.compile(r"\[REDACTED:[^\]\s]{1,200}\]")
_STAND_IN = regex.compile(r"\x00(\d+)\x00")
_PIECES = regex.compile(r"\x00(\d+)\x00|\[REDACTED:[^\]\s]{1,200}\]")
_JSONISH = regex.compile(r"\s*[\[{]")
# what a scenario's own secrets are never searched in: places, and the checks (a recheck's
# checks may change without changing what the agent was told)
_NOT_SOURCE = frozenset({"span", "spans", "columns", "checks", "file", "id", "target"})


def _source_texts(source: Any, out: list[str]) -> None:
    """Every text a value holds, a compiled scenario's fields included (not its checks)."""
    if isinstance(source, msgspec.Struct):
        for name in source.__struct_fields__:
            if name not in _NOT_SOURCE:
                _source_texts(getattr(source, name), out)
    elif isinstance(source, Mapping):
        for k, v in source.items():
            out.append(str(k))
            if isinstance(v, str):
                out.append(f"{k}: {v}")
            _source_texts(v, out)
    elif isinstance(source, list | tuple):
        for x in source:
            _source_texts(x, out)
    elif isinstance(source, str):
        out.append(source)
    elif isinstance(source, bytes):
        out.append(source.decode("utf-8", "replace"))
    elif isinstance(source, int | float) and not isinstance(source, bool):
        out.append(str(source))
    elif isinstance(source, dt.date):  # the moment, as the agent is told it
        out.append(source.isoformat())


def restore(data: Any, hints: list[Any], known: Known) -> Any:
    """``data`` as :meth:`Redactor.traced` wrote it, each mark ``hints`` names put back to
    the text it stood for (the others stay). ``data`` itself when there is nothing to
    restore."""
    if not hints or not any(_restorable(h) for h in hints):
        return data
    at = [0]
    return _restore(data, hints, known, at)


def _restorable(hint: Any) -> bool:
    if isinstance(hint, list):
        return len(hint) == 2 and any(_restorable(h) for h in hint[1])
    return isinstance(hint, int) and not isinstance(hint, bool)


def _restore(data: Any, hints: list[Any], known: Known, at: list[int]) -> Any:
    if isinstance(data, str):
        if not MARK.search(data):  # (a text with no mark had no hint)
            return data
        here = hints[at[0]] if at[0] < len(hints) else None
        if isinstance(here, list) and len(here) == 2 and here[0] == "j":
            at[0] += 1
            try:
                parsed = json.loads(data)
            except ValueError:
                return data
            return json.dumps(_restore(parsed, here[1], known, [0]), ensure_ascii=False)
        if isinstance(here, list) and len(here) == 2 and here[0] == "n":
            at[0] += 1
            text = _put_back(data, here[1], known, [0])
            try:
                number = json.loads(text)
            except ValueError:
                return text
            return number if isinstance(number, int | float) \
                and not isinstance(number, bool) else text
        return _put_back(data, hints, known, at)
    if isinstance(data, list | tuple):
        return [_restore(x, hints, known, at) for x in data]
    if isinstance(data, dict):
        return {k: _restore(v, hints, known, at) for k, v in data.items()}
    return data


def _put_back(text: str, hints: list[Any], known: Known, at: list[int]) -> str:
    def sub(m: Any) -> str:
        i = at[0]
        at[0] += 1
        hint = hints[i] if i < len(hints) else None
        texts = known.marks.get(m.group(0), ())
        if isinstance(hint, int) and not isinstance(hint, bool) and 0 <= hint < len(texts):
            return texts[hint]
        return str(m.group(0))
    return str(MARK.sub(sub, text))


def _unescaped(replacement: str) -> str:
    return replacement.replace("\\\\", "\\")


def _texts(data: Any, out: list[str]) -> None:
    """Every text a value holds (an entry as ``key: value``, numbers as digits)."""
    if isinstance(data, str):
        out.append(data)
    elif isinstance(data, dict):
        for k, v in data.items():
            if isinstance(v, str):
                out.append(f"{k}: {v}")
            else:
                out.append(str(k))
                _texts(v, out)
    elif isinstance(data, list | tuple):
        for x in data:
            _texts(x, out)
    elif isinstance(data, int | float) and not isinstance(data, bool):
        out.append(str(data))


def build(env_names: Iterable[str], patterns: Mapping[str, str] | None = None,
          environ: Mapping[str, str] | None = None) -> Redactor:
    """A redactor for these environment variables' values and these named patterns
    (default: DEFAULT_PATTERNS)."""
    env = os.environ if environ is None else environ
    names = frozenset(env_names)
    out: list[tuple[regex.Pattern[str], str]] = []
    values: list[tuple[str, str]] = []
    for name in sorted(names):
        value = env.get(name)
        if not value or not value.strip():
            continue
        values.append((_unescaped(_replacement(name)), value))
        forms = {value, json.dumps(value, ensure_ascii=False)[1:-1],
                 json.dumps(value)[1:-1]}
        alternatives = "|".join(regex.escape(f) for f in sorted(forms, key=len, reverse=True))
        if len(value) < MIN_SECRET_CHARS:  # a short value: only as a word of its own
            alternatives = rf"(?<![\w\-.])(?:{alternatives})(?![\w\-])"
        out.append((regex.compile(alternatives), _replacement(name)))
    probe = True
    for name, source in (DEFAULT_PATTERNS if patterns is None else patterns).items():
        out.append((regex.compile(source), _replacement(name)))
        probe = probe and not _CONTEXTUAL.search(source)
    return Redactor(tuple(out), probe, names, tuple(values))


# What makes a pattern's match depend on what surrounds a text (anchors, lookaround);
# a [^...] class is caught too, which costs only speed.
_CONTEXTUAL = regex.compile(r"\^|\$|\\[AZzG]|\(\?<?[=!]|\(\?[a-zA-Z]*m")


def _replacement(name: str) -> str:
    return f"[REDACTED:{name}]".replace("\\", "\\\\")  # a literal, not a template


NO_REDACTION = Redactor(())


def redactor_for(config: RedactConfig | None, targets: Iterable[Target]) -> Redactor:
    """What a run of a suite redacts: the values of the variables ``redact.env`` names and
    of the targets' key variables, and its patterns (the default ones too, unless
    ``default_patterns: false``). No ``redact:`` at all: the keys and the default ones."""
    keys = {e for e in map(key_env, targets) if e}
    if config is None:
        return build(keys)
    patterns = {**(DEFAULT_PATTERNS if config.default_patterns else {}), **config.patterns}
    return build({*config.env, *keys}, patterns)
