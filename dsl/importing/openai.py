"""The ``openai`` format: chat-completion exchanges logged as JSON Lines, as API gateways and
proxies write them — one object a line, with ``request`` (the body sent) and ``response``
(the body received).

What is read of each line (anything else is left alone):

* ``request.messages`` — ``role`` (``system`` and ``developer`` are the system message;
  ``user``; ``assistant``; ``tool``, and the older ``function``), ``content`` (text, or a
  list of parts whose ``text`` is read; other parts — images, audio — are named, not
  imported), an assistant's ``tool_calls`` (``id``, ``function.name``,
  ``function.arguments``), a tool message's ``tool_call_id`` and ``name``;
* ``request.tools`` — each ``function``'s ``name``, ``description`` and ``parameters``
  (the older ``request.functions`` too);
* ``response.choices[0].message`` — the answer, as a message above (a streamed response
  logged as its list of chunks is put together from their ``delta``\\ s);
* when: the line's ``timestamp`` (or ``time``, ``created_at``, ``start_time``,
  ``startTime``, ``@timestamp``): ISO 8601 text, with its UTC offset when it has one, or
  seconds since 1970; else the response's ``created`` (seconds, UTC).

Exchanges are grouped into conversations: an exchange belongs to the conversation whose
last request and answer its own request begins with (a later request's messages extend the
earlier one's); a request that extends none starts a conversation. A conversation of three
model calls is one scenario.
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
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
from .sources import Source, lines, shown

TIME_KEYS = ("timestamp", "time", "created_at", "start_time", "startTime", "@timestamp")


def read(source: Source, problems: list[Problem]) -> list[Built]:
    """Every conversation of a gateway log, in the order each began."""
    name = shown(source)
    open_: list[_Open] = []
    by_start: dict[tuple[tuple[str, str], ...], list[_Open]] = {}  # the first two messages
    for line in lines(source, problems):
        place = Place(name, line.number)
        exchange = _exchange(line.data, place, problems)
        if exchange is None:
            continue
        request, answer, tools, moment = exchange
        start = tuple((m.role, m.text) for m in request[:2])
        conversation = _belongs(by_start.get(start, ()), request)
        if conversation is None:
            new = _Open([*request, answer], request, dict(tools), moment, [line.number])
            open_.append(new)
            by_start.setdefault(tuple((m.role, m.text) for m in new.messages[:2]),
                                []).append(new)
        else:
            conversation.extend(request, answer, tools, line.number)
    out = []
    for n, c in enumerate(open_, 1):
        first, last = c.lines[0], c.lines[-1]
        key = f"line {first}" if first == last else f"lines {first}–{last}"
        if len(open_) > 1:
            key += f", conversation {n} of {len(open_)}"
        user = next((m.text for m in c.messages if m.role == "user"), "")
        out.append(build(c.messages, list(c.tools.values()), source=name, key=key,
                         place=Place(name, first), name=slug(user), moment=c.moment))
    return out


@dataclass
class _Open:
    """A conversation being put together: its messages so far (the last request and its
    answer, each message with the place it was first read at)."""

    messages: list[Message]
    request: Sequence[Message]
    tools: dict[str, ToolDef]
    moment: Moment | None
    lines: list[int] = field(default_factory=list)

    def extends(self, request: Sequence[Message]) -> bool:
        """``request`` holds this conversation's last request and answer, then more."""
        have = self.messages
        return len(request) > len(have) - 1 and all(
            a.same(b) for a, b in zip(request, have, strict=False))

    def extend(self, request: Sequence[Message], answer: Message,
               tools: Mapping[str, ToolDef], line: int) -> None:
        self.messages = [*self.messages, *request[len(self.messages):], answer]
        self.request = request
        for k, v in tools.items():
            self.tools.setdefault(k, v)
        self.lines.append(line)


def _belongs(open_: Sequence[_Open], request: Sequence[Message]) -> _Open | None:
    """The conversation ``request`` continues: of those it extends, the longest; of equals,
    the latest."""
    best: _Open | None = None
    for c in open_:
        if c.extends(request) and (best is None or len(c.messages) >= len(best.messages)):
            best = c
    return best


