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
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

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
from .http11 import BadEncoding as _BadEncoding
from .http11 import ConnectFailed, Decoder, LeanPool, ProtocolFailed, TransportFailed, plain_url
from .http11 import TooLarge as _TooLarge

if TYPE_CHECKING:
    import httpx

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


# httpcore's connection pool scans every connection (and asks each socket whether it is
# still alive) for every request: the cost grows with the pool. Small pools sharded by load
# keep it flat. bench/http_pool.py measures it: on the run workload at concurrency 64, 1.1
# CPU-s per 1,000 completions in shards of 4 against 9.3 in one pool (1.25 and 1.48 at 16).
CONNECTIONS_PER_SHARD = 4


class _Shards:
    """A target's HTTP connections: httpx transports of a few connections each; a request
    goes to the least busy one."""

    def __init__(self, url: httpx.URL, max_connections: int,
                 headers: list[tuple[bytes, bytes]], timeout: Any) -> None:
        self.url = url
        self.headers = headers
        self.timeout = timeout
        import httpx

        n = max(1, -(-max_connections // CONNECTIONS_PER_SHARD))
        per = -(-max_connections // n)
        verify: Any = _tls_context() if url.scheme == "https" else False
        proxy = _proxy_for(url.scheme, url.host)
        self.proxy = proxy
        self.transports = [
            httpx.AsyncHTTPTransport(
                verify=verify, proxy=proxy,
                limits=httpx.Limits(max_connections=per, max_keepalive_connections=per))
            for _ in range(n)
        ]
        self.busy = [0] * n
        # what failures look like on this path (the lean one has its own, without httpx)
        self.timeouts: tuple[type[BaseException], ...] = (httpx.TimeoutException,
                                                          TimeoutError)
        self.transport_errors: tuple[type[BaseException], ...] = (httpx.TransportError,)
        self.decoding_errors: tuple[type[BaseException], ...] = (httpx.DecodingError,)

    async def send(self, content: bytes, limit: int, seen: list[bool]
                   ) -> tuple[int, Mapping[str, str], bytes]:
        """Status, headers and the decoded body (at most ``limit`` bytes: _TooLarge past
        it). ``seen`` is set once the status line and headers have arrived."""
        import httpx

        request = httpx.Request("POST", self.url, headers=self.headers, content=content,
                                extensions={"timeout": self.timeout})
        i = min(range(len(self.busy)), key=self.busy.__getitem__)
        self.busy[i] += 1
        try:
            response = await self.transports[i].handle_async_request(request)
            seen.append(True)
            try:
                body = await _read_body(response, limit)
            finally:
                await response.aclose()
            return response.status_code, response.headers, body
        finally:
            self.busy[i] -= 1

    async def aclose(self) -> None:
        for t in self.transports:
            await t.aclose()


async def _read_body(response: httpx.Response, limit: int) -> bytes:
    """The body as it arrives, decoded, at most ``limit`` bytes (no httpx decoder: its
    gzip decoder inflates each chunk whole, 64 KB of bomb into 64 MB)."""
    decoder = Decoder(response.headers.get("content-encoding", ""), limit)
    stream: Any = response.stream
    async for chunk in stream:
        decoder.feed(chunk)
    return decoder.finish()


def _tls_context() -> Any:
    import ssl

    global _TLS
    if _TLS is None:
        _TLS = ssl.create_default_context()
        try:
            import certifi

            _TLS.load_verify_locations(certifi.where())
        except ImportError:  # pragma: no cover - httpx depends on certifi
            pass
    return _TLS


_TLS: Any = None


def _proxy_for(scheme: str, host: str) -> str | None:
    """Honour HTTP(S)_PROXY / NO_PROXY as httpx's client would (stdlib rules)."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return None  # (before urllib.request: its import is most of this function's time)
    import urllib.request

    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy:
        return None
    if urllib.request.proxy_bypass(host):
        return None
    return str(proxy)


def _proxy_variable(url: httpx.URL) -> str:
    """The environment variable that names the proxy for ``url`` (``HTTP_PROXY``, ...)."""
    scheme = url.scheme
    for name in (f"{scheme}_proxy", f"{scheme.upper()}_PROXY", "all_proxy", "ALL_PROXY"):
        if os.environ.get(name):
            return name
    return f"{scheme.upper()}_PROXY"


class JsonEndpoint:
    """An HTTP endpoint that takes a JSON body by POST and answers JSON: the connections,
    the headers and key, timeouts, retries and what failures mean. ``where`` names it in
    messages (the base_url, the url). ``complete`` returns what :meth:`_parse` makes of
    a reply (the JSON data here; a chat completion for :class:`OpenAIModel`)."""

    def __init__(self, of: Target, url: str, where: str, setting: str, *,
                 max_connections: int = 16, on_throttle: Any = None) -> None:
        """``of``: the target (its settings, ``of.config``, have ``headers``,
        ``api_key_env``, ``timeout_ms``, ``retry`` and ``max_reply_bytes``); ``setting``:
        the setting that holds the address (base_url, url), for messages."""
        from .. import __version__

        self.of = of
        target = of.config
        if not isinstance(target, OpenAISettings | HttpSettings):
            raise TypeError(f"the target '{of.name}' has no HTTP endpoint")
        self.target = target
        where = without_userinfo(where)  # what messages show: never a URL's credentials
        self.where = where
        self.setting = setting
        problem = url_problem(where)
        # plain http:// without a proxy (local model servers, CI mocks) goes through the
        # lean client of http11.py, without httpx: its import alone is a tenth of a second,
        # and it spends three times the CPU per request (bench/floor_bench.py, issue 27);
        # TLS, proxies and URLs that need more reading: httpx, in shards
        plain = plain_url(url) if problem is None else None
        if plain is not None and _proxy_for("http", plain.host) is not None:
            plain = None
        if plain is not None:
            host = plain.netloc
        else:
            import httpx

            try:
                self.url = httpx.URL(url)
                host = self.url.netloc.decode("ascii")
            except (httpx.InvalidURL, UnicodeError) as exc:
                problem = problem or f"it is not a valid URL ({exc})"
        if problem is not None:
            raise _bad_target(of, f"the {setting} {where!r} of the target "
                                  f"'{of.name}' cannot be used: {problem}")
        ours = {"Host": host, "Content-Type": "application/json",
                "Accept": "application/json", "User-Agent": f"scenarist/{__version__}"}
        # a header the target gives replaces ours of the same name, whatever its case
        # (``host: x`` beside our ``Host`` would be a second Host: lint refuses that too)
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
        self.headers = [(k.encode("ascii"), v.encode("ascii")) for k, v in headers.items()]
        self.timeout_s = target.timeout_ms / 1000
        connect_s = min(self.timeout_s, 10.0)
        self.timeout = {"connect": connect_s, "read": self.timeout_s,
                        "write": self.timeout_s, "pool": self.timeout_s}  # httpx's extension
        self.max_reply_bytes = target.max_reply_bytes
        self.shards: _Shards | LeanPool
        self.proxy: str | None = None  # the proxy of the environment the requests go through
        if plain is not None:
            self.shards = LeanPool(plain, self.headers, max_connections, connect_s)
            self.timeouts: tuple[type[BaseException], ...] = (TimeoutError,)
            self.transport_errors: tuple[type[BaseException], ...] = (TransportFailed,)
            self.decoding_errors: tuple[type[BaseException], ...] = ()
        else:
            shards = _Shards(self.url, max_connections, self.headers, self.timeout)
            self.proxy = shards.proxy
            self.shards = shards
            self.timeouts = shards.timeouts
            self.transport_errors = shards.transport_errors
            self.decoding_errors = shards.decoding_errors
        self.on_throttle = on_throttle

    async def aclose(self) -> None:
        await self.shards.aclose()

    async def complete(self, body: dict[str, Any]) -> Any:
        retry = self.target.retry
        try:
            content = json.dumps(body, ensure_ascii=False).encode()
        except UnicodeEncodeError:  # a lone surrogate (half an emoji): send it escaped
            content = json.dumps(body).encode()
        started = time.perf_counter()
        last: EndpointError | None = None
        for i in range(retry.max_attempts):
            wait: float | None = None
            seen: list[bool] = []
            try:
                async with asyncio.timeout(self.timeout_s):
                    status, headers, raw = await self.shards.send(
                        content, self.max_reply_bytes, seen)
            except self.timeouts:
                last = EndpointError("timeout", self._timed_out(bool(seen)))
            except self.transport_errors as exc:
                last = EndpointError("connection", self._unreachable(exc))
            except _TooLarge:
                raise EndpointError(
                    "malformed", f"the reply from {self.where} is larger than "
                                 f"{self.max_reply_bytes:,} bytes (max_reply_bytes); raise "
                                 "max_reply_bytes if the endpoint really sends replies this "
                                 "long") from None
            except _BadEncoding as exc:
                raise EndpointError("malformed", f"the reply from {self.where} "
                                                 f"{exc}") from None
            except self.decoding_errors as exc:  # pragma: no cover - we decode ourselves
                raise EndpointError("malformed", f"the reply from {self.where} "
                                                 f"cannot be decoded ({exc})") from None
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
                                               f"{snippet(text)}", status=status)
                if status not in retry.retry_on_status:
                    raise last
                if status == 429 and self.on_throttle is not None:
                    self.on_throttle()
                wait = retry_after_seconds(headers.get("retry-after"))
                if wait is not None and wait > MAX_RETRY_AFTER_S:
                    raise EndpointError(
                        "status", f"HTTP {status} from {self.where}; it asks to "
                                  f"retry after {wait:.0f} s, longer than "
                                  f"{MAX_RETRY_AFTER_S:.0f} s", status=status) from None
            if i + 1 < retry.max_attempts:
                await asyncio.sleep(wait if wait is not None
                                    else backoff_seconds(i, retry.backoff_ms))
        if last is None:  # pragma: no cover - max_attempts >= 1 is enforced by the schema
            raise EndpointError("connection", "no request was sent")
        if retry.max_attempts > 1:
            last.args = (f"{last.args[0]} (after {retry.max_attempts} tries)",)
        last.retries = retry.max_attempts - 1
        raise last

    def _unreachable(self, exc: BaseException) -> str:
        """Why a request did not get through, naming the proxy of the environment when the
        requests go through one: a dead proxy is not the endpoint refusing."""
        words = _transport(exc)
        if self.proxy is None:
            return f"cannot reach {self.where}: {words}"
        import httpx  # (a proxy: the requests go through httpx, imported already)

        proxy = f"the proxy {without_userinfo(self.proxy)} (from {_proxy_variable(self.url)})"
        if isinstance(exc, httpx.ProxyError):
            return f"{proxy} did not take the request to {self.where}: {exc}"
        if isinstance(exc, httpx.ConnectError):  # the only connection made is the proxy's
            words = words.replace("(is the server running?)", "(is the proxy running?)")
            return f"cannot reach {proxy}, so {self.where} was never asked: {words}"
        return f"cannot reach {self.where} through {proxy}: {words}"

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
                                           f"{_not_redirect(status)}", status=status)
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
    """A transport failure in plain words (httpx hides the cause: walk the chain)."""
    import socket

    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return "connection refused (is the server running?)"
        if isinstance(cause, socket.gaierror):
            return "the host name could not be resolved"
        if isinstance(cause, ConnectionResetError):
            return "the server reset the connection"
        cause = cause.__cause__ or cause.__context__
    if isinstance(exc, ProtocolFailed):
        return f"the server closed the connection mid-reply ({exc})"
    if isinstance(exc, ConnectFailed):
        return f"cannot connect ({exc})"
    import httpx  # (the error came from httpx: it is imported)

    if isinstance(exc, httpx.RemoteProtocolError):
        return f"the server closed the connection mid-reply ({exc})"
    if isinstance(exc, httpx.ConnectError):
        return f"cannot connect ({exc})"
    return str(exc) or type(exc).__name__


def _unparsable_output(status: int, body: str) -> bool:
    if status != 500 and status != 400:
        return False
    low = body.lower()
    return any(p in low for p in UNPARSABLE_OUTPUT)
