"""The ``otel`` format: OpenTelemetry traces exported as OTLP/JSON — the file an OTLP file
exporter or a collector's file exporter writes (one ``{"resourceSpans": [...]}`` a line), or
one such document — read with the GenAI semantic conventions.

What is read (``resourceSpans[].scopeSpans[].spans[]``; attribute values as OTLP
``AnyValue``: ``stringValue``, ``intValue``, ``doubleValue``, ``boolValue``,
``arrayValue``, ``kvlistValue``; a map or a list may also be JSON text):

* **chat spans** — ``gen_ai.operation.name`` ``chat`` (or ``generate_content``,
  ``text_completion``), or a span without an operation name that carries the messages
  below (an ``invoke_agent`` span's messages are read only when its trace has no chat
  span: they repeat its chats'):

  - the attribute form (semantic conventions v1.37 and later):
    ``gen_ai.input.messages`` and ``gen_ai.output.messages`` (each message a ``role`` and
    ``parts``: ``text`` (``content``), ``tool_call`` (``id``, ``name``, ``arguments``),
    ``tool_call_response`` (``id``, ``response`` — or ``result``)),
    ``gen_ai.system_instructions`` (text parts) and ``gen_ai.tool.definitions`` (``name``,
    ``description``, ``parameters``);
  - the event form (v1.36): span events ``gen_ai.system.message``,
    ``gen_ai.user.message``, ``gen_ai.assistant.message``, ``gen_ai.tool.message`` and
    ``gen_ai.choice``, whose body fields — ``content``, ``tool_calls`` (``id``,
    ``function.name``, ``function.arguments``), ``id``, ``message``, ``finish_reason`` —
    are the event's attributes (maps and lists as JSON text or as ``kvlistValue`` /
    ``arrayValue``), or sit as JSON text in one ``gen_ai.event.content`` attribute;

* **execute_tool spans** — ``gen_ai.tool.name``, ``gen_ai.tool.call.id``,
  ``gen_ai.tool.call.arguments``, ``gen_ai.tool.call.result``, and the span's status
  (``STATUS_CODE_ERROR``, with its message, or ``error.type``: the tool failed): what a
  call returned when no chat span shows it;

* **grouping** — spans with the same ``gen_ai.conversation.id`` (on the span or any span
  of its trace) are one conversation, across traces; a trace without one is one
  conversation. Chat spans are read in the order they started; each one's input is the
  conversation so far (or only what is new: both are read).

* **when** — the first chat span's ``startTimeUnixNano`` (UTC: the person's own UTC offset
  is not in a trace).
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import json
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from .conversation import (
    Built,
    Message,
    Moment,
    Place,
    Problem,
    ToolCall,
    ToolDef,
    build,
)
from .names import slug
from .openai import call_of, json_problem, text_of, tool_def
from .sources import Source, Unreadable, lines, read_whole, shown

CHAT = frozenset({"chat", "generate_content", "text_completion"})
EVENTS = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
          "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}
CHOICE = "gen_ai.choice"
WRAPPED = "gen_ai.event.content"  # an event's whole body, as JSON text
ERROR = 2  # Status.code: STATUS_CODE_ERROR


@dataclass(frozen=True, slots=True)
class Span:
    trace: str
    id: str
    name: str
    start: int  # nanoseconds since 1970, UTC
    attributes: Mapping[str, Any]
    events: tuple[tuple[str, Mapping[str, Any]], ...]
    error: str | None  # the span's status, when it is an error: its message
    place: Place

    @property
    def operation(self) -> str:
        value = self.attributes.get("gen_ai.operation.name")
        return value if isinstance(value, str) else ""


def read(source: Source, problems: list[Problem]) -> list[Built]:
    """Every conversation of an OTLP/JSON export, in the order each began."""
    name = shown(source)
    spans = list(_spans(source, name, problems))
    traces: dict[str, str] = {}  # trace → its conversation id
    for s in spans:
        conversation = s.attributes.get("gen_ai.conversation.id")
        if isinstance(conversation, str) and conversation:
            traces.setdefault(s.trace, conversation)
    groups: dict[str, _Group] = {}
    for s in sorted(spans, key=lambda s: s.start):
        own = s.attributes.get("gen_ai.conversation.id")
        key = own if isinstance(own, str) and own else traces.get(s.trace)
        label = f"conversation {key}" if key else f"trace {s.trace}"
        group = groups.setdefault(label, _Group())
        if s.operation == "execute_tool":
            group.tools.append(s)
        elif s.operation in CHAT or (not s.operation and _carries_messages(s)):
            group.chats.append(s)
        elif _carries_messages(s):  # an agent's span: its messages repeat its chats'
            group.agents.append(s)
    out = []
    for label, group in groups.items():
        if not group.chats:
            group.chats = group.agents  # no chat span: the agent's spans are all there is
        if not group.chats:
            continue
        out.append(group.conversation(name, label, problems))
    return out


@dataclass
class _Group:
    chats: list[Span] = field(default_factory=list)
    tools: list[Span] = field(default_factory=list)
    agents: list[Span] = field(default_factory=list)  # invoke_agent spans with messages

    def conversation(self, name: str, label: str, problems: list[Problem]) -> Built:
        messages: list[Message] = []
        system: list[Message] = []
        tools: dict[str, ToolDef] = {}
        for s in self.chats:
            read_ = _chat(s, problems)
            if read_ is None:
                continue
            sent, answer, instructions, offered = read_
            system = system or instructions or [m for m in sent if m.role == "system"]
            for k, v in offered.items():
                tools.setdefault(k, v)
            messages = _merge(messages, sent)
            if answer is not None:
                messages.append(answer)
        messages = _with_tool_spans(messages, self.tools)
        first = self.chats[0]
        at = dt.datetime.fromtimestamp(first.start / 1e9, dt.UTC) if first.start else None
        moment = Moment(at, False, f"the start of span {first.id}") if at else None
        user = next((m.text for m in messages if m.role == "user"), "")
        return build([*system, *messages], list(tools.values()), source=name, key=label,
                     place=first.place, name=slug(user), moment=moment)


def _merge(have: list[Message], sent: Sequence[Message]) -> list[Message]:
    """The conversation so far and a chat span's input: the input is the whole conversation
    (or only what is new); the messages already here keep their places."""
    sent = [m for m in sent if m.role != "system"]
    for k in range(min(len(have), len(sent)), 0, -1):
        if all(a.same(b) for a, b in zip(have[len(have) - k:], sent[:k], strict=True)):
            return [*have, *sent[k:]]
    return [*have, *sent]


def _with_tool_spans(messages: list[Message], tools: Sequence[Span]) -> list[Message]:
    """The results execute_tool spans hold for calls no chat span shows a result of (put
    after the call's message), and their errors."""
    answered = {m.call_id for m in messages if m.role == "tool" and m.call_id}
    failed = {s.attributes.get("gen_ai.tool.call.id"): s for s in tools if s.error is not None}
    unused = list(tools)
    out: list[Message] = []
    for m in messages:
        if m.role == "tool" and m.call_id in failed:
            m = Message("tool", m.text, m.place, call_id=m.call_id, name=m.name, error=True)
        out.append(m)
        if m.role != "assistant":
            continue
        for c in m.calls:
            span = _tool_span(unused, c)
            if span is None:
                continue
            unused.remove(span)
            if c.id and c.id in answered:
                continue
            result = span.attributes.get("gen_ai.tool.call.result")
            if result is None and span.error is None:
                continue
            text = span.error if result is None and span.error is not None else _text(result)
            out.append(Message("tool", text or "", span.place, call_id=c.id, name=c.name,
                               error=span.error is not None))
    return out


def _tool_span(spans: Sequence[Span], call: ToolCall) -> Span | None:
    """The execute_tool span of a call: by its call id, else the next one to that tool."""
    for s in spans:
        if call.id and s.attributes.get("gen_ai.tool.call.id") == call.id:
            return s
    for s in spans:
        if s.attributes.get("gen_ai.tool.name") == call.name and \
                not s.attributes.get("gen_ai.tool.call.id"):
            return s
    return None


# ---- a chat span's messages -----------------------------------------------------------------


def _carries_messages(s: Span) -> bool:
    return ("gen_ai.input.messages" in s.attributes or "gen_ai.output.messages" in s.attributes
            or any(n in EVENTS or n == CHOICE for n, _ in s.events))


def _chat(s: Span, problems: list[Problem]
          ) -> tuple[list[Message], Message | None, list[Message], dict[str, ToolDef]] | None:
    """A chat span's input, its answer, its system instructions and its tools; None (with a
    problem) when it carries none of the messages."""
    a = s.attributes
    offered = {t.name: t for t in (tool_def(x, s.place) for x in _list(
        a.get("gen_ai.tool.definitions"))) if t is not None}
    instructions = _instructions(a.get("gen_ai.system_instructions"), s.place)
    if "gen_ai.input.messages" in a or "gen_ai.output.messages" in a:
        sent = [m for x in _list(a.get("gen_ai.input.messages"))
                for m in _parts_message(x, s.place)]
        out = [m for x in _list(a.get("gen_ai.output.messages"))[:1]
               for m in _parts_message(x, s.place)]
        return sent, (out[0] if out else None), instructions, offered
    if any(n in EVENTS or n == CHOICE for n, _ in s.events):
        sent, answer = _events(s)
        return sent, answer, instructions, offered
    what = f" ({s.name})" if s.name else ""
    problems.append(Problem(s.place, f"a chat span{what} without gen_ai.input.messages, "
                                     "gen_ai.output.messages or message events: nothing of "
                                     "the conversation to read (is the instrumentation's "
                                     "content capture on?); skipped"))
    return None


def _instructions(value: Any, place: Place) -> list[Message]:
    if value is None:
        return []
    if isinstance(value, str) and not value.lstrip().startswith(("[", "{")):
        return [Message("system", value, place)]
    parts = _list(value)
    text = "\n".join(p.get("content", "") if isinstance(p, dict) and
                     isinstance(p.get("content"), str) else _text(p) for p in parts)
    return [Message("system", text, place)] if text else []


def _parts_message(m: Any, place: Place) -> list[Message]:
    """A message of the attribute form (``role`` and ``parts``): one Message, or one per
    tool result it holds."""
    if not isinstance(m, dict):
        return []
    role = m.get("role")
    parts: list[Any] = m["parts"] if isinstance(m.get("parts"), list) else []
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[Message] = []
    for p in parts:
        if not isinstance(p, dict):
            continue
        match p.get("type"):
            case "text":
                texts.append(_text(p.get("content")))
            case "tool_call":
                name = p.get("name")
                if isinstance(name, str) and name:
                    calls.append(call_of(_id(p.get("id")), name, p.get("arguments")))
            case "tool_call_response":
                response = p.get("response", p.get("result"))
                results.append(Message("tool", _text(response), place, call_id=_id(p.get("id"))))
            case str() as other:
                texts.append(f"[{other.replace('_', ' ')}: not imported]")
    text = "\n".join(t for t in texts if t)
    match role:
        case "system":
            return [Message("system", text, place)]
        case "assistant":
            return [Message("assistant", text, place, tuple(calls))]
        case "user":
            return [*results, *([Message("user", text, place)] if text or not results else [])]
        case "tool":
            return results or [Message("tool", text, place)]
    return []


def _events(s: Span) -> tuple[list[Message], Message | None]:
    """The event form: the messages sent, and the first choice."""
    sent: list[Message] = []
    answer: Message | None = None
    for name, attrs in s.events:
        body = _body(attrs)
        if name in EVENTS:
            sent.append(_body_message(EVENTS[name], body, s.place))
        elif name == CHOICE and answer is None and body.get("index", 0) in (0, "0"):
            message = body.get("message")
            message = _object(message) if message is not None else {}
            answer = _body_message("assistant", message, s.place)
    return sent, answer


def _body(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """An event's body: its attributes, or the JSON text of ``gen_ai.event.content``."""
    if WRAPPED in attrs:
        wrapped = _object(attrs[WRAPPED])
        return {**{k: v for k, v in attrs.items() if k != WRAPPED}, **wrapped}
    return dict(attrs)


def _body_message(role: str, body: Mapping[str, Any], place: Place) -> Message:
    content = body.get("content")
    text = text_of(_maybe_json(content)) if not isinstance(content, str) else content
    match role:
        case "assistant":
            calls = []
            for tc in _list(body.get("tool_calls")):
                if not isinstance(tc, dict):
                    continue
                fn = _object(tc.get("function")) or tc
                name = fn.get("name")
                if isinstance(name, str) and name:
                    calls.append(call_of(_id(tc.get("id")), name, fn.get("arguments")))
            return Message("assistant", text, place, tuple(calls))
        case "tool":
            return Message("tool", text, place, call_id=_id(body.get("id")))
        case "system":
            return Message("system", text, place)
    return Message("user", text, place)


# ---- OTLP/JSON ----------------------------------------------------------------------------


def _spans(source: Source, name: str, problems: list[Problem]) -> Iterator[Span]:
    """Every span of the export: JSON Lines (one export a line), or one JSON document."""
    batch_problems: list[Problem] = []
    documents = list(_documents(source, name, batch_problems))
    problems.extend(batch_problems)
    for line, doc in documents:
        for rs in _list(_key(doc, "resourceSpans", "resource_spans")):
            for ss in _list(_key(rs, "scopeSpans", "scope_spans", "instrumentationLibrarySpans")):
                for raw in _list(_key(ss, "spans")):
                    span = _span(raw, name, line)
                    if span is not None:
                        yield span


def _documents(source: Source, name: str, problems: list[Problem]
               ) -> Iterator[tuple[int | None, Any]]:
    first = True
    whole = False
    for line in lines(source, problems):
        try:
            text = line.data.decode("utf-8")
            doc = json.loads(text)
        except UnicodeDecodeError:
            problems.append(Problem(Place(name, line.number), "the line is not UTF-8 text; "
                                                              "skipped"))
            first = False
            continue
        except json.JSONDecodeError as exc:
            if first and not text.rstrip().endswith("}"):
                whole = True  # one document over many lines
                break
            problems.append(Problem(Place(name, line.number), json_problem(exc, text)))
            first = False
            continue
        except RecursionError:
            problems.append(Problem(Place(name, line.number), "the line is nested too "
                                                              "deeply to read; skipped"))
            continue
        first = False
        if isinstance(doc, dict):
            yield line.number, doc
    if not whole:
        return
    problems.clear()
    data = read_whole(source)
    try:
        text = data.decode("utf-8-sig")
        yield None, json.loads(text)
    except UnicodeDecodeError:
        raise Unreadable("the file is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        cut = exc.pos >= len(text.rstrip()) or exc.msg.startswith("Unterminated string")
        raise Unreadable("the file is cut off: the JSON ends in the middle" if cut else
                         f"the file is not valid JSON ({exc.msg} at column {exc.colno})",
                         exc.lineno) from None
    except RecursionError:
        raise Unreadable("the file is nested too deeply to read") from None


def _span(raw: Any, name: str, line: int | None) -> Span | None:
    if not isinstance(raw, dict):
        return None
    span_id = _hex(_key(raw, "spanId", "span_id"))
    trace = _hex(_key(raw, "traceId", "trace_id"))
    attributes = _attributes(_key(raw, "attributes"))
    events = tuple((str(e.get("name", "")), _attributes(e.get("attributes")))
                   for e in _list(_key(raw, "events")) if isinstance(e, dict))
    status = _key(raw, "status")
    error = None
    code = status.get("code") if isinstance(status, dict) else None
    if code in (ERROR, "STATUS_CODE_ERROR", "2") or "error.type" in attributes:
        message = status.get("message") if isinstance(status, dict) else None
        error = message if isinstance(message, str) and message else \
            str(attributes.get("error.type") or "the tool failed")
        for n, attrs in events:
            if n == "exception" and isinstance(attrs.get("exception.message"), str):
                error = error if message else attrs["exception.message"]
    try:
        start = int(_key(raw, "startTimeUnixNano", "start_time_unix_nano") or 0)
    except (TypeError, ValueError):
        start = 0
    place = Place(name, line, span_id or "?")
    return Span(trace, span_id, str(raw.get("name") or ""), start, attributes, events, error,
                place)


def _attributes(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for kv in _list(raw):
        if isinstance(kv, dict) and isinstance(kv.get("key"), str):
            out[kv["key"]] = _value(kv.get("value"))
    return out


def _value(v: Any) -> Any:
    """An OTLP AnyValue as plain data."""
    if not isinstance(v, dict):
        return v
    for key, value in v.items():
        match key:
            case "stringValue" | "string_value":
                return value
            case "boolValue" | "bool_value":
                return bool(value)
            case "intValue" | "int_value":
                try:
                    return int(value)
                except (TypeError, ValueError):
                    return value
            case "doubleValue" | "double_value":
                return float(value) if isinstance(value, int | float | str) else value
            case "arrayValue" | "array_value":
                return [_value(x) for x in _list(value.get("values")
                                                 if isinstance(value, dict) else None)]
            case "kvlistValue" | "kvlist_value":
                return _attributes(value.get("values") if isinstance(value, dict) else None)
            case "bytesValue" | "bytes_value":
                return value
    return None


def _hex(value: Any) -> str:
    """A trace or span id: OTLP/JSON writes hex; protobuf's JSON mapping, base64."""
    if not isinstance(value, str):
        return ""
    if len(value) in (16, 32) and all(c in "0123456789abcdefABCDEF" for c in value):
        return value.lower()
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value
    return raw.hex() if len(raw) in (8, 16) else value


def _key(d: Any, *names: str) -> Any:
    if not isinstance(d, dict):
        return None
    for n in names:
        if n in d:
            return d[n]
    return None


def _list(value: Any) -> list[Any]:
    """A list, whether given as one or as its JSON text."""
    value = _maybe_json(value)
    return value if isinstance(value, list) else []


def _object(value: Any) -> dict[str, Any]:
    value = _maybe_json(value)
    return value if isinstance(value, dict) else {}


def _maybe_json(value: Any) -> Any:
    if isinstance(value, str) and value.lstrip().startswith(("[", "{")):
        try:
            return json.loads(value)
        except (ValueError, RecursionError):
            return value
    return value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _id(value: Any) -> str:
    return value.strip() if isinstance(value, str) else "" if value is None else str(value)
