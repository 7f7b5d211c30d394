"""The plain ``http://`` path of :mod:`dsl.clients.transport`: a target's kept-alive
connections to one ``host:port`` on asyncio's own transports, HTTP/1.1 spoken by h11.

Local model servers (llama.cpp, vLLM, Ollama, a mock in CI) are where a run spends its
requests, and there httpx's layers (httpx → httpcore → anyio → h11, a liveness probe of
the socket per request) cost more CPU than the rest of an attempt together
(``bench/floor_bench.py``, issue 27). This keeps only the bottom one: each connection is an
:class:`asyncio.Protocol` that owns one ``h11.Connection`` for its whole life (reused from
request to request with ``start_next_cycle``). h11 writes every request and reads every
reply — status line, headers, Content-Length, chunks, trailers, what ends a message — so a
reply h11 refuses is refused here exactly as on the httpx path, in h11's words.

Rules the pool keeps:

* **Nothing escapes** ``data_received``: whatever goes wrong while reading a reply ends that
  request with a :class:`~dsl.clients.transport.TransportError` and the connection.
* **A connection with unread bytes is never reused**: it is kept only when h11 says both
  sides are done with no byte left over and nothing arrived since (a 204 with a body, a
  body longer than its Content-Length, a reply nobody asked for). No later request is
  read from an earlier reply.
* **A request is never sent twice**: an idle connection is checked before a byte is
  written (closed by the server, or holding unread bytes: dropped, another taken); once
  the request is written, any failure is reported with ``maybe_processed``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from urllib.parse import urlsplit

import h11

from .transport import (
    ENCODING_SLACK,
    MAX_HEAD_BYTES,
    NO_RESPONSE,
    ConnectFailed,
    ConnectTimedOut,
    Disconnected,
    Limits,
    NotHTTP,
    Progress,
    TooLarge,
    TransportError,
    decoded,
    protocol_error,
)

_END = h11.EndOfMessage()  # (events are immutable: one for every request)
MAX_HEADS = 1024  # request heads a pool keeps, by length


class _Connection(asyncio.Protocol):
    """One kept-alive connection and its h11 state; one request at a time."""

    def __init__(self) -> None:
        self.h11 = h11.Connection(h11.CLIENT, max_incomplete_event_size=MAX_HEAD_BYTES)
        self.transport: asyncio.Transport | None = None
        self.waiter: asyncio.Future[None] | None = None
        self.progress = Progress()
        self.closed = False
        self.unread = False  # bytes came that no request was waiting for
        self.status = 0
        self.headers: dict[str, str] = {}
        self.body: list[bytes] = []
        self.size = 0
        self.raw_limit = 0

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        waiter = self.waiter
        if waiter is None or waiter.done():
            self.unread = True  # idle, or its reply already whole: never reused
            self.abort()
            return
        try:
            self.h11.receive_data(data)
            self._read(waiter)
        except Exception as exc:  # nothing may escape into asyncio
            self._fail(waiter, exc)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        waiter = self.waiter
        if waiter is None or waiter.done():
            return
        error: TransportError
        if self.h11.their_state is h11.SEND_RESPONSE:
            error = Disconnected(NO_RESPONSE)  # (httpcore's words for it)
        else:
            try:
                self.h11.receive_data(b"")
                self._read(waiter)  # a body read until the server closes ends here
                if waiter.done():
                    return
                error = Disconnected(NO_RESPONSE)  # pragma: no cover - h11 raises first
            except Exception as err:
                error = _ours(err)
        error.__cause__ = exc
        waiter.set_exception(error)

    def abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # the reply
    def _read(self, waiter: asyncio.Future[None]) -> None:
        h = self.h11
        while True:
            event = h.next_event()
            kind = type(event)
            if kind is h11.Data:
                data: bytes = event.data  # type: ignore[union-attr]
                self.size += len(data)
                if self.size > self.raw_limit:
                    raise TooLarge("the body passed max_reply_bytes")
                self.body.append(data)
            elif kind is h11.Response:
                self.status = event.status_code  # type: ignore[union-attr]
                headers: dict[str, str] = {}
                for name, value in event.headers.raw_items():  # type: ignore[union-attr]
                    key = name.decode("latin-1").lower()
                    text = value.decode("latin-1")
                    headers[key] = f"{headers[key]}, {text}" if key in headers else text
                self.headers = headers
                self.progress.headers = True
            elif kind is h11.EndOfMessage:
                waiter.set_result(None)
                return
            elif event is h11.NEED_DATA:
                return
            elif kind is not h11.InformationalResponse:  # 100 Continue, 103: the reply follows
                return  # pragma: no cover - PAUSED and ConnectionClosed come after the end

    def _fail(self, waiter: asyncio.Future[None], exc: BaseException) -> None:
        waiter.set_exception(_ours(exc))
        self.abort()

    def open(self) -> bool:
        """Still open, and nothing arrived that no request asked for."""
        return (not self.closed and not self.unread and self.transport is not None
                and not self.transport.is_closing())

    def reusable(self) -> bool:
        """After a reply: both sides done, no byte left over, still open."""
        h = self.h11
        return (h.our_state is h11.DONE and h.their_state is h11.DONE and self.open()
                and not h.trailing_data[0])

    async def exchange(self, request: h11.Request, content: bytes, raw_limit: int,
                       progress: Progress) -> tuple[int, Mapping[str, str], bytes]:
        assert self.transport is not None
        h = self.h11
        data = h.send(request) + h.send(h11.Data(data=content)) + h.send(_END)
        self.status = 0
        self.headers = {}
        self.body = []
        self.size = 0
        self.raw_limit = raw_limit
        self.progress = progress
        waiter = self.waiter = asyncio.get_running_loop().create_future()
        progress.written = True
        self.transport.write(data)
        try:
            await waiter
        finally:
            self.waiter = None
        return self.status, self.headers, b"".join(self.body)


def _ours(exc: BaseException) -> TransportError:
    """Whatever ended a reply, as one of the transport's errors."""
    if isinstance(exc, TransportError):
        return exc
    if isinstance(exc, h11.RemoteProtocolError):
        return protocol_error(str(exc))
    return NotHTTP(f"could not be read ({type(exc).__name__}: {exc})")


