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
"wJalr…"``) has its value replaced.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

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


@dataclass(frozen=True, slots=True)
class Redactor:
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
            return self(data)
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
    for name in sorted(names):
        value = env.get(name)
        if not value or not value.strip():
            continue
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
    return Redactor(tuple(out), probe, names)


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
