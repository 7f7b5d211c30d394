"""Secrets: nothing an imported scenario holds may carry a credential the log held.

Before anything is written, every text of a :class:`~dsl.importing.conversation.
Conversation` — what the person and the agent said, the system message, each call's
arguments and result, the tools' definitions — goes through the suite's
:class:`~dsl.compiler.redact.Redactor` (its ``redact`` patterns and environment values, and
the usual key patterns: ``[REDACTED:NAME]``). A JSON result stays JSON: when redacting its
text would break it, its values are redacted one by one instead.

Then what still *looks* like a credential — a known key format, ``password: …`` and other
secret keywords, a private key, a JSON Web Token (found by Yelp's ``detect-secrets``
plugins), a secret written as an assignment in plain text (``password=hunter2``,
``api_key: …``), or a long random-looking string (high entropy, as ``detect-secrets``
measures it)
— is not written either: ``[REDACTED:credential]`` stands in its place, and a problem names
where it was (never its value), so the team can add a pattern for it.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from detect_secrets.core.scan import scan_line
from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
from detect_secrets.settings import default_settings

from .conversation import Conversation, LoggedCall, Message, Place, Problem, Step, ToolDef, Turn
from .names import slug

MARK = "[REDACTED:credential]"
MIN_ENTROPY = 4.5  # bits a character: detect-secrets' default limit for base64 strings
# a run of key-like characters, whole (never the middle of a longer run)
_TOKEN = re.compile(r"(?<![A-Za-z0-9+/_=\-])[A-Za-z0-9+/_=\-]{20,128}(?![A-Za-z0-9+/_=\-])")
# plugins whose finds are no credential for us: ad-hoc entropy (every word), addresses
_SKIPPED = frozenset({"Base64 High Entropy String", "Hex High Entropy String",
                      "Public IP (ipv4)"})
_REDACTED = re.compile(r"\[REDACTED:[^\]]*\]")
# a secret written as an assignment in plain text (``password=hunter2``, ``api_key: 9f8e…``,
# ``Authorization: Basic dXNl…``), which detect-secrets' keyword plugin reads only in code
_ASSIGNED = re.compile(
    r"(?i)\b(?:password|passwd|pwd|pass(?:phrase)?|secret|client[_-]?secret|token|"
    r"(?:access|auth|api|refresh|session)[_-]?(?:token|key)|api[_-]?key|apikey|"
    r"private[_-]?key|credentials?|authorization)[\"']?\s*[:=]\s*[\"']?"
    r"(?:(?:basic|bearer|token)\s+)?(?P<value>[^\s\"',;{}\[\]]{6,})")
MAX_LINE = 10_000  # characters of a line the credential finder reads (a line of a log's text)

Redact = Callable[[str], str]


class Cleaner:
    """Applies a redactor and the credential finder to a conversation's every text,
    collecting a problem for each credential that no pattern knew."""

    def __init__(self, redactor: Any, problems: list[Problem]) -> None:
        self.redactor = redactor
        self.problems = problems
        self._said: set[tuple[str, str]] = set()

    def conversation(self, c: Conversation) -> Conversation:
        """The conversation, every text cleaned (inside :func:`scanning`)."""
        return replace(
            c,
            system=self.text(c.system, "in the system message", c.place),
            turns=tuple(self._turn(t) for t in c.turns),
            tools=tuple(self._tool(t, c.place) for t in c.tools),
            history=tuple(self._message(m) for m in c.history),
            name=self._name(c),
        )

    def _name(self, c: Conversation) -> str:
        """The file's name, made again from the person's words once cleaned (it is made from
        them): a secret they held must not name a file."""
        first = c.turns[0].text if c.turns else ""
        if c.name != slug(first):
            return c.name
        return slug(_REDACTED.sub(" ", self.text(first, "in what the person said", c.place)))

    def _turn(self, t: Turn) -> Turn:
        return replace(t, text=self.text(t.text, "in what the person said", t.place),
                       note=self.text(t.note, "in what the person said", t.place),
                       steps=tuple(self._step(s, t.place) for s in t.steps))

    def _step(self, s: Step, place: Place) -> Step:
        return Step(self.text(s.text, "in what the agent said", s.place or place),
                    tuple(self._call(c) for c in s.calls), s.place)

    def _call(self, c: LoggedCall) -> LoggedCall:
        args = c.args
        if args is not None:
            args = self.data(args, f"in the arguments of a call to {c.name}", c.place)
        result = c.result
        if result is not None:
            result = self.text(result, f"in the result of {c.name}",
                               c.result_place or c.place)
        return replace(c, args=args, raw=self.text(c.raw, f"in the arguments of a call to "
                                                           f"{c.name}", c.place),
                       result=result)

    def _tool(self, t: ToolDef, place: Place) -> ToolDef:
        where = f"in the definition of {t.name}"
        at = t.place or place
        schema = t.schema
        if schema is not None:
            schema = self.data(schema, where, at)
        return replace(t, description=self.text(t.description, where, at), schema=schema)

    def _message(self, m: Message) -> Message:
        calls = tuple(replace(c, args=None if c.args is None else
                              self.data(c.args, f"in the arguments of a call to {c.name}",
                                        m.place))
                      for c in m.calls)
        return replace(m, text=self.text(m.text, "in the conversation's history", m.place),
                       calls=calls)

    # ---- one value --------------------------------------------------------------------

    def text(self, text: str, where: str, place: Place) -> str:
        """``text`` redacted, and every credential left in it replaced."""
        if not text:
            return text
        redacted = self.redactor(text)
        if redacted != text and _is_json(text) and not _is_json(redacted):
            data = self.redactor.value(json.loads(text))
            redacted = json.dumps(data, ensure_ascii=False)
        return self._credentials(redacted, where, place)

    def data(self, data: Any, where: str, place: Place) -> Any:
        """A JSON-like value redacted value by value; credentials replaced in its texts
        (each read beside its key, as ``"password": "…"`` is)."""
        data = self.redactor.value(data)
        return self._walk(data, "", where, place)

    def _walk(self, data: Any, key: str, where: str, place: Place) -> Any:
        if isinstance(data, str):
            if not key:
                return self._credentials(data, where, place)
            framed = json.dumps({key: data}, ensure_ascii=False)
            cleaned = self._credentials(framed, where, place)
            if cleaned == framed:
                return data
            try:
                return json.loads(cleaned)[key]
            except (ValueError, KeyError, TypeError):
                return MARK
        if isinstance(data, Mapping):
            return {k: self._walk(v, str(k), where, place) for k, v in data.items()}
        if isinstance(data, list | tuple):
            return [self._walk(v, key, where, place) for v in data]
        return data

    def _credentials(self, text: str, where: str, place: Place) -> str:
        first: dict[str, str] = {}  # each secret once, with the first kind that found it
        for kind, secret in _found(text):
            first.setdefault(secret, kind)
        if not first:
            return text
        kinds = sorted(set(first.values()))
        for secret in sorted(first, key=len, reverse=True):
            text = text.replace(secret, MARK)
        said = (str(place), where)
        if said not in self._said:
            self._said.add(said)
            self.problems.append(Problem(place, f"a value {where} looks like a credential "
                                                f"({', '.join(kinds)}) and matches no "
                                                f"redaction pattern: it was not written "
                                                f"({MARK} stands in its place); if it is one, "
                                                "add a pattern for it to redact.patterns in "
                                                "scenarist.yaml"))
        return text


def _found(text: str) -> Iterator[tuple[str, str]]:
    """(kind, the secret) for each credential in ``text``."""
    plain = _REDACTED.sub(" ", text)
    for line in plain.splitlines() or [plain]:
        if line.strip():
            yield from (found for found in _in_line(line[:MAX_LINE]) if found[1] in text)


@functools.lru_cache(maxsize=4096)
def _in_line(line: str) -> tuple[tuple[str, str], ...]:
    """The credentials of one line (a log repeats its lines: the system message, the
    tools' definitions)."""
    out = [(s.type, s.secret_value) for s in scan_line(line)
           if s.type not in _SKIPPED and s.secret_value and len(s.secret_value) >= 6]
    for m in _ASSIGNED.finditer(line):
        value = m["value"]
        if len(value) >= 12 or re.search(r"[\d\W_]", value):  # not a word: "expired"
            out.append(("a secret written as an assignment", value))
    for m in _TOKEN.finditer(line):
        token = m.group()
        if (re.search(r"[a-z]", token) and re.search(r"[A-Z]", token)
                and re.search(r"\d", token) and Base64HighEntropyString()
                .calculate_shannon_entropy(token) >= MIN_ENTROPY):
            out.append(("a random-looking key", token))
    return tuple(out)


@contextmanager
def scanning() -> Iterator[None]:
    """detect-secrets' plugins, on for the time of an import (its settings are global):
    every :meth:`Cleaner.conversation` runs inside it."""
    with default_settings():
        yield


def _is_json(text: str) -> bool:
    if not text.lstrip().startswith(("{", "[")):
        return False
    try:
        json.loads(text)
    except (ValueError, RecursionError):
        return False
    return True
