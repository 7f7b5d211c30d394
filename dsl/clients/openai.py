"""``kind: openai`` — any OpenAI-compatible chat-completions endpoint (llama.cpp server,
vLLM, Ollama, OpenAI), over one shared ``httpx.AsyncClient`` per target.

Timeouts are explicit (httpx's 5 s default is too short for a model), and ``timeout_ms``
bounds the whole request, body included: a server that drips one byte at a time cannot
keep an attempt alive. The body is read as it arrives and decoded here (gzip and deflate,
incrementally), counting decoded bytes: past ``max_reply_bytes`` reading stops, so a gzip
bomb never inflates. A redirect is reported as one, never followed or read as a
completion. Only 429, the configured 5xx statuses, timeouts and connection errors are
retried, with exponential backoff and jitter, honouring ``Retry-After`` (seconds or an
HTTP date). Whatever still fails becomes an :class:`~dsl.errors.EndpointError` — an
attempt with status *error*, never a model failure and never an aborted run.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import http
import json
import os
import random
import socket
import ssl
import time
import urllib.parse
from collections.abc import Mapping
from typing import Any

import msgspec

from .. import __version__
from ..errors import Diagnostic, EndpointError, InputError, without_userinfo
from ..model import Target
from ..settings import HttpSettings, OpenAISettings
from ..targets.base import (
    Reply,
    RequestSettings,
    Unreadable,
    header_problem,
    parse_completion,
    read_reply_json,
    snippet,
    url_problem,
)
from .http11 import PlainPool, plain_url
from .transport import (
    BadEncoding,
    ConnectFailed,
    Disconnected,
    HttpxTransport,
    Limits,
    NotHTTP,
    Progress,
    TimedOut,
    TooLarge,
    Transport,
    TransportError,
    proxy_for,
)

# What servers say when the *model* wrote something their tool-call parser cannot read
# (llama.cpp: "The model produced output that does not match the expected peg-native
# format"). That is the model failing, not the endpoint: the attempt fails, no retry.
UNPARSABLE_OUTPUT = ("does not match the expected", "failed to parse tool call",
                     "could not parse tool call")
# What servers say when the model or the server cannot use tools at all (Ollama: "... does
# not support tools"; vLLM: "auto" tool choice requires --enable-auto-tool-choice ...).
UNSUPPORTED_TOOLS = ("does not support tools", "tools are not supported",
                     "tools not supported", "tool choice requires", "tool_choice is not "
                     "supported", "enable-auto-tool-choice")
MAX_RETRY_AFTER_S = 60.0  # a server asking for longer than this is treated as failing


def api_key(target: OpenAISettings | HttpSettings) -> str | None:
    """The target's API key from its environment variable (never stored anywhere)."""
    if not target.api_key_env:
        return None
    return os.environ.get(target.api_key_env)


