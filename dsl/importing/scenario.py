"""The scenario written for a conversation: YAML for the person who will correct it, with
comments that say what came from where (ruamel.yaml's round trip, so comments are real).

::

    # Imported by `scenarist import` from gateway.jsonl (lines 1–3). ...
    description: Imported from gateway.jsonl (lines 1–3), 2026-10-01 12:12 UTC.
    tags: [imported]
    given:
      at: '2026-10-01T09:12:03-03:00'  # when the person wrote: the line's 'timestamp'
      system: ...
      tools:
        - name: book_appointment
          description: ...
          input_schema: {...}
          confirm: true                # its calls waited for the person's confirmation
          answers:                     # what the real tool returned, call by call
            - when: {date: "2026-10-03"}
              returns: Booked.
    when:
      - say: Quiero un turno el sábado.
      - confirm: book_appointment
    then:
      # As logged: ...
      - calls: {name: book_appointment, args: {date: "2026-10-03"}}
        name: "as logged: called book_appointment with date 2026-10-03"
      # The agent's last answer, as logged: "..."
      # - contains: ["2026-10-03"]

The ``then`` checks say *what happened* (each named ``as logged: …``): a ``calls`` check
for each distinct call with its logged arguments (``times`` when it was made more than
once); the last answer's key facts are a commented ``contains`` suggestion. A conversation
without calls gets ``non_empty``. Every ``calls`` check has the form ``{name, args}`` —
``args: {}`` for a call without arguments, no ``args`` when the logged ones were not a JSON
object — so a program reads them all alike. Nothing here reads the log: :func:`write` takes a
:class:`~dsl.importing.conversation.Conversation` already cleaned of secrets.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.nodes import ScalarNode
from ruamel.yaml.resolver import VersionedResolver
from ruamel.yaml.scalarstring import DoubleQuotedScalarString, LiteralScalarString, ScalarString

from ..toolcalls import args_match
from .conversation import Conversation, LoggedCall, Message, Moment
from .tools import Answer, FakeTool, fake_tools, returned

TAG = "imported"
MAX_SHOWN = 200  # characters of an answer shown in a comment
MAX_VALUE = 40  # characters of an argument's value in a check's name
_TEMPLATE = re.compile(r"\{([{%#])")  # what Jinja would read as a template's start
_FACT = re.compile(  # a date, a time, an id, an amount, a phone number, a number
    r"\b\d{4}-\d{2}-\d{2}\b|\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}/\d{1,2}(?:/\d{2,4})?\b"
    r"|\b[A-Z]{1,6}-?\d{2,}\b|[$€£]\s?\d[\d.,]*\d|\+?\d[\d \-]{5,}\d|\b\d[\d.,]*\d\b")
HEADER = (
    "Imported by `scenarist import` from {source} ({key}).\n"
    "Everything below is as the log shows it: the person's words, what each tool returned,\n"
    "the calls the agent made. The checks named \"as logged\" say what happened: keep those\n"
    "that were right, and change the others to say what should have happened.")


@dataclass(frozen=True, slots=True)
class Draft:
    """A scenario file ready to be written: its name (without ``.yaml``), its text, and
    what it holds (turns, tool calls)."""

    name: str
    text: str
    turns: int
    calls: int


def write(c: Conversation, *, world: bool = False, max_steps: int = 6,
          now: dt.datetime | None = None) -> Draft:
    """The scenario of one conversation. ``max_steps``: the suite's (a turn of more model
    calls gets its own ``max_steps``); ``now``: the time written when the log has none."""
    tools = fake_tools(c, world=world)
    doc = CommentedMap()
    doc.yaml_set_start_comment(HEADER.format(source=c.source, key=c.key))
    doc["description"] = _description(c)
    doc["tags"] = _flow(CommentedSeq([TAG]))
    given = CommentedMap()
    at, at_note = _moment(c.moment, now)
    given["at"] = at
    given.yaml_add_eol_comment(at_note, "at")
    if c.system:
        given["system"] = _text(c.system)
    if c.history:
        given["history"] = _history(c.history)
        given.yaml_set_comment_before_after_key(
            "history", before="what came before the person's first message in the log "
                              "(no check counts these calls)", indent=2)
    tables = [t.table for t in tools if t.table is not None]
    if tables:
        given["world"] = CommentedMap((t.name, [dict(r) for r in t.rows]) for t in tables)
        given.yaml_set_comment_before_after_key(
            "world", before="--world: the rows the tools below returned (each has an id)",
            indent=2)
    if tools:
        given["tools"] = _tools(tools)
    doc["given"] = given
    doc["when"] = _when(c)
    if c.max_steps > max_steps:
        doc["max_steps"] = c.max_steps
        doc.yaml_add_eol_comment(f"a turn of the log made {c.max_steps} model calls",
                                 "max_steps")
    then, header = _then(c, tools)
    doc["then"] = then
    then.yaml_set_comment_before_after_key(0, before=header, indent=2)
    text = _dump(doc) + _suggestion(c.answer)
    return Draft(c.name, text, len(c.turns), len(c.calls))


def _description(c: Conversation) -> str:
    when = ""
    if c.moment is not None:
        when = ", " + c.moment.at.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = f"Imported from {c.source} ({c.key}){when}."
    if c.failed:
        text += f" It failed there: {c.failed}"
    return text


def _moment(m: Moment | None, now: dt.datetime | None) -> tuple[str, str]:
    if m is None:
        at = (now or dt.datetime.now(dt.UTC)).replace(microsecond=0)
        return _iso(at), ("the log holds no time: write when the person spoke, with its "
                          "UTC offset (this is when it was imported)")
    if m.offset:
        return _iso(m.at), f"from {m.said}"
    return _iso(m.at), (f"UTC, from {m.said}: write the person's own UTC offset (e.g. "
                        "-03:00) if the time of day matters")


def _iso(at: dt.datetime) -> str:
    text = at.replace(microsecond=0).isoformat()
    return text[:-6] + "Z" if text.endswith("+00:00") else text


# ---- given.tools --------------------------------------------------------------------------


def _tools(tools: Sequence[FakeTool]) -> Any:
    out = CommentedSeq()
    for t in tools:
        m = CommentedMap()
        m["name"] = t.name
        if t.description:
            m["description"] = _text(t.description)
        if t.schema is not None:
            m["input_schema"] = _data(t.schema)
            if t.inferred:
                m.yaml_set_comment_before_after_key("input_schema", before=t.schema_note,
                                                    indent=6)
        if t.action is not None and t.action != "read":
            m["action"] = t.action
        if t.confirm:
            m["confirm"] = True
            m.yaml_add_eol_comment("its calls waited for the person's confirmation",
                                   "confirm")
        if t.table is not None:
            m["table"] = t.table.name
            if t.table.where:
                m["where"] = _flow(CommentedMap(
                    (column, "{{ args." + arg + " }}") for column, arg in t.table.where.items()))
            if t.table.one:
                m["one"] = True
            m.yaml_set_comment_before_after_key(
                "table", before="--world: it reads the table, as it answered every call in "
                                "the log", indent=6)
        elif t.error is not None:
            m["error"] = t.error
        elif t.answers:
            m["answers"] = _answers(t.answers)
            m.yaml_set_comment_before_after_key(
                "answers", before="what the real tool returned, call by call", indent=6)
        out.append(m)
    return out


def _answers(answers: Sequence[Answer]) -> Any:
    out = CommentedSeq()
    for i, a in enumerate(answers):
        m = CommentedMap()
        m["when"] = _small(a.when)
        if a.place is not None and a.place.within:
            m.yaml_add_eol_comment(a.place.within, "when")
        if a.error is not None:
            m["error"] = literal(a.error)
        else:
            m["returns"] = _data(literal_data(a.returns))
        out.append(m)
        if a.notes:
            out.yaml_set_comment_before_after_key(i, before="\n".join(a.notes), indent=8)
    return out


def literal(text: str) -> str:
    """Text a fake tool returns as it is: what Jinja would read as a template (``{{``,
    ``{%``, ``{#``) written so it renders as itself."""
    if "{{" not in text and "{%" not in text:
        return text
    return _TEMPLATE.sub(lambda m: "{{ '{" + m.group(1) + "' }}", text)


def literal_data(value: Any) -> Any:
    if isinstance(value, str):
        return literal(value)
    if isinstance(value, dict):
        return {k: literal_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [literal_data(v) for v in value]
    return value


# ---- given.history, when --------------------------------------------------------------------


def _history(messages: Sequence[Message]) -> Any:
    results = {m.call_id: m.text for m in messages if m.role == "tool" and m.call_id}
    out = CommentedSeq()
    for m in messages:
        if m.role == "user":
            out.append(CommentedMap(user=_text(m.text)))
        elif m.role == "assistant" and not m.calls:
            out.append(CommentedMap(assistant=_text(m.text)))
        elif m.role == "assistant":
            said = CommentedMap()
            if m.text:
                said["text"] = _text(m.text)
            said["calls"] = [_history_call(c.name, c.args, results.get(c.id, ""))
                             for c in m.calls]
            out.append(CommentedMap(assistant=said))
    return out


def _history_call(name: str, args: Mapping[str, Any] | None, result: str) -> Any:
    m = CommentedMap()
    m["name"] = name
    m["args"] = _small(dict(args or {}))
    m["returns"] = _data(_plain_returns(result))
    return m


def _plain_returns(text: str) -> Any:
    return returned(text)


def _when(c: Conversation) -> Any:
    if len(c.turns) == 1 and c.turns[0].kind == "say":
        return _text(_said(c.turns[0].text))
    out = CommentedSeq()
    for i, t in enumerate(c.turns):
        out.append(CommentedMap([(t.kind, _text(_said(t.text)) if t.kind == "say"
                                  else t.text)]))
        if t.note:
            shown = _one_line(t.note)
            out.yaml_set_comment_before_after_key(
                i, before=f"the person wrote: {shown}", indent=2)
        elif t.kind != "say":
            waiting = "every call that waited" if t.text == "all" else \
                f"the call to {t.text} that waited"
            out.yaml_set_comment_before_after_key(
                i, before=f"the person {t.kind}ed {waiting}", indent=2)
    return out


EMPTY = "[an empty message]"  # what the person sent had no text: a scenario's cannot be empty


def _said(text: str) -> str:
    return text if text.strip() else EMPTY


# ---- then ---------------------------------------------------------------------------------


def _then(c: Conversation, tools: Sequence[FakeTool]) -> tuple[Any, str]:


    by_name = {t.name: t for t in tools}
    made = [call for call in c.calls if call.name in by_name
            and not (call.id and call.id in c.not_run)]
    groups: dict[tuple[str, str], tuple[LoggedCall, dict[str, Any] | None]] = {}
    for call in made:
        fitted = by_name[call.name].fitted(call)
        key = (call.name, "" if not fitted else json.dumps(fitted, sort_keys=True))
        groups.setdefault(key, (call, fitted))
    out = CommentedSeq()
    names: set[str] = set()
    notes: dict[int, str] = {}
    for call, fitted in groups.values():
        count = sum(1 for other in made if other.name == call.name
                    and (not fitted or (other.args is not None
                                        and args_match(fitted, other.args))))
        name = _check_name(call.name, fitted, count)
        n = 2
        unique = name
        while unique in names:
            unique = f"{name} ({n})"
            n += 1
        names.add(unique)
        item = CommentedMap()
        param = CommentedMap()
        param["name"] = call.name
        if fitted is not None:  # the logged arguments, even none ({}): as logged
            param["args"] = _small(fitted)
        if count > 1:
            param["times"] = count
        item["calls"] = _small(param) if _short(param) else param
        item["name"] = unique
        if call.place.within:
            item.yaml_add_eol_comment(call.place.within, "name")
        tool = by_name[call.name]
        left_out = tool.left_out.get(id(call))
        if call.args is None:
            notes[len(out)] = (f"its arguments were not a JSON object: "
                               f"{_one_line(call.raw, 80)}")
        elif left_out:
            notes[len(out)] = ("it also sent " + ", ".join(left_out) + ", which the tool's "
                               "input_schema does not allow: left out")
        out.append(item)
    for i, note in notes.items():
        if i:
            out.yaml_set_comment_before_after_key(i, before=note, indent=2)
    header = ("As logged: the calls the agent made. Keep the checks that were right; change "
              "those that\nwere wrong (not_calls, other arguments) to say what should have "
              "happened.")
    if 0 in notes:
        header += "\n" + notes[0]
    if not out:
        if c.answer.strip():
            out.append(CommentedMap([("non_empty", True),
                                     ("name", "as logged: the agent answered")]))
        else:
            out.append(CommentedMap([("matches", r"^\s*$"),
                                     ("name", "as logged: the agent's answer was empty")]))
        header = ("As logged: the agent called no tool. Say what it should have done (calls, "
                  "not_calls,\ncontains).")
    return out, header


def _check_name(tool: str, args: Mapping[str, Any] | None, count: int) -> str:
    """``as logged: called book_appointment with date 2026-10-03 and time 15:00``."""
    text = f"as logged: called {tool}"
    if args:
        shown = [f"{k} {_value_words(v)}" for k, v in args.items()]
        text += " with " + (", ".join(shown[:-1]) + " and " + shown[-1] if len(shown) > 1
                            else shown[0])
    if count > 1:
        text += f", {count} times"
    return text


def _value_words(v: Any) -> str:
    text = v if isinstance(v, str) else json.dumps(v, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= MAX_VALUE else text[:MAX_VALUE - 1] + "…"


def _suggestion(answer: str) -> str:
    """The commented ``contains`` suggestion of the last answer's key facts."""
    if not answer.strip():
        return ""
    facts = list(dict.fromkeys(m.group().strip() for m in _FACT.finditer(answer)))[:4]
    lines = [f"The agent's last answer, as logged: {_one_line(answer)}"]
    if facts:
        shown = json.dumps(facts[0] if len(facts) == 1 else facts, ensure_ascii=False)
        lines.append("If it was right, check its key facts (remove the # below):")
        lines.append(f"- contains: {shown}")
    else:
        lines.append("If it was right, check a fact it must give (remove the # below):")
        lines.append('- contains: "..."')
    return "".join(f"  # {line}\n" for line in lines)


def _one_line(text: str, limit: int = MAX_SHOWN) -> str:
    flat = " ".join(text.split())
    if len(flat) > limit:
        flat = flat[:limit - 1] + "…"
    return json.dumps(flat, ensure_ascii=False)


# ---- YAML -----------------------------------------------------------------------------------


def _text(text: str) -> Any:
    """Text as YAML writes it best: a block (``|``) for several lines when that keeps it
    exactly, else as it is (quoted when YAML needs it)."""
    if "\n" in text.rstrip("\n") and _block_safe(text):
        return LiteralScalarString(text)
    return text


def _block_safe(text: str) -> bool:
    return (not any(line != line.rstrip() for line in text.split("\n"))
            and not text.startswith((" ", "\t", "\n"))
            and all(ch == "\n" or ch >= " " for ch in text)
            and "\t" not in text and "\r" not in text and "\u2028" not in text
            and "\u2029" not in text and "\x85" not in text and "\ufeff" not in text)


def _short(m: Mapping[str, Any]) -> bool:
    return len(json.dumps(m, ensure_ascii=False)) <= 70


def _small(m: Mapping[str, Any]) -> Any:
    """A mapping written on one line (``{day: tuesday}``) when it is short."""
    out = CommentedMap(m)
    if _short(m):
        out.fa.set_flow_style()
    return out


def _flow(value: Any) -> Any:
    value.fa.set_flow_style()
    return value


def _data(value: Any) -> Any:
    """Data a tool returns: short mappings and lists on one line, long ones as blocks."""
    if isinstance(value, dict):
        out: Any = CommentedMap((k, _data(v)) for k, v in value.items())
    elif isinstance(value, list):
        out = CommentedSeq(_data(v) for v in value)
    else:
        return _text(value) if isinstance(value, str) else value
    if len(json.dumps(value, ensure_ascii=False)) <= 60:
        out.fa.set_flow_style()
    return out


def _dump(doc: Any) -> str:
    """The YAML text, checked to read back as exactly the data it was made of (else made
    again with every text quoted as it is)."""
    yaml = YAML()
    yaml.width = 100
    yaml.indent(mapping=2, sequence=4, offset=2)
    doc = _quoted(doc)
    out = io.StringIO()
    yaml.dump(doc, out)
    text = out.getvalue()
    if _plain(YAML(typ="safe").load(text)) == _plain(doc):
        return text
    out = io.StringIO()
    yaml.dump(_unblocked(doc), out)
    text = out.getvalue()
    if _plain(YAML(typ="safe").load(text)) != _plain(doc):
        raise NotExact("its YAML would not read back as the values the log holds")
    return text


class NotExact(ValueError):
    """A scenario that cannot be written so that it reads back as what the log holds."""


def _quoted(value: Any) -> Any:
    """Every text that an older YAML reader (YAML 1.1: PyYAML, many editors) would read as
    something else — ``15:00`` (a number there), ``yes``, ``2026-10-03``, ``007`` — put
    in quotes, keys included, so the file means the same to every reader."""
    if isinstance(value, dict | list) and not isinstance(value, CommentedMap | CommentedSeq):
        value = _data(value)  # data a mapping holds: written as data is, then quoted
    if isinstance(value, CommentedMap):
        for i, k in enumerate(list(value)):
            v = _quoted(value[k])
            if isinstance(k, str) and not isinstance(k, ScalarString) and _not_text(k):
                del value[k]
                value.insert(i, DoubleQuotedScalarString(k), v)
            else:
                value[k] = v
        return value
    if isinstance(value, CommentedSeq):
        for i, v in enumerate(value):
            value[i] = _quoted(v)
        return value
    if isinstance(value, str) and not isinstance(value, ScalarString) and _not_text(value):
        return DoubleQuotedScalarString(value)
    return value


_INDICATORS = re.compile(r"[:#,\[\]{}&*!|>'\"%@`]|\A[-?\s]|\s\Z|\A\Z")


def _not_text(text: str) -> bool:
    """Text some YAML reader would not read back as this very text when written plain:
    another type (in YAML 1.1 or 1.2), or a character that means something in a mapping
    written on one line (``{monday: 09:00-18:00}`` is a mistake to libyaml)."""
    if _INDICATORS.search(text):
        return True
    return any(r.resolve(ScalarNode, text, (True, False)) != "tag:yaml.org,2002:str"
               for r in _resolvers())


@functools.cache
def _resolvers() -> tuple[Any, ...]:
    """How YAML 1.1 and YAML 1.2 readers tell a plain text's type."""
    return VersionedResolver(version=(1, 1)), VersionedResolver(version=(1, 2))


def _plain(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, str):
        return str(value)
    return value


def _unblocked(value: Any) -> Any:
    """The same document with block texts written as plain (quoted) strings."""
    if isinstance(value, CommentedMap):
        for k in list(value):
            value[k] = _unblocked(value[k])
        return value
    if isinstance(value, CommentedSeq):
        for i, v in enumerate(value):
            value[i] = _unblocked(v)
        return value
    if isinstance(value, str):
        return str(value)
    return value
