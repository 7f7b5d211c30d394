"""dsl/clients/transport.py: both paths — plain http:// (h11 on Scenarist's own
connections, http11.PlainPool) and https:// (httpx) — against a raw server that sends
exactly the bytes each case scripts. Every framing fault of issue 31 is refused on both,
with the same error and the same words; a connection with unread bytes is never reused;
a request is never sent twice."""

from __future__ import annotations

import asyncio
import gzip
import ssl
from collections.abc import Callable
from dataclasses import dataclass

import pytest

from dsl.clients.http11 import PlainPool
from dsl.clients.openai import open_transport
from dsl.clients.transport import (
    ConnectFailed,
    Decoder,
    Disconnected,
    HttpxTransport,
    Limits,
    NotHTTP,
    Progress,
    TooLarge,
    TransportError,
)
from tests.conftest import PATHS, TLSFiles

Script = Callable[[int, bytes], bytes | None]  # (connection number, request) -> reply bytes


def ok(body: bytes, extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body)


@dataclass
class Exchange:
    results: list[object]  # (status, headers, body) or the exception, per request
    connections: int  # how many the server accepted
    requests: list[bytes]  # what it read
    progress: list[Progress]


async def exchange(path: str, tls: TLSFiles, script: Script, requests: int = 1,
                   limit: int = 1 << 20, close_after: set[int] | None = None,
                   later: bytes = b"") -> Exchange:
    """Send ``requests`` requests one after the other through one transport of ``path``;
    the server answers each as ``script`` says, closes after the requests in
    ``close_after`` and sends ``later`` 20 ms after each reply (bytes nobody asked for)."""
    connections = 0
    seen: list[bytes] = []
    close_after = close_after or set()

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        nonlocal connections
        connections += 1
        n = connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
                body = await reader.readexactly(length)
                seen.append(head + body)
                reply = script(n, head + body)
                if reply is None:
                    break
                writer.write(reply)
                await writer.drain()
                if later:
                    await asyncio.sleep(0.02)
                    writer.write(later)
                if len(seen) in close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    context = None
    if path == "tls":
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(str(tls.server))
    server = await asyncio.start_server(handle, "127.0.0.1", 0, ssl=context)
    port = server.sockets[0].getsockname()[1]
    scheme = "https" if path == "tls" else "http"
    transport = open_transport(f"{scheme}://127.0.0.1:{port}/v1/chat/completions",
                               [(b"Content-Type", b"application/json")],
                               Limits(timeout_s=10, connect_s=5, max_reply_bytes=limit), 4,
                               str(tls.ca) if path == "tls" else None)
    assert isinstance(transport, PlainPool if path == "plain" else HttpxTransport)
    out: list[object] = []
    marks: list[Progress] = []
    try:
        for i in range(requests):
            progress = Progress()
            marks.append(progress)
            try:
                async with asyncio.timeout(10):
                    out.append(await transport.send(b'{"n": %d}' % i, progress))
            except Exception as exc:  # the case says which
                out.append(exc)
            await asyncio.sleep(0.1)  # let a close (or late bytes) from the server arrive
    finally:
        await transport.aclose()
        server.close()
        await server.wait_closed()
    return Exchange(out, connections, seen, marks)


