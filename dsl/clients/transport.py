"""One interface for every HTTP request a target sends, and one family of its failures.

A target's endpoint (:class:`dsl.clients.openai.JsonEndpoint`: ``kind: openai``, ``kind:
http``, the judge) sends each request through a :class:`Transport`: ``send(content,
progress)`` POSTs one JSON body and returns the status, the headers and the decoded body.
:func:`dsl.clients.openai.open_transport` picks one of its two implementations from the URL;
the endpoint never knows which:

* **plain** ``http://`` without a proxy (local model servers, CI mocks) —
  :class:`dsl.clients.http11.PlainPool`: asyncio's own transports, one
  :class:`asyncio.Protocol` per kept-alive connection, HTTP/1.1 read and written by h11
  (the sans-IO library httpx itself runs on);
* **TLS, proxies** and URLs that need more reading — :class:`HttpxTransport`: httpx, in
  small shards of connections (imported only then: a tenth of a second of start-up).

Both keep **one set of limits** (:class:`Limits`): the status line, headers and a trailer
at most :data:`MAX_HEAD_BYTES` (httpcore's own bound, so both paths refuse the same
replies); a body at most ``max_reply_bytes`` once decoded, gzip and deflate undone as they
arrive by one bounded :class:`Decoder` (a bomb never inflates); no connection held past
``connect_s`` while connecting. ``timeout_ms`` (the whole request), retries and
``Retry-After`` are the endpoint's, the same over both.

And **one family of errors**, :class:`TransportError`, which the endpoint turns into an
:class:`~dsl.errors.EndpointError` kind (the sentences are in ``dsl.errors.EXPLANATIONS``)::

    TransportError              maybe_processed: the request may have reached the server
    ├── ConnectFailed           no connection (refused, DNS, a proxy): never sent
    ├── TimedOut                no whole reply within timeout_s (httpx's own bound)
    │   └── ConnectTimedOut     no connection within connect_s: never sent
    ├── Disconnected            closed or reset before the whole reply came
    ├── NotHTTP                 the reply breaks HTTP/1.1 (h11's words)
    ├── TooLarge                the decoded body passed max_reply_bytes
    └── BadEncoding             its Content-Encoding cannot be read

``maybe_processed`` is what a retry policy needs: a transport never sends a request twice
by itself. A request goes out again on a fresh connection only when it provably never
reached the server (the kept-alive connection was found closed, or holding bytes nobody
asked for, before a byte was written); any failure after that is reported, with
``maybe_processed`` true, for the caller to decide.
"""

from __future__ import annotations

import ssl
import zlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

if TYPE_CHECKING:
    import httpx

# A status line with its headers, or a chunked body's trailer, longer than this is not a
# reply: refused in bounded memory. The number is httpcore's (HTTP11Connection
# .MAX_INCOMPLETE_EVENT_SIZE), so the plain path and the httpx path refuse alike.
MAX_HEAD_BYTES = 100 * 1024
# The raw (still encoded) body may exceed max_reply_bytes by gzip's framing at most.
ENCODING_SLACK = 4096


class Limits(msgspec.Struct, frozen=True):
    """The bounds every request of a target keeps, on either path."""

    timeout_s: float  # the whole request: connecting, sending, the whole reply
    connect_s: float  # connecting alone
    max_reply_bytes: int  # the body, once decoded


class Progress:
    """How far one request got; the transport marks it, the caller reads it after a failure
    (a timeout cancels the transport mid-way). ``written``: a byte of the request was handed
    to the connection; ``headers``: the reply's status line and headers arrived."""

    __slots__ = ("headers", "written")

    def __init__(self) -> None:
        self.written = False
        self.headers = False


class Transport(Protocol):
    """What an endpoint sends requests through (:func:`dsl.clients.openai.open_transport`)."""

    async def send(self, content: bytes, progress: Progress
                   ) -> tuple[int, Mapping[str, str], bytes]:
        """POST ``content``; the status, the headers (lower-case names) and the decoded
        body. Raises a :class:`TransportError`; marks ``progress`` as it goes."""
        ...

    async def aclose(self) -> None: ...


