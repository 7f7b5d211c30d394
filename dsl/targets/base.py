"""The two protocols every target follows, and the values they exchange.

* :class:`Agent` — a system under test, ready to run attempts: ``run(scenario, run_index)``
  returns the :class:`~dsl.model.AttemptData` the checks read, or raises
  :class:`~dsl.errors.EndpointError` when the system could not be asked. The agent loop
  over a model endpoint (:class:`dsl.execution.loop.LoopAgent`) and your own python agent
  (:class:`dsl.clients.python.PythonAgent`) are both agents.
* :class:`ChatModel` — a model endpoint: one chat completion at a time. What the agent loop,
  the judge and python agents' clients talk to.
* :class:`Clients` — how the run stage opens both without importing a client: the
  pipeline hands it ``dsl.clients.open.CLIENTS``.

A reply is untrusted data. :func:`read_reply_json` and :func:`parse_completion` are the
one place that reads it: anything that is not a chat completion Scenarist can use — JSON
too deep to read, a content part that is not text, ``tool_calls: 5``, a token count that
is text, negative or absurd — raises
``EndpointError("malformed", <what is wrong, in plain words>)``, so one bad reply ends its
own attempt as an error and never the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, NoReturn, Protocol
from urllib.parse import urlsplit

import msgspec

from ..errors import EndpointError
from ..model import AttemptData, Scenario, Target, Tokens

# A reply's JSON may nest this deep (a chat completion needs about 6 levels; tool
# arguments a few more). Deeper data is refused before any other code walks it.
MAX_REPLY_DEPTH = 100
# The most tokens one reply may report in each usage count: far above any context window,
# far below what would make --max-tokens meaningless.
MAX_REPLY_TOKENS = 100_000_000
_SHOWN_CHARS = 300  # endpoint text quoted in a message


class Reply(msgspec.Struct, frozen=True):
    """One chat completion: the assistant message and what it cost."""

    message: dict[str, Any]
    finish_reason: str | None
    tokens: Tokens
    latency_ms: float
    retries: int = 0
    raw: dict[str, Any] = msgspec.field(default_factory=dict)
    # the latency is what a cassette recorded, not measured now (a replay): the attempt
    # counts it as the time the model took, so replay reports the latency live measured
    recorded: bool = False


class RequestSettings(msgspec.Struct, frozen=True):
    """What the loop puts into every request besides messages, tools and seed."""

    model: str
    temperature: float | None
    params: dict[str, Any]
    system_prompt: str  # the template source


class ChatModel(Protocol):
    settings: RequestSettings

    async def complete(self, body: dict[str, Any]) -> Reply:
        """Send one request body; raise EndpointError when the endpoint fails."""
        ...

    async def aclose(self) -> None: ...


class Agent(Protocol):
    async def run(self, scenario: Scenario, run: int) -> AttemptData:
        """One attempt of ``scenario``, seeded with the run index; raise EndpointError when
        the system under test could not be asked."""
        ...

    async def aclose(self) -> None: ...


# The secrets of the scenario whose attempt runs now (the run stage sets it around each
# attempt, in the attempt's own task: a dsl.compiler.redact.Known): a model's cassette keeps
# which of them each mark of a reply stands for, and its replay puts them back — the model
# was told them by the scenario, the world's rows included, which one request does not hold.
ATTEMPT_SECRETS: ContextVar[Any] = ContextVar("scenarist_attempt_secrets", default=None)


class AgentContext(msgspec.Struct, frozen=True):
    """What the run gives a target when it opens it."""

    max_connections: int
    suite_root: Path
    suite_targets: tuple[Target, ...] = ()  # python agents get clients for the model ones
    on_reply: Callable[[Reply], None] = lambda reply: None  # every model reply (budgets)
    on_throttle: Callable[[], None] | None = None  # the endpoint answered HTTP 429
    record: Path | None = None  # --record FILE: a cassette of every exchange
    redact: Callable[[Any], Any] | None = None  # a JSON-like value → its redacted copy
    # the run's Redactor itself: a cassette keeps which of the secrets the agent was told
    # each mark stands for, and a replay puts them back (dsl/compiler/redact.py)
    redactor: Any = None  # a dsl.compiler.redact.Redactor (None: nothing is redacted)
    # the suite's secret variables (every target's api_key_env, redact.env): a command
    # program never inherits them
    secret_env: frozenset[str] = frozenset()


class Clients(Protocol):
    """How a run reaches its targets: ``dsl/clients/open.py`` opens them (``CLIENTS``),
    and the pipeline hands that to the run stage, which imports no client itself (the
    clients play conversations with the run stage's loop: they sit above it)."""

    def open_agent(self, target: Target, context: AgentContext) -> Agent: ...

    def open_model(self, target: Target, max_connections: int = 4,
                   on_throttle: Callable[[], None] | None = None) -> ChatModel: ...


class Metered:
    """A model whose every reply is reported (to count calls and tokens against the run's
    budgets, and to let the concurrency limit grow back)."""

    def __init__(self, inner: ChatModel, on_reply: Callable[[Reply], None]) -> None:
        self.inner = inner
        self.settings = inner.settings
        self._on_reply = on_reply

    async def complete(self, body: dict[str, Any]) -> Reply:
        reply = await self.inner.complete(body)
        self._on_reply(reply)
        return reply

    async def aclose(self) -> None:
        await self.inner.aclose()


class Unreadable(ValueError):
    """JSON text that cannot be used. ``str(exc)`` completes "the reply ..." ("is nested
    more than 100 levels deep"); ``detail`` says the same without the verb."""

    def __init__(self, message: str, detail: str) -> None:
        super().__init__(message)
        self.detail = detail


_TOO_DEEP = f"nested more than {MAX_REPLY_DEPTH} levels deep"


def read_reply_json(text: str) -> Any:
    """``json.loads`` for text that came from outside: raises :class:`Unreadable` when it
    is not JSON or nests deeper than MAX_REPLY_DEPTH. The depth is only walked when the
    text has enough brackets to be that deep, so a usual reply costs two scans of its
    text. (A lone surrogate, half an emoji cut by max_tokens, is kept: the files written
    keep it as a ``\\ud83d`` escape.)"""
    try:
        data = json.loads(text)
    except RecursionError:
        raise Unreadable(f"is {_TOO_DEEP}", _TOO_DEEP) from None
    except ValueError as exc:
        raise Unreadable(f"is not JSON: {snippet(text)}", str(exc)) from None
    if (text.count("[") + text.count("{") > MAX_REPLY_DEPTH
            and deeper_than(data, MAX_REPLY_DEPTH)):
        raise Unreadable(f"is {_TOO_DEEP}", _TOO_DEEP)
    return data


def deeper_than(data: Any, limit: int) -> bool:
    """Does ``data`` nest lists and objects more than ``limit`` levels? (no recursion)"""
    if not isinstance(data, dict | list):
        return False
    stack: list[tuple[Any, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if depth > limit:
            return True
        children = value.values() if isinstance(value, dict) else value
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False


def snippet(text: str) -> str:
    """Endpoint text for a message: whitespace collapsed, cut, quoted (control characters
    escaped by repr)."""
    t = " ".join(text[: _SHOWN_CHARS * 4].split())
    return repr(t[:_SHOWN_CHARS] + ("…" if len(t) > _SHOWN_CHARS else ""))


def _malformed(message: str) -> NoReturn:
    raise EndpointError("malformed", message)


def json_kind(value: Any) -> str:
    """What kind of JSON value ``value`` is, in words."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "text"
    if isinstance(value, list):
        return "a list"
    return "an object"


def parse_completion(data: Any, latency_ms: float, retries: int = 0) -> Reply:
    """A chat-completions JSON body as a Reply; raise EndpointError('malformed') otherwise.

    What the agent loop and the judge read is checked here, once: the message's content
    (text, null, or a list of text parts), its tool calls (a list of objects with a
    function object, a text name and text or object arguments), ``finish_reason`` and the
    usage counts (whole numbers from 0 to MAX_REPLY_TOKENS)."""
    if not isinstance(data, dict):
        _malformed("the reply is JSON but not an object")
    if "error" in data and "choices" not in data:
        err = data["error"]
        msg = err.get("message") if isinstance(err, dict) else err
        _malformed(f"the endpoint answered with an error: {_shown(msg)}")
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices:
        _malformed("the reply has no choices (an empty completion)")
    choice = choices[0]
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        _malformed("the reply's first choice has no message")
    _check_content(message.get("content"))
    _check_tool_calls(message.get("tool_calls"))
    finish_reason = choice.get("finish_reason")
    if finish_reason is not None and not isinstance(finish_reason, str):
        _malformed(f"the reply's finish_reason is {json_kind(finish_reason)}, not text")
    usage = data.get("usage")
    if usage is None:
        usage = {}
    elif not isinstance(usage, dict):
        _malformed(f"the reply's usage is {json_kind(usage)}, not an object")
    tokens = Tokens(_count(usage, "prompt_tokens"), _count(usage, "completion_tokens"))
    return Reply(message, finish_reason, tokens, latency_ms, retries, data)


def _shown(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    t = " ".join(text[: _SHOWN_CHARS * 4].split())
    return t[:_SHOWN_CHARS] + ("…" if len(t) > _SHOWN_CHARS else "")


def _check_content(content: Any) -> None:
    if content is None or isinstance(content, str):
        return
    if not isinstance(content, list):
        _malformed(f"the reply's content is {json_kind(content)}, not text or a list of text "
                   "parts")
    for i, part in enumerate(content, 1):
        if not isinstance(part, dict):
            _malformed(f"part {i} of the reply's content is {json_kind(part)}, not an object")
        if not isinstance(part.get("text"), str):
            kind = part.get("type")
            what = f"of type {_shown(kind)!r}" if isinstance(kind, str) else "without text"
            _malformed(f"part {i} of the reply's content is {what}; Scenarist reads text "
                       "answers only")


def _check_tool_calls(calls: Any) -> None:
    if calls is None:
        return
    if not isinstance(calls, list):
        _malformed(f"the reply's tool_calls is {json_kind(calls)}, not a list")
    for i, tc in enumerate(calls, 1):
        if not isinstance(tc, dict):
            _malformed(f"tool call {i} of the reply is {json_kind(tc)}, not an object")
        call_id = tc.get("id")
        if call_id is not None and not isinstance(call_id, str | int):
            _malformed(f"the id of tool call {i} of the reply is {json_kind(call_id)}, not text")
        fn = tc.get("function")
        if not isinstance(fn, dict):
            _malformed(f"tool call {i} of the reply has no function object (its function "
                       f"is {json_kind(fn)})")
        if not isinstance(fn.get("name"), str):
            _malformed(f"the name of tool call {i} of the reply is {json_kind(fn.get('name'))}, "
                       "not text")
        args = fn.get("arguments")
        if args is not None and not isinstance(args, str | dict):
            _malformed(f"the arguments of tool call {i} of the reply are {json_kind(args)}, not "
                       "text or an object")


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, int | float):
        _malformed(f"the reply's usage.{key} is {json_kind(value)} "
                   f"({_shown(json.dumps(value, ensure_ascii=False))}), not a number of "
                   "tokens")
    if isinstance(value, float):
        if not value.is_integer():
            _malformed(f"the reply's usage.{key} is {value}, not a whole number of tokens")
        value = int(value)
    if value < 0:
        _malformed(f"the reply's usage.{key} is negative ({_number(value)}); a token count "
                   "cannot be")
    if value > MAX_REPLY_TOKENS:
        _malformed(f"the reply's usage.{key} is {_number(value)}, more than "
                   f"{MAX_REPLY_TOKENS:,} tokens in one reply")
    return value


def _number(n: int) -> str:
    return f"{n:,}" if abs(n) < 10**15 else f"{float(n):.3g}"


# ------------------------------------------------------------------ target settings
# Checked by lint (dsl.compiler.suite) and again by the targets, without importing httpx.


def url_problem(url: str) -> str | None:
    """What is wrong with a base_url that the schema's ``^https?://`` lets through, or
    None: a port outside 1–65535, an unbalanced IPv6 address, no host, spaces or control
    characters."""
    if any(ch <= " " or ch == "\x7f" for ch in url):
        return "it holds a space or a control character"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"it is not a valid URL ({exc})"
    try:
        port = parts.port
    except ValueError:
        port = -1
    if port is not None and not 1 <= port <= 65535:
        return f"its port is not a number from 1 to 65535 ({parts.netloc.rpartition(':')[2]!r})"
    if not parts.hostname:
        return "it has no host name"
    if parts.query or parts.fragment:
        return "it has a query or a fragment; the base_url ends with the path (…/v1)"
    return None


_TOKEN = frozenset("!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyz"
                   "ABCDEFGHIJKLMNOPQRSTUVWXYZ")


def header_problem(name: str, value: str) -> str | None:
    """What is wrong with one extra HTTP header, or None. Names are HTTP tokens; values
    are printable ASCII (no line breaks, which would let a value start a new header)."""
    if not name or any(ch not in _TOKEN for ch in name):
        bad = next((ch for ch in name if ch not in _TOKEN), "")
        what = "is empty" if not name else f"has the character {bad!r}"
        return (f"the header name {name!r} {what}; header names are ASCII letters, digits "
                "and !#$%&'*+-.^_`|~")
    bad_char = next((ch for ch in value if not (" " <= ch <= "~" or ch == "\t")), None)
    if bad_char is None:
        return None
    if bad_char in "\r\n":
        what = "a line break"
    elif bad_char < " " or bad_char == "\x7f":
        what = "a control character"
    else:
        what = "a character that is not ASCII"
    return (f"the value of the header '{name}' holds {what} ({bad_char!r}); header values "
            "are printable ASCII")