@pytest.fixture(params=PATHS)
def path(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def run(path: str, tls: TLSFiles, script: Script, **kw: object) -> Exchange:
    return asyncio.run(exchange(path, tls, script, **kw))  # type: ignore[arg-type]


def test_a_request_is_http11_with_its_headers_and_body(path: str, tls_files: TLSFiles
                                                       ) -> None:
    got = run(path, tls_files, lambda n, r: ok(b'{"a": 1}'))
    status, headers, body = got.results[0]  # type: ignore[misc]
    assert (status, headers["content-length"], body) == (200, "8", b'{"a": 1}')
    assert got.requests[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\n")
    assert got.requests[0].lower().count(b"\r\nhost: 127.0.0.1:") == 1
    assert got.requests[0].endswith(b'\r\n\r\n{"n": 0}')
    assert (got.progress[0].written, got.progress[0].headers) == (True, True)


def test_keep_alive_uses_one_connection_for_every_request(path: str, tls_files: TLSFiles
                                                          ) -> None:
    got = run(path, tls_files, lambda n, r: ok(b"{}"), requests=3)
    assert [o[2] for o in got.results] == [b"{}"] * 3  # type: ignore[index]
    assert got.connections == 1


def test_connection_close_is_honoured(path: str, tls_files: TLSFiles) -> None:
    got = run(path, tls_files, lambda n, r: ok(b"{}", b"Connection: close\r\n"), requests=2)
    assert [o[0] for o in got.results] == [200, 200]  # type: ignore[index]
    assert got.connections == 2


def test_a_connection_the_server_closed_while_idle_is_replaced(path: str, tls_files: TLSFiles
                                                               ) -> None:
    got = run(path, tls_files, lambda n, r: ok(b"{}"), requests=2, close_after={1})
    if path == "plain":  # seen closed before a byte was written: a new connection
        assert [o[0] for o in got.results] == [200, 200]  # type: ignore[index]
        assert (got.connections, len(got.requests)) == (2, 2)
    else:
        # asyncio's TLS server sends close_notify and waits for the client's before its
        # FIN; httpcore does not see that on an idle connection, writes the request and
        # finds the connection gone. It cannot know the server did not read it: reported
        # as maybe processed, for the retry policy to decide; never sent again by itself
        assert isinstance(got.results[1], Disconnected)
        assert got.results[1].maybe_processed
        assert len(got.requests) == 1


def test_a_request_the_server_read_and_dropped_is_not_sent_again(
        path: str, tls_files: TLSFiles) -> None:
    """The second request reaches the kept-alive connection and the server closes it
    without a word: the transport reports it (it may have been processed), never re-sends."""
    got = run(path, tls_files, lambda n, r: None if b'"n": 1' in r else ok(b"{}"),
              requests=2)
    assert isinstance(got.results[1], Disconnected)
    assert str(got.results[1]) == "Server disconnected without sending a response."
    assert got.results[1].maybe_processed
    assert len(got.requests) == 2


def test_chunked_body_with_extensions_and_trailers(path: str, tls_files: TLSFiles) -> None:
    reply = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"4;ext=1\r\n{\"a\"\r\n5\r\n: 12}\r\n0\r\nX-Trailer: yes\r\n\r\n")
    got = run(path, tls_files, lambda n, r: reply, requests=2)
    assert [o[2] for o in got.results] == [b'{"a": 12}'] * 2  # type: ignore[index]
    assert got.connections == 1


def test_a_body_read_until_the_server_closes(path: str, tls_files: TLSFiles) -> None:
    got = run(path, tls_files, lambda n, r: b"HTTP/1.0 200 OK\r\n\r\n{\"until\": \"close\"}",
              requests=2, close_after={1, 2})
    assert [o[2] for o in got.results] == [b'{"until": "close"}'] * 2  # type: ignore[index]
    assert got.connections == 2


def test_100_continue_before_the_reply(path: str, tls_files: TLSFiles) -> None:
    got = run(path, tls_files, lambda n, r: b"HTTP/1.1 100 Continue\r\n\r\n" + ok(b"[1]"))
    assert got.results[0][2] == b"[1]"  # type: ignore[index]


def test_a_bare_lf_reply_is_read_as_httpx_reads_it(path: str, tls_files: TLSFiles) -> None:
    reply = b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: 2\n\n[]"
    got = run(path, tls_files, lambda n, r: reply, requests=2)
    assert [o[2] for o in got.results] == [b"[]"] * 2  # type: ignore[index]


def test_gzip_is_decoded_and_a_bomb_is_refused_before_it_inflates(
        path: str, tls_files: TLSFiles) -> None:
    body = gzip.compress(b'{"x": "' + b"a" * 5000 + b'"}')
    got = run(path, tls_files, lambda n, r: ok(body, b"Content-Encoding: gzip\r\n"))
    assert got.results[0][2] == b'{"x": "' + b"a" * 5000 + b'"}'  # type: ignore[index]
    bomb = gzip.compress(b"0" * 10_000_000)
    got = run(path, tls_files, lambda n, r: ok(bomb, b"Content-Encoding: gzip\r\n"),
              limit=100_000)
    assert isinstance(got.results[0], TooLarge)


def test_a_body_longer_than_the_limit_is_refused(path: str, tls_files: TLSFiles) -> None:
    got = run(path, tls_files, lambda n, r: ok(b"x" * 20_000), limit=1000)
    assert isinstance(got.results[0], TooLarge)


BODY = b'{"choices": [{"message": {"content": "OK"}}]}'  # 45 bytes: 2d in hex
CHUNKED = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n"

# (name, reply, error, message): issue 31's parser faults, each an otherwise valid reply
FAULTS: list[tuple[str, bytes | None, type[TransportError], str]] = [
    ("chunk size 0x5", CHUNKED + b"\r\n0x2d\r\n" + BODY + b"\r\n0\r\n\r\n", NotHTTP,
     "is not valid HTTP/1.1 (illegal chunk header: bytearray(b'0x2d\\r\\n'))"),
    ("chunk size -1", CHUNKED + b"\r\n-1\r\n2d\r\n" + BODY + b"\r\n0\r\n\r\n", NotHTTP,
     "is not valid HTTP/1.1 (illegal chunk header: bytearray(b'-1\\r\\n'))"),
    ("chunk data without its CRLF", CHUNKED + b"\r\n5\r\n" + BODY[:5] + b"28\r\n" + BODY[5:]
     + b"\r\n0\r\n\r\n", NotHTTP,
     "is not valid HTTP/1.1 (malformed chunk footer: bytearray(b'28') (expected b'\\r\\n'))"),
    ("Content-Length: 2, 5", b"HTTP/1.1 200 OK\r\nContent-Length: 2, 5\r\n\r\n" + BODY, NotHTTP,
     "is not valid HTTP/1.1 (conflicting Content-Length headers)"),
    ("two Content-Lengths", b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 45\r\n\r\n"
     + BODY, NotHTTP, "is not valid HTTP/1.1 (conflicting Content-Length headers)"),
    ("a non-digit Content-Length", b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n" + BODY,
     NotHTTP, "is not valid HTTP/1.1 (bad Content-Length)"),
    ("a superscript two as Content-Length", b"HTTP/1.1 200 OK\r\nContent-Length: \xb2\r\n\r\n"
     + BODY, NotHTTP, "is not valid HTTP/1.1 (bad Content-Length)"),
    ("Transfer-Encoding: gzip, chunked", b"HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked"
     b"\r\n\r\n2d\r\n" + BODY + b"\r\n0\r\n\r\n", NotHTTP,
     "is not valid HTTP/1.1 (Only Transfer-Encoding: chunked is supported)"),
    ("101 taken for 100 Continue", b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n"
     + ok(BODY), NotHTTP, "is not valid HTTP/1.1 (Received server _SWITCH_UPGRADE event "
                          "without a pending proposal)"),
    ("an endless trailer", CHUNKED + b"\r\n2d\r\n" + BODY + b"\r\n0\r\n"
     + b"X-Trailer: yes\r\n" * 20_000, NotHTTP,
     "has a status line and headers, or a trailer, longer than 102,400 bytes"),
    ("headers past the limit", b"HTTP/1.1 200 OK\r\n" + b"X-Header: yes\r\n" * 20_000, NotHTTP,
     "has a status line and headers, or a trailer, longer than 102,400 bytes"),
    ("not HTTP", b"SSH-2.0-OpenSSH_9.6\r\n\r\n", NotHTTP,
     "is not valid HTTP/1.1 (illegal status line: bytearray(b'SSH-2.0-OpenSSH_9.6'))"),
    ("cut short", b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut", Disconnected,
     "peer closed connection without sending complete message body (received 5 bytes, "
     "expected 100)"),
    ("no reply", None, Disconnected, "Server disconnected without sending a response."),
]


@pytest.mark.parametrize(("name", "reply", "error", "message"), FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_each_framing_fault_is_refused_alike_on_both_paths(
        path: str, tls_files: TLSFiles, name: str, reply: bytes | None,
        error: type[TransportError], message: str) -> None:
    got = run(path, tls_files, lambda n, r: reply, close_after={1})
    assert type(got.results[0]) is error, got.results
    assert str(got.results[0]) == message
    assert got.results[0].maybe_processed  # type: ignore[attr-defined]


@pytest.mark.parametrize(("name", "first"), [
    ("a 204 with a body", b"HTTP/1.1 204 No Content\r\nContent-Length: 2\r\n\r\n" + ok(b'"S"')),
    ("a body longer than its Content-Length", ok(b"[1]") + ok(b'"S"')),
    ("bytes after the last chunk", CHUNKED + b"\r\n3\r\n[1]\r\n0\r\n\r\n" + ok(b'"S"')),
])
def test_a_connection_with_unread_bytes_is_never_reused(
        path: str, tls_files: TLSFiles, name: str, first: bytes) -> None:
    """The first reply leaves a whole second reply ("S") behind: the next request goes on a
    new connection and gets its own reply."""
    got = run(path, tls_files, lambda n, r: first if b'"n": 0' in r else ok(b'"own"'),
              requests=2)
    assert got.results[1][2] == b'"own"'  # type: ignore[index]
    assert got.connections == 2


def test_bytes_that_come_while_a_connection_is_idle_retire_it(path: str, tls_files: TLSFiles
                                                              ) -> None:
    got = run(path, tls_files, lambda n, r: ok(b'"own"'), requests=2, later=ok(b'"S"'))
    assert [o[2] for o in got.results] == [b'"own"'] * 2  # type: ignore[index]
    assert got.connections == 2


def test_connection_refused_is_never_sent_and_keeps_its_cause(path: str) -> None:
    scheme = "https" if path == "tls" else "http"

    async def go() -> tuple[BaseException, Progress]:
        transport = open_transport(f"{scheme}://127.0.0.1:9/v1", [], Limits(5, 5, 1000), 1)
        progress = Progress()
        try:
            await transport.send(b"{}", progress)
        except ConnectFailed as exc:
            return exc, progress
        finally:
            await transport.aclose()
        raise AssertionError("no error")

    exc, progress = asyncio.run(go())
    assert not exc.maybe_processed
    assert not progress.written
    cause: BaseException | None = exc
    while cause is not None and not isinstance(cause, ConnectionRefusedError):
        cause = cause.__cause__ or cause.__context__
    assert isinstance(cause, ConnectionRefusedError)


def test_the_decoder_refuses_a_deflate_bomb_and_reads_raw_deflate() -> None:
    import zlib

    d = Decoder("deflate", 1000)
    with pytest.raises(TooLarge):
        d.feed(zlib.compress(b"0" * 100_000))
    raw = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
    d = Decoder("deflate", 1000)
    d.feed(raw.compress(b"[1, 2]") + raw.flush())
    assert d.finish() == b"[1, 2]"