# ---- the errors ----------------------------------------------------------------------------

class TransportError(Exception):
    """The request got no usable reply. ``maybe_processed``: some of the request was
    written, so the server may have acted on it (and a retry would send it again)."""

    def __init__(self, message: str, *, maybe_processed: bool = True) -> None:
        super().__init__(message)
        self.maybe_processed = maybe_processed


class ConnectFailed(TransportError):
    """No connection (refused, a name that does not resolve, a proxy that fails); its
    cause is the OSError. Nothing was sent."""

    def __init__(self, message: str) -> None:
        super().__init__(message, maybe_processed=False)


class TimedOut(TransportError):
    """No whole reply within ``timeout_s`` by httpx's own clock (the endpoint's bound on
    the whole request is the same, and usually first)."""


class ConnectTimedOut(TimedOut):
    """No connection within ``connect_s``. Nothing was sent."""

    def __init__(self, message: str) -> None:
        super().__init__(message, maybe_processed=False)


class Disconnected(TransportError):
    """The server closed (or reset) the connection before its whole reply came."""


class NotHTTP(TransportError):
    """What the server sent is not an HTTP/1.1 reply (a bad status line, chunk size,
    Content-Length, Transfer-Encoding, headers too long...): h11's words, cut short; the
    message completes "the reply ..."."""


class TooLarge(TransportError):
    """The decoded body passed the target's max_reply_bytes."""


class BadEncoding(TransportError):
    """The body's Content-Encoding cannot be read; the message completes "the reply ..."."""


# h11's words for a server that closed mid-reply, and httpcore's for one that closed before
# any reply: both paths say them (the plain one through h11 itself)
NO_RESPONSE = "Server disconnected without sending a response."
_CLOSED = ("peer closed connection", NO_RESPONSE)
_SHOWN = 200  # of h11's message (it may quote what the server sent)


def protocol_error(message: str) -> TransportError:
    """h11's RemoteProtocolError (directly, or as httpcore's) as one of ours: a server that
    closed mid-reply is :class:`Disconnected`, a reply over :data:`MAX_HEAD_BYTES`
    and anything else h11 refuses is :class:`NotHTTP`."""
    if message.startswith(_CLOSED):
        return Disconnected(message)
    if message == "Receive buffer too long":
        return NotHTTP(f"has a status line and headers, or a trailer, longer than "
                       f"{MAX_HEAD_BYTES:,} bytes")
    words = message[:_SHOWN] + ("…" if len(message) > _SHOWN else "")
    return NotHTTP(f"is not valid HTTP/1.1 ({words})")


# ---- the body ------------------------------------------------------------------------------

class Decoder:
    """A body's Content-Encoding undone as it arrives (gzip, deflate or none), at most
    ``limit`` decoded bytes: past it :class:`TooLarge`, so a gzip bomb never inflates."""

    def __init__(self, encoding: str, limit: int) -> None:
        codings = [c.strip().lower() for c in encoding.split(",")]
        codings = [c for c in codings if c not in ("", "identity")]
        self.limit = limit
        self.total = 0
        self.parts: list[bytes] = []
        self.coding = codings[0] if codings else ""
        self.z: zlib._Decompress | None = None
        self.first = True
        if not codings:
            return
        if len(codings) > 1 or codings[0] not in ("gzip", "x-gzip", "deflate"):
            raise BadEncoding(f"is encoded as {encoding.strip()!r}; Scenarist reads gzip, "
                              "deflate or no encoding")
        self.gzip = codings[0] != "deflate"
        self.z = zlib.decompressobj(zlib.MAX_WBITS | 16 if self.gzip else zlib.MAX_WBITS)

    def feed(self, chunk: bytes) -> None:
        if self.z is None:
            self.total += len(chunk)
            if self.total > self.limit:
                raise TooLarge("the body passed max_reply_bytes")
            self.parts.append(chunk)
            return
        try:
            data = chunk
            while data and not self.z.eof:
                try:
                    out = self.z.decompress(data, self.limit - self.total + 1)
                except zlib.error:
                    if self.gzip or not self.first:
                        raise
                    # "deflate" sent raw, without the zlib wrapper (as some servers do)
                    self.z = zlib.decompressobj(-zlib.MAX_WBITS)
                    out = self.z.decompress(data, self.limit - self.total + 1)
                self.first = False
                self.total += len(out)
                if self.total > self.limit:
                    raise TooLarge("the body passed max_reply_bytes")
                self.parts.append(out)
                data = self.z.unconsumed_tail
        except zlib.error as exc:
            raise BadEncoding(f"is not valid {self.coding} data ({exc})") from None

    def finish(self) -> bytes:
        if self.z is not None:
            try:
                out = self.z.flush()
            except zlib.error as exc:
                raise BadEncoding(f"is not valid {self.coding} data ({exc})") from None
            self.total += len(out)
            if self.total > self.limit:
                raise TooLarge("the body passed max_reply_bytes")
            self.parts.append(out)
            if not self.z.eof:
                raise BadEncoding(f"ends in the middle of its {self.coding} data")
        return b"".join(self.parts)


