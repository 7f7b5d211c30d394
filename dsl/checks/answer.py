"""Checks on the agent's final answer text."""

from __future__ import annotations

import json
import re
import unicodedata
from typing import Any

import msgspec

from ..model import AttemptData, Outcome
from ..source.saferegex import PatternError, RegexTimeout, SafePattern, compile_pattern
from .registry import CheckContext, check, errored, failed, passed, schema_doc, show


def _norm(text: str, ignore_case: bool) -> str:
    text = unicodedata.normalize("NFC", text)
    return text.casefold() if ignore_case else text


# ---------------------------------------------------------------- contains / not_contains

ANYWHERE: dict[str, Any] = {
    "type": "boolean",
    **schema_doc("Look in every message the agent wrote in the conversation (each turn's "
                 "answer, the text beside its tool calls), not only the answer (default "
                 "false).", True),
}
IGNORE_COMMAS: dict[str, Any] = {
    "type": "boolean",
    **schema_doc("Ignore commas on both sides, as thousands separators: \"$1,093.34\" "
                 "contains \"1093.34\" (default false).", True),
}


def texts_schema(what: str, commas: bool) -> dict[str, Any]:
    """``contains`` (``commas``: it takes ``ignore_commas``) and ``not_contains``."""
    options: dict[str, Any] = {
        "text": {
            "type": ["string", "array"],
            "minLength": 1,
            "items": {"type": "string", "minLength": 1},
            "minItems": 1,
            **schema_doc("The text (or list of texts) to look for.", "18:00"),
        },
        "ignore_case": {
            "type": "boolean",
            **schema_doc("Compare without regard to upper and lower case (default false).",
                         True),
        },
        "anywhere": ANYWHERE,
    }
    if commas:
        options["ignore_commas"] = IGNORE_COMMAS
    example: dict[str, Any] = {"text": "lunes", "ignore_case": True}
    return {
        "type": ["string", "array", "object"],
        **schema_doc(
            f"Text the answer {what}: one text, a list (all of them), or `{{text: ..., "
            f"ignore_case: true, anywhere: true{', ignore_commas: true' if commas else ''}}}`.",
            "18:00",
            ["18:00", "Monday"],
            example,
        ),
        "minLength": 1,
        "items": {"type": "string", "minLength": 1},
        "minItems": 1,
        "if": {"type": "object"},
        "then": {
            "required": ["text"],
            "additionalProperties": False,
            "properties": options,
        },
    }


TEXTS_SCHEMA = texts_schema("must contain", True)


class Texts(msgspec.Struct, frozen=True):
    texts: tuple[str, ...]
    ignore_case: bool
    anywhere: bool = False
    ignore_commas: bool = False


def prepare_texts(param: Any, ctx: CheckContext) -> Texts:
    if isinstance(param, dict):
        text = param["text"]
        ignore = bool(param.get("ignore_case", False))
        anywhere = param.get("anywhere") is True
        commas = param.get("ignore_commas") is True
    else:
        text, ignore, anywhere, commas = param, False, False, False
    texts = (text,) if isinstance(text, str) else tuple(text)
    return Texts(texts, ignore, anywhere, commas)


def _case(p: Texts) -> str:
    ways = [w for w, on in (("ignoring case", p.ignore_case),
                            ("ignoring commas", p.ignore_commas)) if on]
    return f" ({' and '.join(ways)})" if ways else ""


def _fold(text: str, p: Texts) -> str:
    text = _norm(text, p.ignore_case)
    return text.replace(",", "") if p.ignore_commas else text


def agent_messages(a: AttemptData) -> list[str]:
    """Every message the agent wrote in the conversation, in order: the text of each of
    its messages (beside tool calls too), each turn's answer and the last answer — not the
    system prompt, not given.history, and each text once."""
    msgs = list(a.messages)
    start = 0
    while start < len(msgs) and msgs[start].get("role") == "system":
        start += 1
    out: list[str] = []
    for m in msgs[start + a.history_messages:]:
        if m.get("role") != "assistant":
            continue
        content = m.get("content")
        if isinstance(content, list):
            content = "".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
        if isinstance(content, str):
            out.append(content)
    out += [t.answer for t in a.turns]
    out.append(a.answer)
    return [t for t in dict.fromkeys(out) if t.strip()]


