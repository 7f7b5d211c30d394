"""A lean HTTP/1.1 client for plain ``http://`` endpoints reached without a proxy (issue 27).

Local model servers (llama.cpp, vLLM, Ollama, a mock in CI) are where a run spends its
requests, and there httpx's layers (httpx → httpcore → anyio → h11, a liveness probe of
the socket per request) cost more CPU than the rest of an attempt together: measured with
``bench/floor_bench.py`` against the plain aiohttp client, they were most of the gap. This
speaks HTTP/1.1 on asyncio's own transports (one :class:`asyncio.Protocol` per connection,
keep-alive, Content-Length, chunked or until-close bodies) and does nothing else.

It keeps the contract of the httpx path in :mod:`dsl.clients.openai` exactly, without
importing httpx (a tenth of a second of start-up): failures are :class:`ConnectFailed`
(from the ``OSError``, as httpx's ``ConnectError``), :class:`ProtocolFailed` (the server
closes mid-reply or speaks something that is not HTTP, as ``RemoteProtocolError``) and
``TimeoutError``; bodies past the limit raise :class:`TooLarge`; gzip and deflate are
decoded by the same bounded :class:`Decoder`. TLS and proxies stay with httpx.
"""

from __future__ import annotations

import asyncio
import zlib
from collections.abc import Mapping
from urllib.parse import urlsplit

MAX_HEAD_BYTES = 64 * 1024  # a status line and headers longer than this are not a reply


class TransportFailed(Exception):
    """The request did not get a reply (httpx's TransportError)."""


class ConnectFailed(TransportFailed):
    """No connection (httpx's ConnectError); its cause is the OSError."""


class ProtocolFailed(TransportFailed):
    """The server closed the connection mid-reply, or what it sent is not HTTP/1.1
    (httpx's RemoteProtocolError)."""


class TooLarge(Exception):
    """The decoded body passed the target's max_reply_bytes."""


class BadEncoding(Exception):
    """The body's Content-Encoding cannot be read; the message completes "the reply ..."."""


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
                raise TooLarge
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
                    raise TooLarge
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
                raise TooLarge
            self.parts.append(out)
            if not self.z.eof:
                raise BadEncoding(f"ends in the middle of its {self.coding} data")
        return b"".join(self.parts)


class _Reply:
    """What one request got: status, headers (names in lower case), the raw body."""

    __slots__ = ("body", "close", "headers", "status")

    def __init__(self, status: int, headers: dict[str, str], body: bytes, close: bool) -> None:
        self.status = status
        self.headers = headers
        self.body = body
        self.close = close