def decoded(headers: Mapping[str, str], raw: bytes, limit: int) -> bytes:
    """A whole raw body, its Content-Encoding undone (at most ``limit`` bytes)."""
    encoding = headers.get("content-encoding")
    if encoding is None:  # (most replies: no decoder to make)
        if len(raw) > limit:
            raise TooLarge("the body passed max_reply_bytes")
        return raw
    decoder = Decoder(encoding, limit)
    decoder.feed(raw)
    return decoder.finish()


# ---- proxies ------------------------------------------------------------------------------

def proxy_for(scheme: str, host: str) -> str | None:
    """Honour HTTP(S)_PROXY / NO_PROXY as httpx's client would (stdlib rules)."""
    if host in ("127.0.0.1", "localhost", "::1"):
        return None  # (before urllib.request: its import is most of this function's time)
    # why: urllib.request is ~5 ms of start-up, and a loopback endpoint never needs it
    import urllib.request

    proxies = urllib.request.getproxies()
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy:
        return None
    if urllib.request.proxy_bypass(host):
        return None
    return str(proxy)


# ---- the httpx path ------------------------------------------------------------------------

# httpcore's connection pool scans every connection (and asks each socket whether it is
# still alive) for every request: the cost grows with the pool. Small pools sharded by load
# keep it flat. bench/http_pool.py measures it: on the run workload at concurrency 64, 1.1
# CPU-s per 1,000 completions in shards of 4 against 9.3 in one pool (1.25 and 1.48 at 16).
CONNECTIONS_PER_SHARD = 4