def _where(p: Texts) -> str:
    return "a message of the agent" if p.anywhere else "the answer"


@check(
    "contains",
    doc="The answer contains the text (every text, when given a list); with `anywhere`, "
    "some message of the agent does.",
    schema=TEXTS_SCHEMA,
    examples=(
        'contains: "18:00"',
        "contains: [Dr. Pérez, Tuesday]",
        "contains: {text: lunes, ignore_case: true}",
        "contains: {text: '1093.34', anywhere: true, ignore_commas: true}",
    ),
    prepare=prepare_texts,
    group="answer",
    details="With `anywhere: true` each text must be in some message the agent wrote in the "
    "conversation (any turn's answer, or the text beside its tool calls), not necessarily "
    "the last answer; with `ignore_commas: true` commas are ignored on both sides, so "
    "\"$1,093.34\" contains \"1093.34\".",
)
def contains(p: Texts, a: AttemptData) -> Outcome:
    said = agent_messages(a) if p.anywhere else [a.answer]
    folded = [_fold(t, p) for t in said]
    missing = [t for t in p.texts if not any(_fold(t, p) in m for m in folded)]
    if not missing:
        found = ", ".join(json.dumps(t, ensure_ascii=False) for t in p.texts)
        return passed(f"{_where(p)} contains {found}{_case(p)}")
    what = ", ".join(json.dumps(t, ensure_ascii=False) for t in missing)
    if p.anywhere:
        n = len(said)
        seen = f"{n} message{'s' if n != 1 else ''}"
        last = f"; the last was {show(said[-1])}" if said else ""
        return failed(f"expected a message of the agent to contain {what}{_case(p)}; none of "
                      f"its {seen} did{last}", 1 - len(missing) / len(p.texts))
    return failed(
        f"expected the answer to contain {what}{_case(p)}; the answer was {show(a.answer)}",
        1 - len(missing) / len(p.texts),
    )


@check(
    "not_contains",
    doc="The answer does not contain the text (none of the texts, when given a list); with "
    "`anywhere`, no message of the agent does.",
    schema={**texts_schema("must not contain", False),
            **schema_doc("Text the answer must not contain.", "sorry", ["error"])},
    examples=('not_contains: "I cannot"', "not_contains: {text: error, ignore_case: true}",
              "not_contains: {text: password, anywhere: true}"),
    prepare=prepare_texts,
    group="answer",
)
def not_contains(p: Texts, a: AttemptData) -> Outcome:
    said = agent_messages(a) if p.anywhere else [a.answer]
    for k, message in enumerate(said, 1):
        folded = _fold(message, p)
        for t in p.texts:
            i = folded.find(_fold(t, p))
            if i < 0:
                continue
            around = message[max(0, i - 40): i + len(t) + 40]
            which = f"message {k} of the agent contains it" if p.anywhere else "found it"
            return failed(
                f"expected {'no message of the agent' if p.anywhere else 'the answer not'} "
                f"to contain {json.dumps(t, ensure_ascii=False)}{_case(p)}; {which} at "
                f"character {i + 1}: {show(around)}")
    what = ", ".join(json.dumps(t, ensure_ascii=False) for t in p.texts)
    if p.anywhere:
        return passed(f"no message of the agent contains {what}{_case(p)}")
    return passed(f"the answer does not contain {what}{_case(p)}")


# ---------------------------------------------------------------- equals


class Equals(msgspec.Struct, frozen=True):
    text: str
    ignore_case: bool
    trim: bool


def prepare_equals(param: Any, ctx: CheckContext) -> Equals:
    if isinstance(param, dict):
        return Equals(
            str(param["text"]),
            bool(param.get("ignore_case", False)),
            bool(param.get("trim", True)),
        )
    return Equals(str(param), False, True)