class _Connection(asyncio.Protocol):
    """One keep-alive connection; one request at a time."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buf = bytearray()
        self.waiter: asyncio.Future[_Reply] | None = None
        self.seen: list[bool] | None = None
        self.raw_limit = 0
        self.closed = False
        self.received = False  # a byte of this request's reply has arrived
        self._reset()

    def _reset(self) -> None:
        self.status = 0
        self.headers: dict[str, str] = {}
        self.head_done = False
        self.length = -1  # Content-Length; -1: chunked or until close
        self.chunked = False
        self.until_close = False
        self.keep_alive = True
        self.pos = 0  # chunked: where the next chunk's size line starts
        self.body = bytearray()
        self.chunks_done = False

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        self.received = True
        if self.waiter is None or self.waiter.done():
            return
        try:
            reply = self._parse()
        except (ProtocolFailed, TooLarge) as exc:
            self.waiter.set_exception(exc)
            self._abort()
            return
        if reply is not None:
            self.waiter.set_result(reply)

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        w = self.waiter
        if w is None or w.done():
            return
        if self.head_done and self.until_close:
            w.set_result(_Reply(self.status, self.headers, bytes(self.buf), True))
            return
        if not self.head_done and not self.buf:
            msg = "Server disconnected without sending a response."
        else:
            msg = "peer closed connection without sending complete message body"
        error = ProtocolFailed(msg)
        if exc is not None:
            error.__cause__ = exc
        w.set_exception(error)

    def _abort(self) -> None:
        self.closed = True
        if self.transport is not None:
            self.transport.abort()

    # the reply
    def _parse(self) -> _Reply | None:
        buf = self.buf
        while not self.head_done:
            end = buf.find(b"\r\n\r\n")
            if end < 0:
                if len(buf) > MAX_HEAD_BYTES:
                    raise ProtocolFailed("the reply's headers are too long")
                return None
            self._head(bytes(buf[:end]))
            del buf[:end + 4]
            if 100 <= self.status < 200:  # 100 Continue and the like: the reply follows
                self._reset()
                continue
            self.head_done = True
            if self.seen is not None:
                self.seen.append(True)
        if self.length >= 0:
            if self.length > self.raw_limit:
                raise TooLarge
            if len(buf) < self.length:
                return None
            body = bytes(buf[:self.length])
            del buf[:self.length]
            return _Reply(self.status, self.headers, body, not self.keep_alive)
        if self.until_close:
            if len(buf) > self.raw_limit:
                raise TooLarge
            return None
        return self._chunks()

    def _head(self, head: bytes) -> None:
        lines = head.split(b"\r\n")
        parts = lines[0].split(b" ", 2)
        if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit() \
                or len(parts[1]) != 3:
            raise ProtocolFailed(f"illegal status line: {bytes(lines[0][:80])!r}")
        self.status = int(parts[1])
        headers: dict[str, str] = {}
        for line in lines[1:]:
            name, sep, value = line.partition(b":")
            if not sep or not name or name != name.strip():
                raise ProtocolFailed(f"illegal header line: {bytes(line[:80])!r}")
            key = name.decode("latin-1").lower()
            text = value.strip().decode("latin-1")
            headers[key] = f"{headers[key]}, {text}" if key in headers else text
        self.headers = headers
        connection = headers.get("connection", "").lower()
        self.keep_alive = ("close" not in connection
                           and (parts[0] != b"HTTP/1.0" or "keep-alive" in connection))
        if self.status in (204, 304):
            self.length = 0
        elif "chunked" in headers.get("transfer-encoding", "").lower():
            self.chunked = True
        elif "content-length" in headers:
            length = headers["content-length"].split(",")[0].strip()
            if not length.isdigit():
                raise ProtocolFailed(f"bad Content-Length: {length[:40]!r}")
            self.length = int(length)
        else:
            self.until_close = True
            self.keep_alive = False

    def _chunks(self) -> _Reply | None:
        buf = self.buf
        while not self.chunks_done:
            eol = buf.find(b"\r\n", self.pos)
            if eol < 0:
                if len(buf) - self.pos > 1024:
                    raise ProtocolFailed("bad chunk size line")
                return None
            size_text = bytes(buf[self.pos:eol]).split(b";", 1)[0].strip()
            try:
                size = int(size_text, 16)
            except ValueError:
                raise ProtocolFailed(
                    f"bad chunk size: {size_text[:40]!r}") from None
            if size == 0:
                self.chunks_done = True
                self.pos = eol + 2
                break
            if len(buf) < eol + 2 + size + 2:
                if len(self.body) + len(buf) - self.pos > self.raw_limit:
                    raise TooLarge
                return None
            self.body += buf[eol + 2:eol + 2 + size]
            if len(self.body) > self.raw_limit:
                raise TooLarge
            del buf[:eol + 2 + size + 2]
            self.pos = 0
        # trailers, up to the empty line
        while True:
            eol = buf.find(b"\r\n", self.pos)
            if eol < 0:
                return None
            if eol == self.pos:
                del buf[:eol + 2]
                return _Reply(self.status, self.headers, bytes(self.body),
                              not self.keep_alive)
            self.pos = eol + 2

    async def request(self, data: bytes, raw_limit: int, seen: list[bool]) -> _Reply:
        assert self.transport is not None
        self._reset()
        self.raw_limit = raw_limit
        self.seen = seen
        self.received = bool(self.buf)
        self.waiter = asyncio.get_running_loop().create_future()
        self.transport.write(data)
        if self.buf:  # bytes the server sent before being asked
            self.data_received(b"")
        try:
            return await self.waiter
        finally:
            self.waiter = None
            self.seen = None


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


class LeanPool:
    """A target's connections to one ``http://host:port`` (at most ``max_connections``);
    the same ``send`` as :class:`dsl.clients.openai._Shards`."""

    def __init__(self, url: PlainURL, headers: list[tuple[bytes, bytes]],
                 max_connections: int, connect_timeout_s: float) -> None:
        self.host = url.host
        self.port = url.port
        target = url.target
        self.head = b"POST " + target + b" HTTP/1.1\r\n" + b"".join(
            k + b": " + v + b"\r\n" for k, v in headers)
        self.idle: list[_Connection] = []
        self.open: set[_Connection] = set()
        self.max_connections = max(1, max_connections)
        self.gate: asyncio.Semaphore | None = None
        self.connect_timeout_s = connect_timeout_s

    async def _connect(self) -> _Connection:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(self.connect_timeout_s):
                _, conn = await loop.create_connection(_Connection, self.host, self.port)
        except TimeoutError:
            raise TimeoutError(f"no connection within {self.connect_timeout_s:g} s"
                               ) from None
        except OSError as exc:
            raise ConnectFailed(str(exc) or type(exc).__name__) from exc
        self.open.add(conn)
        return conn

    async def send(self, content: bytes, limit: int, seen: list[bool]
                   ) -> tuple[int, Mapping[str, str], bytes]:
        """Status, headers (lower-case names) and the decoded body (at most ``limit``
        bytes: TooLarge past it). ``seen`` is set once the status line and headers have
        arrived."""
        if self.gate is None:
            self.gate = asyncio.Semaphore(self.max_connections)
        data = self.head + b"Content-Length: " + str(len(content)).encode() + b"\r\n\r\n" \
            + content
        async with self.gate:
            reply = None
            while self.idle:  # a kept-alive connection, unless the server closed it
                conn = self.idle.pop()
                if conn.closed or conn.transport is None or conn.transport.is_closing():
                    self.open.discard(conn)
                    continue
                try:
                    reply = await self._exchange(conn, data, limit, seen)
                    break
                except ProtocolFailed:
                    # closed by the server while idle, before it read the request: try a
                    # new connection (what a browser does); anything else is an error
                    if conn.received or seen:
                        raise
            if reply is None:
                reply = await self._exchange(await self._connect(), data, limit, seen)
        decoder = Decoder(reply.headers.get("content-encoding", ""), limit)
        decoder.feed(reply.body)
        return reply.status, reply.headers, decoder.finish()

    async def _exchange(self, conn: _Connection, data: bytes, limit: int, seen: list[bool]
                        ) -> _Reply:
        done = False
        try:
            # an encoded body is smaller than its decoded form: the raw bytes are bounded
            # by the limit (with room for gzip's framing), the decoded ones by Decoder
            reply = await conn.request(data, limit + 4096, seen)
            done = not reply.close
            return reply
        finally:
            if done and not conn.closed:
                self.idle.append(conn)
            else:
                self.open.discard(conn)
                conn._abort()

    async def aclose(self) -> None:
        for conn in list(self.open):
            conn._abort()
        self.open.clear()
        self.idle.clear()