def retry_after_seconds(value: str | None, now: dt.datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: a number of seconds or an HTTP date."""
    if not value:
        return None
    value = value.strip()
    try:
        seconds: float = max(0.0, float(value))
        return seconds
    except ValueError:
        pass
    import email.utils  # here: only a date in Retry-After needs it (~3 ms of a run's start)

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.UTC)
    now = now or dt.datetime.now(dt.UTC)
    return max(0.0, (when - now).total_seconds())


def backoff_seconds(retry_index: int, base_ms: int) -> float:
    """Exponential backoff with full jitter: uniform in [b/2, b], b = base × 2^i."""
    b: float = base_ms / 1000 * 2.0**retry_index
    return b / 2 + random.random() * b / 2  # noqa: S311 - jitter, not cryptography


_ENCODER = msgspec.json.Encoder()


def request_body(body: Any) -> bytes:
    """A request's JSON body, compact, in UTF-8, written by msgspec (a fifth of the json
    module's time). A number that is not one (NaN, Infinity: not JSON, which servers
    refuse) goes as ``null``. What msgspec cannot write — a lone surrogate (half an emoji
    cut by max_tokens), a key that is not text — is written by the json module (the
    surrogate escaped)."""
    try:
        return _ENCODER.encode(body)
    except (TypeError, ValueError, RecursionError, msgspec.EncodeError):
        pass  # (UnicodeEncodeError is a ValueError)
    try:
        return json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()
    except UnicodeEncodeError:  # a lone surrogate: sent escaped
        return json.dumps(body, separators=(",", ":")).encode()


def open_transport(url: str, headers: list[tuple[bytes, bytes]], limits: Limits,
                   max_connections: int, ca_file: str | None = None) -> Transport:
    """The transport for ``url`` (POSTed with ``headers`` and a Host header made from the
    URL): plain ``http://`` without a proxy through h11 on Scenarist's own connections
    (:class:`~dsl.clients.http11.PlainPool`), anything else through httpx
    (:class:`~dsl.clients.transport.HttpxTransport`, imported only then). Raises
    ValueError with what is wrong with a URL httpx cannot read, OSError (ssl.SSLError)
    when ``ca_file`` holds no certificate."""
    plain = plain_url(url)
    if plain is not None and proxy_for("http", plain.host) is None:
        # the target's own Host header (any case), else the URL's: never two
        host = [] if any(k.lower() == b"host" for k, _ in headers) else [
            (b"Host", plain.netloc.encode("ascii"))]
        return PlainPool(plain, [*host, *headers], limits, max_connections)
    return HttpxTransport(url, headers, limits, max_connections, ca_file)


class JsonEndpoint:
    """An HTTP endpoint that takes a JSON body by POST and answers JSON: the headers and
    key, the retry policy and what failures mean, over one
    :class:`~dsl.clients.transport.Transport` (plain ``http://`` through h11, TLS and
    proxies through httpx: the same limits, the same errors, the same words). ``where``
    names it in messages (the base_url, the url). ``complete`` returns what :meth:`_parse`
    makes of a reply (the JSON data here; a chat completion for :class:`OpenAIModel`)."""

    def __init__(self, of: Target, url: str, where: str, setting: str, *,
                 max_connections: int = 16, on_throttle: Any = None,
                 resend: bool = True) -> None:
        """``of``: the target (its settings, ``of.config``, have ``headers``,
        ``api_key_env``, ``timeout_ms``, ``retry``, ``max_reply_bytes`` and ``ca_file``);
        ``setting``: the setting that holds the address (base_url, url), for messages;
        ``resend``: whether the retry policy may send again a request the server may have
        processed (a model's completion: yes; see :meth:`complete`)."""
        self.of = of
        target = of.config
        if not isinstance(target, OpenAISettings | HttpSettings):
            raise TypeError(f"the target '{of.name}' has no HTTP endpoint")
        self.target = target
        where = without_userinfo(where)  # what messages show: never a URL's credentials
        self.where = where
        self.setting = setting
        self.resend = resend
        problem = url_problem(where)
        if problem is not None:
            raise _bad_target(of, f"the {setting} {where!r} of the target "
                                  f"'{of.name}' cannot be used: {problem}")
        ours = {"Content-Type": "application/json", "Accept": "application/json",
                "User-Agent": f"scenarist/{__version__}"}
        # a header the target gives replaces ours of the same name, whatever its case
        given = {name.lower() for name in target.headers}
        headers = {**{k: v for k, v in ours.items() if k.lower() not in given},
                   **target.headers}
        for name, value in target.headers.items():
            trouble = header_problem(name, value)
            if trouble is not None:
                raise _bad_target(of, f"the target '{of.name}' cannot be used: {trouble}")
        key = api_key(target)
        if key:
            if not key.isascii() or not key.isprintable():
                raise _bad_target(of, f"the API key in {target.api_key_env} holds a "
                                      "character that is not printable ASCII; check the "
                                      "variable")
            headers["Authorization"] = f"Bearer {key}"
        self.timeout_s = target.timeout_ms / 1000
        self.limits = Limits(timeout_s=self.timeout_s, connect_s=min(self.timeout_s, 10.0),
                             max_reply_bytes=target.max_reply_bytes)
        self.max_reply_bytes = target.max_reply_bytes
        try:
            self.transport: Transport = open_transport(
                url, [(k.encode("ascii"), v.encode("ascii")) for k, v in headers.items()],
                self.limits, max_connections, target.ca_file)
        except ValueError as exc:
            raise _bad_target(of, f"the {setting} {where!r} of the target "
                                  f"'{of.name}' cannot be used: {exc}") from None
        except OSError as exc:  # ssl.SSLError is one: a ca_file that is not PEM
            raise _bad_target(of, f"the ca_file {target.ca_file!r} of the target "
                                  f"'{of.name}' cannot be used: {exc}") from None
        self.on_throttle = on_throttle
        # the proxy of the environment the requests go through (None: straight there)
        parts = urllib.parse.urlsplit(url)
        self.proxy = (proxy_for(parts.scheme, parts.hostname or "")
                      if parts.scheme and parts.hostname else None)

    async def aclose(self) -> None:
        await self.transport.aclose()

    async def complete(self, body: dict[str, Any]) -> Any:
        """The reply to one request, retried as the target's ``retry`` says: 429, the
        configured statuses, timeouts and lost connections, after ``Retry-After`` or a
        backoff. The transport never sends a request twice by itself; each failure says
        whether the server may have processed it (``maybe_processed``), and when it may
        have and ``resend`` is off, the request is not tried again. The EndpointError raised
        at the end is marked ``maybe_processed`` when any try may have been processed."""
        retry = self.target.retry
        content = request_body(body)
        started = time.perf_counter()
        last: EndpointError | None = None
        processed = False
        tries = 0
        for i in range(retry.max_attempts):
            tries = i + 1
            wait: float | None = None
            progress = Progress()
            try:
                async with asyncio.timeout(self.timeout_s):
                    status, headers, raw = await self.transport.send(content, progress)
            except (TimeoutError, TimedOut):
                last = EndpointError("timeout", self._timed_out(progress.headers),
                                     maybe_processed=progress.written)
            except (TooLarge, BadEncoding, NotHTTP) as exc:
                raise self._unreadable(exc) from None
            except TransportError as exc:  # ConnectFailed, Disconnected
                last = EndpointError("connection", self._unreachable(exc),
                                     maybe_processed=exc.maybe_processed)
            else:
                if status < 300:
                    return self._parse(raw, started, i)
                if status < 400:
                    raise self._redirected(status, headers)
                text = raw.decode("utf-8", errors="replace")
                refused = self._refused(status, text)
                if refused is not None:
                    raise refused
                last = EndpointError("status", f"HTTP {status} from {self.where}: "
                                               f"{snippet(text)}", status=status,
                                     maybe_processed=True)
                if status not in retry.retry_on_status:
                    raise last
                if status == 429 and self.on_throttle is not None:
                    self.on_throttle()
                wait = retry_after_seconds(headers.get("retry-after"))
                last.retry_after = wait
                if wait is not None and wait > MAX_RETRY_AFTER_S:
                    raise EndpointError(
                        "status", f"HTTP {status} from {self.where}; it asks to "
                                  f"retry after {wait:.0f} s, longer than "
                                  f"{MAX_RETRY_AFTER_S:.0f} s", status=status,
                        maybe_processed=True, retry_after=wait) from None
            processed = processed or last.maybe_processed
            if last.maybe_processed and not self.resend:
                break
            if i + 1 < retry.max_attempts:
                await asyncio.sleep(wait if wait is not None
                                    else backoff_seconds(i, retry.backoff_ms))
        if last is None:  # pragma: no cover - max_attempts >= 1 is enforced by the schema
            raise EndpointError("connection", "no request was sent")
        if tries > 1:
            last.args = (f"{last.args[0]} (after {tries} tries)",)
        last.retries = tries - 1
        last.maybe_processed = processed
        raise last

    def _unreachable(self, exc: TransportError) -> str:
        """Why a request did not get through, naming the proxy of the environment when the
        requests go through one: a dead proxy is not the endpoint refusing."""
        words = _transport(exc)
        if self.proxy is None:
            return f"cannot reach {self.where}: {words}"
        proxy = (f"the proxy {without_userinfo(self.proxy)} (from "
                 f"{_proxy_variable(urllib.parse.urlsplit(self.where).scheme)})")
        if isinstance(exc, ConnectFailed):  # the only connection made is the proxy's
            if _proxy_refused(exc):
                return f"{proxy} did not take the request to {self.where}: {exc}"
            words = words.replace("(is the server running?)", "(is the proxy running?)")
            return f"cannot reach {proxy}, so {self.where} was never asked: {words}"
        return f"cannot reach {self.where} through {proxy}: {words}"

    def _unreadable(self, exc: TransportError) -> EndpointError:
        """A reply that came but cannot be read: too large, an encoding Scenarist does not
        read, or not HTTP/1.1. Never retried: the server answered."""
        if isinstance(exc, TooLarge):
            message = (f"the reply from {self.where} is larger than "
                       f"{self.max_reply_bytes:,} bytes (max_reply_bytes); raise "
                       "max_reply_bytes if the endpoint really sends replies this long")
        else:
            message = f"the reply from {self.where} {exc}"
        return EndpointError("malformed", message, maybe_processed=True)

    def _refused(self, status: int, text: str) -> EndpointError | None:
        """An error status that is no use retrying, said in its own words (None: a
        ``status`` error)."""
        return None

    def _parse(self, raw: bytes, started: float, retries: int) -> Any:
        """The reply's JSON data (EndpointError('malformed') when it is not JSON)."""
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise EndpointError(
                "malformed", f"the reply from {self.where} is not UTF-8 text (byte "
                             f"0x{raw[exc.start]:02x} at position {exc.start:,})") from None
        try:
            return read_reply_json(text)
        except Unreadable as exc:
            raise EndpointError("malformed",
                                f"the reply from {self.where} {exc}") from None

    def _timed_out(self, headers_arrived: bool) -> str:
        limit = f"{self.target.timeout_ms / 1000:g} s"
        if headers_arrived:
            return (f"the reply from {self.where} was still arriving after {limit} "
                    "(timeout_ms bounds the whole reply)")
        return f"no reply from {self.where} within {limit}"

    def _redirected(self, status: int, headers: Mapping[str, str]) -> EndpointError:
        """A 3xx reply, said as what it is: a redirect (never followed), a 304 (an answer
        to a question Scenarist never asks), or another 3xx."""
        if status not in REDIRECTS:
            return EndpointError("status", f"HTTP {status} from {self.where}: "
                                           f"{_not_redirect(status)}", status=status,
                                 maybe_processed=True)
        location = headers.get("location")
        where = (f"redirected to {snippet(location)}" if location
                 else "redirected without saying where (no Location header)")
        return EndpointError("status", f"HTTP {status} from {self.where}: the "
                                       f"endpoint {where}; set {self.setting} to the final address",
                             status=status)


# the statuses that send the client elsewhere (a Location); other 3xx are not redirects
REDIRECTS = frozenset({301, 302, 303, 307, 308})


def _not_redirect(status: int) -> str:
    """A 3xx that is no redirect, in words."""
    if status == 304:
        return ("'304 Not Modified' answers a request that asked whether a copy it holds is "
                "still fresh, which Scenarist never asks: the endpoint sent no answer (a cache "
                "or a proxy in between may have answered instead)")
    try:
        phrase = f" '{status} {http.HTTPStatus(status).phrase}'"
    except ValueError:
        phrase = ""
    return (f"the endpoint answered with{phrase or ' a 3xx status'}, which is neither an "
            "answer nor a redirect with an address")


def _proxy_variable(scheme: str) -> str:
    """The environment variable that names the proxy for ``scheme`` (``HTTP_PROXY``...)."""
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"):
        if os.environ.get(name):
            return name
    return f"{scheme.upper()}_PROXY"


def _proxy_refused(exc: BaseException) -> bool:
    """The proxy answered, and would not forward the request (httpx's ProxyError)."""
    cause: BaseException | None = exc
    while cause is not None:
        if type(cause).__name__ == "ProxyError":
            return True
        cause = cause.__cause__ or cause.__context__
    return False


class OpenAIModel(JsonEndpoint):
    """One target's endpoint. ``on_throttle`` is told about 429s (adaptive concurrency)."""

    def __init__(self, of: Target, *, max_connections: int = 16,
                 on_throttle: Any = None) -> None:
        """``of``: a ``kind: openai`` target (its settings: ``of.config``)."""
        target = of.settings(OpenAISettings)
        self.settings = RequestSettings(
            target.model, target.temperature, dict(target.params), target.system_prompt
        )
        super().__init__(of, target.base_url + "/chat/completions", target.base_url,
                         "base_url", max_connections=max_connections, on_throttle=on_throttle)

    async def complete(self, body: dict[str, Any]) -> Reply:
        reply: Reply = await super().complete(body)
        return reply

    def _refused(self, status: int, text: str) -> EndpointError | None:
        if _unparsable_output(status, text):
            return EndpointError(
                "model_output", "the server could not parse the model's reply as a "
                f"tool call or answer (HTTP {status}: {snippet(text)})", status=status)
        if status < 500 and any(p in text.lower() for p in UNSUPPORTED_TOOLS):
            return EndpointError(
                "unsupported_tools", f"the endpoint does not support tool calls for "
                f"this model (HTTP {status}: {snippet(text)})", status=status)
        return None

    def _parse(self, raw: bytes, started: float, retries: int) -> Reply:
        data = super()._parse(raw, started, retries)
        return parse_completion(data, (time.perf_counter() - started) * 1000, retries)


def _bad_target(target: Target, message: str) -> InputError:
    return InputError([Diagnostic(target.span, "S105", message)])


def _transport(exc: BaseException) -> str:
    """A transport failure in plain words (the cause is deep in the chain: walk it)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (is the server running?)"
        if isinstance(cause, socket.gaierror):
            return "the host name could not be resolved"
        if isinstance(cause, ConnectionResetError):
            return "the server reset the connection"
        if isinstance(cause, ssl.SSLCertVerificationError):
            return (f"its TLS certificate is not trusted ({cause.verify_message}); if a "
                    "certificate authority of your own signed it, name its PEM file in the "
                    "target's ca_file")
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, Disconnected):
        return f"the server closed the connection mid-reply ({exc})"
    if isinstance(exc, ConnectFailed):
        return f"cannot connect ({exc})"
    return str(exc) or type(exc).__name__


def _unparsable_output(status: int, body: str) -> bool:
    if status != 500 and status != 400:
        return False
    low = body.lower()
    return any(p in low for p in UNPARSABLE_OUTPUT)