@check(
    "equals",
    doc="The whole answer is exactly this text (spaces around it ignored by default).",
    schema={
        "type": ["string", "object"],
        **schema_doc(
            "The exact answer, or `{text, ignore_case, trim}`.",
            "Yes",
            {"text": "yes", "ignore_case": True},
        ),
        "if": {"type": "object"},
        "then": {
            "required": ["text"],
            "additionalProperties": False,
            "properties": {
                "text": {"type": "string", **schema_doc("The exact answer expected.", "Yes")},
                "ignore_case": {
                    "type": "boolean",
                    **schema_doc("Compare without regard to case (default false).", True),
                },
                "trim": {
                    "type": "boolean",
                    **schema_doc(
                        "Ignore spaces and line breaks around the answer (default true).",
                        False,
                    ),
                },
            },
        },
    },
    examples=('equals: "OK"', "equals: {text: yes, ignore_case: true}"),
    prepare=prepare_equals,
    group="answer",
)
def equals(p: Equals, a: AttemptData) -> Outcome:
    got = a.answer.strip() if p.trim else a.answer
    want = p.text.strip() if p.trim else p.text
    if _norm(got, p.ignore_case) == _norm(want, p.ignore_case):
        return passed(f"the answer is exactly {show(want)}")
    # spaces matter here: quote both exactly (shortened), not whitespace-collapsed
    def exact(t: str) -> str:
        return json.dumps(t if len(t) <= 160 else t[:159] + "…", ensure_ascii=False)

    return failed(f"expected the answer to be exactly {exact(want)}; it was {exact(got)}")


# ---------------------------------------------------------------- matches


class Pattern(msgspec.Struct, frozen=True):
    pattern: SafePattern
    anywhere: bool = False


def prepare_matches(param: Any, ctx: CheckContext) -> Pattern | None:
    anywhere = isinstance(param, dict) and param.get("anywhere") is True
    if isinstance(param, dict):
        source, ignore = param["pattern"], bool(param.get("ignore_case", False))
        where: tuple[str, ...] = ("pattern",)
    else:
        source, ignore, where = param, False, ()
    compiled = compile_pattern(source, ignore_case=ignore)
    if isinstance(compiled, PatternError):
        at = ctx.doc.span_in_string((*ctx.path, *where), compiled.offset)
        ctx.error(
            "E204",
            f"{compiled.message} in the pattern '{source}'",
            "escape special characters with a backslash, e.g. \\( or \\.",
            at=at,
        )
        return None
    return Pattern(compiled, anywhere)


@check(
    "matches",
    doc="The answer matches the regular expression (found anywhere in it, as re.search).",
    schema={
        "type": ["string", "object"],
        **schema_doc(
            "A regular expression, found anywhere in the answer; anchor with `^...$` to "
            "match the whole answer. Or `{pattern, ignore_case}`.",
            "18[:.]00",
            {"pattern": "^(sí|si)\\b", "ignore_case": True},
        ),
        "minLength": 1,
        "if": {"type": "object"},
        "then": {
            "required": ["pattern"],
            "additionalProperties": False,
            "properties": {
                "pattern": {
                    "type": "string",
                    "minLength": 1,
                    **schema_doc("The regular expression.", "\\b\\d{1,2}:\\d{2}\\b"),
                },
                "ignore_case": {
                    "type": "boolean",
                    **schema_doc("Match without regard to case (default false).", True),
                },
                "anywhere": ANYWHERE,
            },
        },
    },
    examples=('matches: "18[:.]00"', 'matches: {pattern: "^(sí|si)\\\\b", ignore_case: true}',
              'matches: {pattern: "#W[0-9]{7}", anywhere: true}'),
    prepare=prepare_matches,
    group="answer",
    details="Matching is bounded in time: a pattern that backtracks for more than a "
    "quarter of a second on one answer makes the check *error* instead of hanging the run.",
)
def matches(p: Pattern, a: AttemptData) -> Outcome:
    pattern = p.pattern
    said = agent_messages(a) if p.anywhere else [a.answer]
    for k, text in enumerate(said, 1):
        try:
            m = pattern.search(text)
        except RegexTimeout as exc:
            return errored(str(exc))
        if m:
            where = f"message {k} of the agent" if p.anywhere else "the answer"
            return passed(f"{where} matches '{pattern.source}' at {show(m.group(0), 60)}")
    if p.anywhere:
        n = len(said)
        last = f"; the last was {show(said[-1])}" if said else ""
        return failed(f"expected a message of the agent to match '{pattern.source}'; none of "
                      f"its {n} message{'s' if n != 1 else ''} did{last}")
    return failed(f"expected the answer to match '{pattern.source}'; the answer was "
                  f"{show(a.answer)}")


