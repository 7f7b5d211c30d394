"""Redaction: secrets never reach the judge or any file Scenarist writes.

Before a judge prompt is sent and before a results line, a cassette line or a judge-cache
entry is written, two kinds of secrets are replaced by ``[REDACTED:NAME]``:

* the **values** of the environment variables the suite names (every target's
  ``api_key_env`` and the suite's ``redact.env``) — NAME is the variable's name;
* text matching **patterns**: the defaults below for common key formats, plus the suite's
  ``redact.patterns`` — NAME is the pattern's name.

The replacement contains no quote or backslash, so it is safe inside JSON text: lines are
redacted after they are serialized (and the JSON-escaped form of each secret is matched too).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import regex

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

    def __call__(self, text: str) -> str:
        if not text:
            return text
        for pattern, replacement in self.patterns:
            text = pattern.sub(replacement, text)
        return text

    def value(self, data: object) -> object:
        """Redact every string inside a JSON-like value."""
        if isinstance(data, str):
            return self(data)
        if isinstance(data, list):
            return [self.value(x) for x in data]
        if isinstance(data, dict):
            return {k: self.value(v) for k, v in data.items()}
        return data


def build(env_names: Iterable[str], patterns: Mapping[str, str] | None = None,
          environ: Mapping[str, str] | None = None) -> Redactor:
    """A redactor for these environment variables' values and these named patterns
    (default: DEFAULT_PATTERNS)."""
    env = os.environ if environ is None else environ
    out: list[tuple[regex.Pattern[str], str]] = []
    for name in sorted(set(env_names)):
        value = env.get(name)
        if not value or len(value) < MIN_SECRET_CHARS:
            continue
        forms = {value, json.dumps(value, ensure_ascii=False)[1:-1],
                 json.dumps(value)[1:-1]}
        alternatives = "|".join(regex.escape(f) for f in sorted(forms, key=len, reverse=True))
        out.append((regex.compile(alternatives), _replacement(name)))
    for name, source in (DEFAULT_PATTERNS if patterns is None else patterns).items():
        out.append((regex.compile(source), _replacement(name)))
    return Redactor(tuple(out))


def _replacement(name: str) -> str:
    return f"[REDACTED:{name}]".replace("\\", "\\\\")  # a literal, not a template


NO_REDACTION = Redactor(())