def _exchange(data: bytes, place: Place, problems: list[Problem]
              ) -> tuple[list[Message], Message, dict[str, ToolDef], Moment | None] | None:
    """One line: its request's messages, the answer, the tools and the time; None (with a
    problem) when the line is not an exchange that can be read."""
    line = _json_line(data, place, problems)
    if line is None:
        return None
    if not isinstance(line, dict) or not {"request", "response"} <= line.keys():
        problems.append(Problem(place, "not a logged exchange: the line has no 'request' and "
                                       "'response' (is it an OpenAI gateway log?); skipped"))
        return None
    request, response = line["request"], line["response"]
    if isinstance(request, dict) and "messages" not in request and "input" in request:
        problems.append(Problem(place, "a Responses API exchange ('input', not 'messages'): "
                                       "only chat completions are read; skipped"))
        return None
    raw = request.get("messages") if isinstance(request, dict) else None
    if not isinstance(raw, list):
        problems.append(Problem(place, "the request has no 'messages' list; skipped"))
        return None
    answer = _answer(response)
    if answer is None:
        why = _error_words(response)
        problems.append(Problem(place, f"the response holds no message{why}; skipped"))
        return None
    messages = messages_of(raw, place, problems)
    reply = messages_of([answer], place, problems)
    if not reply or reply[0].role != "assistant":
        problems.append(Problem(place, "the response's message is not the assistant's; "
                                       "skipped"))
        return None
    return messages, reply[0], tools_of(request, place), _moment(line, response, place)


def _json_line(data: bytes, place: Place, problems: list[Problem]) -> Any:
    """A line's JSON; None (with a problem that says where it stops) when it is not."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(place, f"the line is not UTF-8 text (byte {exc.start + 1}); "
                                       "skipped"))
        return None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        problems.append(Problem(place, json_problem(exc, text)))
        return None
    except RecursionError:
        problems.append(Problem(place, "the line is nested too deeply to read; skipped"))
        return None


def json_problem(exc: json.JSONDecodeError, text: str) -> str:
    """Why a line is not JSON, in words: a line whose JSON stops in the middle (a string or
    a value left open at its end) was cut off."""
    end = len(text.rstrip())
    if exc.pos >= end or exc.msg.startswith("Unterminated string"):
        return f"the line is cut off: its JSON stops in the middle, at column {end}; skipped"
    return f"the line is not valid JSON ({exc.msg} at column {exc.colno}); skipped"


def _answer(response: Any) -> Mapping[str, Any] | None:
    """The response's first choice's message; a streamed one put together from its chunks."""
    if isinstance(response, list):
        return _from_chunks(response)
    if not isinstance(response, dict):
        return None
    choices = response.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    first = min((c for c in choices if isinstance(c, dict)),
                key=lambda c: c.get("index", 0) if isinstance(c.get("index"), int) else 0)
    message = first.get("message")
    return message if isinstance(message, dict) else None


def _from_chunks(chunks: Sequence[Any]) -> Mapping[str, Any] | None:
    """A streamed answer (``chat.completion.chunk`` objects) as one message."""
    text: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    seen = False
    for chunk in chunks:
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        for choice in choices if isinstance(choices, list) else ():
            delta = choice.get("delta") if isinstance(choice, dict) else None
            if not isinstance(delta, dict) or choice.get("index", 0) != 0:
                continue
            seen = True
            if isinstance(delta.get("content"), str):
                text.append(delta["content"])
            for tc in delta.get("tool_calls") or ():
                if not isinstance(tc, dict):
                    continue
                slot = calls.setdefault(int(tc.get("index", len(calls))),
                                        {"id": "", "type": "function",
                                         "function": {"name": "", "arguments": ""}})
                slot["id"] = tc.get("id") or slot["id"]
                fn = tc.get("function") or {}
                slot["function"]["name"] += fn.get("name") or ""
                slot["function"]["arguments"] += fn.get("arguments") or ""
    if not seen:
        return None
    message: dict[str, Any] = {"role": "assistant", "content": "".join(text)}
    if calls:
        message["tool_calls"] = [calls[k] for k in sorted(calls)]
    return message


def _error_words(response: Any) -> str:
    if isinstance(response, dict) and isinstance(response.get("error"), dict):
        said = response["error"].get("message")
        if isinstance(said, str) and said:
            return f" (the endpoint answered an error: {said[:200]})"
        return " (the endpoint answered an error)"
    return " (no choices[0].message)"


# ---- messages in the OpenAI shape (read by runfolder.py too) ----------------------------


def messages_of(raw: Iterable[Any], place: Place, problems: list[Problem]) -> list[Message]:
    """OpenAI chat messages as :class:`Message` values, all at ``place``."""
    out: list[Message] = []
    for m in raw:
        if not isinstance(m, dict):
            continue
        role = m.get("role")
        text = text_of(m.get("content"))
        match role:
            case "system" | "developer":
                out.append(Message("system", text, place))
            case "user":
                out.append(Message("user", text, place))
            case "assistant":
                out.append(Message("assistant", text, place, _calls(m)))
            case "tool" | "function":
                out.append(Message("tool", text, place, call_id=str(m.get("tool_call_id")
                                                                   or ""),
                                   name=str(m.get("name") or ""), error=is_error(text)))
            case _:
                problems.append(Problem(place, f"a message with the role {role!r} is not "
                                               "read; left out"))
    return out


def is_error(text: str) -> bool:
    """A tool's result that is its error: text that begins with "error" (``Error: no
    patient P-9``), as apps tell a model a tool failed. (A fake tool's error answer sends
    such a text as it is.)"""
    return text.lstrip()[:5].lower() == "error"


def text_of(content: Any) -> str:
    """A message's content as text: its text parts joined; other parts named."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for p in content:
            if isinstance(p, str):
                parts.append(p)
            elif isinstance(p, dict):
                kind = p.get("type")
                if isinstance(p.get("text"), str):
                    parts.append(p["text"])
                elif kind == "attachment":  # a Scenarist record's attachment
                    parts.append(f"[the attachment {p.get('path') or p.get('label')}]")
                elif isinstance(kind, str):
                    parts.append(f"[{kind.replace('_', ' ')}: not imported]")
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False)