# ---------------------------------------------------------------- non_empty


def prepare_true(param: Any, ctx: CheckContext) -> bool:
    return True


TRUE_SCHEMA: dict[str, Any] = {
    "const": True,
    **schema_doc("Write `true` to use this check (remove the check to turn it off).", True),
}


@check(
    "non_empty",
    doc="The answer has some text (not only spaces).",
    schema=TRUE_SCHEMA,
    examples=("non_empty: true",),
    prepare=prepare_true,
    group="answer",
)
def non_empty(p: bool, a: AttemptData) -> Outcome:
    if a.answer.strip():
        return passed(f"the answer has {len(a.answer.strip()):,} characters")
    pending = " (the agent stopped to ask for a confirmation)" if a.pending else ""
    return failed(f"expected an answer with text; the answer was empty{pending}")


# ---------------------------------------------------------------- no_secrets

# What redaction leaves where a configured secret was (dsl/compiler/redact.py)
REDACTION_MARK = re.compile(r"\[REDACTED:([^\]\s]{1,200})\]")


def _said(a: AttemptData) -> list[tuple[str, str]]:
    """Where the agent said something, and what: every answer it wrote (each turn's, each
    text beside its tool calls) and each tool call's arguments."""
    out = [("the answer", a.answer)]
    out += [(f"the answer of turn {i}", t.answer) for i, t in enumerate(a.turns, 1)]
    out += [("the agent's text beside its tool calls", str(m.get("content")))
            for m in a.messages if m.get("role") == "assistant" and m.get("content")
            and isinstance(m.get("content"), str)]
    for c in a.calls:
        args = c.raw_args if c.args is None else json.dumps(c.args, ensure_ascii=False)
        out.append((f"the arguments of the call to {c.name}", args))
    return out


@check(
    "no_secrets",
    doc="No configured secret reached the answer or a tool call's arguments.",
    schema=TRUE_SCHEMA,
    examples=("no_secrets: true",),
    prepare=prepare_true,
    group="answer",
    details="The secrets are those redaction replaces (docs/judge.md#secrets): the values of "
    "every target's `api_key_env` and of `redact.env`, and text matching the redaction "
    "patterns. Checks see the attempt's true values — live, on replay and on recheck alike "
    "(what results.jsonl and the cassette keep is redacted, with which of the scenario's own "
    "secrets each `[REDACTED:NAME]` mark stands for, so they put them back) — and this "
    "check looks for a secret in what the agent wrote (each answer, the text beside its tool "
    "calls, each call's arguments), and for a mark left where a secret the scenario does "
    "not hold stood. A tool's answer that holds a secret is not the agent's leak.",
)
def no_secrets(p: bool, a: AttemptData) -> Outcome:
    for where, text in _said(a):
        seen = a.secrets(text) if a.secrets is not None else text
        m = REDACTION_MARK.search(seen)
        if m is not None:
            return failed(f"a configured secret ({m.group(1)}) reached {where}: redaction "
                          f"replaced it with {m.group(0)}: {show(seen)}")
    return passed("no configured secret reached the answer or a tool call's arguments")