class PlainURL:
    """An ``http://`` URL simple enough to need no httpx to read: an ASCII host name or
    IPv4 address (or [IPv6]), a port, a path of printable ASCII; :func:`plain_url`."""

    __slots__ = ("host", "netloc", "port", "target")

    def __init__(self, host: str, port: int, netloc: str, target: bytes) -> None:
        self.host = host
        self.port = port
        self.netloc = netloc
        self.target = target


_HOST_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-")
_PATH_CHARS = frozenset(chr(c) for c in range(0x21, 0x7f)) - {"#"}


def plain_url(url: str) -> PlainURL | None:
    """The URL when it is plain ``http://`` as :class:`PlainURL` says; else None (the
    caller reads it with httpx, whose messages say what is wrong with it)."""
    if not url.startswith("http://") or not all(c in _PATH_CHARS for c in url):
        return None
    try:
        parts = urlsplit(url)
        port = parts.port or 80
    except ValueError:
        return None
    host = parts.hostname or ""
    if parts.username is not None or parts.password is not None or parts.fragment:
        return None
    if not host or not (all(c in _HOST_CHARS for c in host) or host.count(":") >= 2):
        return None
    if host.count(":") >= 2 and not all(c in "0123456789abcdefABCDEF:." for c in host):
        return None
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return PlainURL(host, port, parts.netloc, target.encode("ascii"))


class PlainPool:
    """A target's connections to one ``http://host:port`` (at most ``max_connections``
    at once): a :class:`~dsl.clients.transport.Transport`."""

    def __init__(self, url: PlainURL, headers: list[tuple[bytes, bytes]], limits: Limits,
                 max_connections: int) -> None:
        """``headers``: every header of each request but its Content-Length."""
        self.host = url.host
        self.port = url.port
        self.target = url.target
        self.headers = headers
        self.limits = limits
        self.idle: list[_Connection] = []
        self.open: set[_Connection] = set()
        self.max_connections = max(1, max_connections)
        self.gate: asyncio.Semaphore | None = None
        # the request's head differs only by its Content-Length: h11 checks a head once per
        # length (a scenario's runs send requests of the same length) and its Request event,
        # immutable, is sent again as it is
        self.requests: dict[int, h11.Request] = {}

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        limit = self.limits.connect_s
        try:
            async with asyncio.timeout(limit):
                _, conn = await loop.create_connection(_Connection, self.host, self.port)
        except TimeoutError:
            raise ConnectTimedOut(f"no connection within {limit:g} s") from None
        except OSError as exc:
            raise ConnectFailed(str(exc) or type(exc).__name__) from exc
        self.open.add(conn)
        return conn

    def _kept(self) -> _Connection | None:
        """An idle connection still fit to carry a request, or None (the others dropped):
        checked before a byte is written, so a dropped one never saw the request."""
        while self.idle:
            conn = self.idle.pop()
            if conn.open():
                return conn
            self._drop(conn)
        return None

    def _drop(self, conn: _Connection) -> None:
        self.open.discard(conn)
        conn.abort()

    async def send(self, content: bytes, progress: Progress
                   ) -> tuple[int, Mapping[str, str], bytes]:
        if self.gate is None:
            self.gate = asyncio.Semaphore(self.max_connections)
        request = self.requests.get(len(content))
        if request is None:
            if len(self.requests) >= MAX_HEADS:
                self.requests.clear()
            request = self.requests[len(content)] = h11.Request(
                method=b"POST", target=self.target,
                headers=[*self.headers, (b"Content-Length", b"%d" % len(content))])
        limit = self.limits.max_reply_bytes
        async with self.gate:
            conn = self._kept() or await self._connect()
            done = False
            try:
                # an encoded body is smaller than its decoded form: the raw bytes are
                # bounded by the limit (with room for gzip's framing), the decoded ones by
                # the Decoder
                status, headers, raw = await conn.exchange(request, content,
                                                           limit + ENCODING_SLACK, progress)
                done = True
            finally:
                if done and conn.reusable():
                    conn.h11.start_next_cycle()
                    self.idle.append(conn)
                else:
                    self._drop(conn)
        return status, headers, decoded(headers, raw, limit)

    async def aclose(self) -> None:
        for conn in list(self.open):
            conn.abort()
        self.open.clear()
        self.idle.clear()