def _calls(m: Mapping[str, Any]) -> tuple[ToolCall, ...]:
    out = []
    raw = m.get("tool_calls")
    for tc in raw if isinstance(raw, list) else ():
        if not isinstance(tc, dict):
            continue
        fn: dict[str, Any] = tc["function"] if isinstance(tc.get("function"), dict) else tc
        name = fn.get("name")
        if not isinstance(name, str) or not name:
            continue
        out.append(call_of(str(tc.get("id") or ""), name, fn.get("arguments")))
    legacy = m.get("function_call")
    if not out and isinstance(legacy, dict) and isinstance(legacy.get("name"), str):
        out.append(call_of("", legacy["name"], legacy.get("arguments")))
    return tuple(out)


def call_of(call_id: str, name: str, arguments: Any) -> ToolCall:
    """A tool call; its arguments as a mapping when they are a JSON object (as text or
    already parsed), else None with the text kept."""
    if isinstance(arguments, dict):
        return ToolCall(call_id, name, arguments, json.dumps(arguments, ensure_ascii=False))
    raw = "" if arguments is None else arguments if isinstance(arguments, str) \
        else json.dumps(arguments, ensure_ascii=False)
    if not raw.strip():
        return ToolCall(call_id, name, {}, raw)
    try:
        parsed = json.loads(raw)
    except (ValueError, RecursionError):
        parsed = None
    return ToolCall(call_id, name, parsed if isinstance(parsed, dict) else None, raw)


def tools_of(request: Mapping[str, Any], place: Place) -> dict[str, ToolDef]:
    """The tools a request offered, by name: ``tools`` (and the older ``functions``)."""
    out: dict[str, ToolDef] = {}
    items = [*(request.get("tools") or ()), *(request.get("functions") or ())]
    for t in items:
        tool = tool_def(t, place)
        if tool is not None:
            out.setdefault(tool.name, tool)
    return out


def tool_def(t: Any, place: Place | None) -> ToolDef | None:
    """One tool definition, in the shapes logs hold it: OpenAI's ``{type: function,
    function: {name, description, parameters}}``, the flat ``{name, description,
    parameters}``, Anthropic's ``input_schema``, MCP's ``inputSchema``."""
    if not isinstance(t, dict):
        return None
    fn: dict[str, Any] = t["function"] if isinstance(t.get("function"), dict) else t
    name = fn.get("name")
    if not isinstance(name, str) or not name:
        return None
    schema = next((fn[k] for k in ("parameters", "input_schema", "inputSchema")
                   if isinstance(fn.get(k), dict)), None)
    description = fn.get("description")
    return ToolDef(name, description if isinstance(description, str) else "", schema, place)


# ---- when ---------------------------------------------------------------------------------


def _moment(line: Mapping[str, Any], response: Any, place: Place) -> Moment | None:
    for key in TIME_KEYS:
        value = line.get(key)
        at = moment_of(value)
        if at is not None:
            return Moment(at[0], at[1], f"the '{key}' of line {place.line}")
    created = response.get("created") if isinstance(response, dict) else None
    at = moment_of(created)
    if at is not None:
        return Moment(at[0], False, f"the response's 'created' on line {place.line}")
    return None


def moment_of(value: Any) -> tuple[dt.datetime, bool] | None:
    """A time as logs write it — ISO 8601 text, or seconds (or milliseconds) since 1970 —
    and whether it carries the person's UTC offset (seconds do not: they are UTC; nor does
    a time written in UTC, as servers log)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        seconds = value / 1000 if value > 1e11 else value
        try:
            return dt.datetime.fromtimestamp(seconds, dt.UTC), False
        except (OverflowError, OSError, ValueError):
            return None
    if isinstance(value, str) and value.strip():
        text = value.strip()
        try:
            at = dt.datetime.fromisoformat(text.replace("Z", "+00:00")
                                           if text.endswith("Z") else text)
        except ValueError:
            return None
        if at.tzinfo is None:
            return at.replace(tzinfo=dt.UTC), False
        # a time in UTC (Z, +00:00) is how servers log: the person's own offset is unknown
        return at, at.utcoffset() != dt.timedelta(0)
    return None