# ---------------------------------------------------------------- json


class JsonParams(msgspec.Struct, frozen=True):
    fields: tuple[str, ...]
    values: dict[str, Any]


def prepare_json(param: Any, ctx: CheckContext) -> JsonParams:
    if param is True:
        return JsonParams((), {})
    return JsonParams(tuple(param.get("fields", ())), dict(param.get("values", {})))


# A fenced block: ``` and an optional language name (json), up to the closing ```.
_FENCE = re.compile(r"```[A-Za-z0-9_+-]*(.*?)```", re.S)
MAX_FENCES = 20  # fenced blocks tried in one answer


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except RecursionError:  # a model's 100,000 nested brackets
        raise ValueError("it is nested too deeply to read") from None


def parse_json_answer(text: str) -> Any:
    """The answer as JSON: the whole answer, or the first fenced block (```json ... ```)
    that holds a JSON object, with prose before or after it; raises ValueError."""
    t = text.strip()
    if t.startswith("```"):
        first_nl = t.find("\n")
        end = t.rfind("```")
        if first_nl > 0 and end > first_nl:
            t = t[first_nl + 1 : end].strip()
    try:
        return _loads(t)
    except ValueError as exc:
        problem = exc
    found: list[Any] = []
    for i, m in enumerate(_FENCE.finditer(text)):
        if i == MAX_FENCES:
            break
        try:
            data = _loads(m.group(1).strip())
        except ValueError as exc:
            if not found and i == 0:
                problem = exc
            continue
        if isinstance(data, dict):
            return data
        found.append(data)
    if found:
        return found[0]
    raise problem


@check(
    "json",
    doc="The answer is a JSON object, optionally with the given fields and values.",
    schema={
        "type": ["boolean", "object"],
        **schema_doc(
            "`true`, or `{fields: [...], values: {...}}`: the fields must be present, the "
            "values equal.",
            True,
            {"fields": ["date", "time"], "values": {"status": "booked"}},
        ),
        "if": {"type": "boolean"},
        "then": {"const": True},
        "else": {
            "additionalProperties": False,
            "minProperties": 1,
            "properties": {
                "fields": {
                    "type": "array",
                    "items": {"type": "string"},
                    **schema_doc("Names of fields the object must have.", ["date", "time"]),
                },
                "values": {
                    "type": "object",
                    **schema_doc("Fields that must have exactly these values.", {"status": "ok"}),
                },
            },
        },
    },
    examples=("json: true", "json: {fields: [date, time], values: {status: booked}}"),
    prepare=prepare_json,
    group="answer",
    details="A ```json fence around the object is accepted, and so is prose before or "
    "after a fenced block (\"Here it is:\\n```json {...}```\"): the first fenced block "
    "that holds a JSON object is checked. An object in prose without a fence is not JSON.",
)
def json_check(p: JsonParams, a: AttemptData) -> Outcome:
    try:
        data = parse_json_answer(a.answer)
    except ValueError as exc:
        return failed(f"expected the answer to be a JSON object; it is not JSON ({exc}): "
                      f"{show(a.answer)}")
    if not isinstance(data, dict):
        return failed(f"expected the answer to be a JSON object; it is a JSON "
                      f"{type(data).__name__}: {show(a.answer)}")
    missing = [f for f in p.fields if f not in data]
    if missing:
        return failed(f"the JSON answer has no field {', '.join(repr(m) for m in missing)}; "
                      f"it has {', '.join(repr(k) for k in data) or 'no fields'}")
    for k, v in p.values.items():
        if k not in data:
            return failed(f"the JSON answer has no field '{k}' (expected {json.dumps(v)})")
        if data[k] != v:
            return failed(f"the JSON answer has {k} = {json.dumps(data[k], ensure_ascii=False)}"
                          f"; expected {json.dumps(v, ensure_ascii=False)}")
    return passed("the answer is a JSON object" + (" with the expected fields" if
                                                    p.fields or p.values else ""))