class HttpxTransport:
    """TLS, proxies: httpx transports of a few connections each; a request goes to the
    least busy one. httpx's failures become this module's; a connection httpcore kept
    bytes on after a reply is closed, so httpcore drops it at its next use
    (:func:`_bytes_left`)."""

    def __init__(self, url: str, headers: list[tuple[bytes, bytes]], limits: Limits,
                 max_connections: int, ca_file: str | None) -> None:
        # why: httpx is a tenth of a second of start-up; only TLS and proxies need it
        import httpx

        try:
            self.url = httpx.URL(url)
            host = self.url.netloc.decode("ascii")
        except (httpx.InvalidURL, UnicodeError) as exc:
            raise ValueError(f"it is not a valid URL ({exc})") from None
        self.headers = [(b"Host", host.encode("ascii")), *headers]
        self.limits = limits
        # httpx's own timeouts back up the endpoint's (which bounds the whole request)
        self.timeout = {"connect": limits.connect_s, "read": limits.timeout_s,
                        "write": limits.timeout_s, "pool": limits.timeout_s}
        n = max(1, -(-max_connections // CONNECTIONS_PER_SHARD))
        per = -(-max_connections // n)
        verify: Any = tls_context(ca_file) if self.url.scheme == "https" else False
        proxy = proxy_for(self.url.scheme, self.url.host)
        self.transports = [
            httpx.AsyncHTTPTransport(
                verify=verify, proxy=proxy,
                limits=httpx.Limits(max_connections=per, max_keepalive_connections=per))
            for _ in range(n)
        ]
        self.busy = [0] * n

    async def send(self, content: bytes, progress: Progress
                   ) -> tuple[int, Mapping[str, str], bytes]:
        # why: loaded by __init__ already (a plain run never imports httpx)
        import httpx

        request = httpx.Request("POST", self.url, headers=self.headers, content=content,
                                extensions={"timeout": self.timeout})
        i = min(range(len(self.busy)), key=self.busy.__getitem__)
        self.busy[i] += 1
        try:
            # httpcore writes nothing before it has a connection: a ConnectError or a
            # ConnectTimeout is a request never sent; anything later may have reached it
            progress.written = True
            response = await self.transports[i].handle_async_request(request)
            progress.headers = True
            try:
                body = await _read_body(response, self.limits.max_reply_bytes)
                if _bytes_left(response):  # never reused: dropped at its next use
                    await response.extensions["network_stream"].aclose()
            finally:
                await response.aclose()
            return response.status_code, response.headers, body
        except httpx.TransportError as exc:
            raise _ours(exc, progress) from exc
        finally:
            self.busy[i] -= 1

    async def aclose(self) -> None:
        for t in self.transports:
            await t.aclose()


def _ours(exc: httpx.TransportError, progress: Progress) -> TransportError:
    """An httpx failure as one of this module's."""
    # why: loaded by HttpxTransport already (a plain run never imports httpx)
    import httpx

    match exc:
        case httpx.ConnectTimeout():
            progress.written = False
            return ConnectTimedOut(str(exc) or "no connection in time")
        case httpx.ConnectError() | httpx.ProxyError() | httpx.UnsupportedProtocol():
            progress.written = False
            return ConnectFailed(str(exc) or type(exc).__name__)
        case httpx.PoolTimeout():
            progress.written = False
            return ConnectTimedOut("no free connection in time")
        case httpx.TimeoutException():  # reading or writing
            return TimedOut(str(exc) or type(exc).__name__)
        case httpx.RemoteProtocolError():
            return protocol_error(str(exc))
        case httpx.DecodingError():  # pragma: no cover - the body is decoded here
            return BadEncoding(f"cannot be decoded ({exc})")
        case _:  # ReadError, WriteError, CloseError: the connection broke
            return Disconnected(str(exc) or type(exc).__name__)


def _bytes_left(response: httpx.Response) -> bool:
    """Whether bytes came after this reply on its connection (a 204 with a body, a body
    longer than its Content-Length): httpcore keeps them in its h11 buffer and would read
    them as the next request's reply (encode/httpx#1474). httpcore has no public way to
    tell; this reads h11's ``trailing_data`` by the path its maintainers give
    (encode/httpcore#872), and says True when that path is gone (another httpcore, a
    proxy's connection), so the connection is dropped rather than trusted."""
    try:
        stream: Any = response.stream
        left: bytes = stream._httpcore_stream._stream._connection._h11_state.trailing_data[0]
    except AttributeError:
        return True
    return bool(left)


async def _read_body(response: httpx.Response, limit: int) -> bytes:
    """The body as it arrives, decoded, at most ``limit`` bytes (no httpx decoder: its
    gzip decoder inflates each chunk whole, 64 KB of bomb into 64 MB)."""
    decoder = Decoder(response.headers.get("content-encoding", ""), limit)
    stream: Any = response.stream
    async for chunk in stream:
        decoder.feed(chunk)
    return decoder.finish()


_TLS: dict[str | None, Any] = {}


def tls_context(ca_file: str | None = None) -> Any:
    """The TLS context of https:// endpoints: the system's and certifi's authorities, and
    the target's ``ca_file`` when it names one (raises OSError or ssl.SSLError when that
    file cannot be read as PEM certificates)."""
    ctx = _TLS.get(ca_file)
    if ctx is None:
        ctx = ssl.create_default_context()
        try:
            # why: httpx's dependency, loaded only where httpx is
            import certifi

            ctx.load_verify_locations(certifi.where())
        except ImportError:  # pragma: no cover - httpx depends on certifi
            pass
        if ca_file is not None:
            ctx.load_verify_locations(cafile=ca_file)
        _TLS[ca_file] = ctx
    return ctx
