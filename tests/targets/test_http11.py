"""The lean HTTP/1.1 client (dsl/clients/http11.py) against a raw server that sends exactly
the bytes each case scripts: the framings HTTP/1.1 allows, keep-alive, a connection the
server closed while idle, and each way a reply can be broken."""

from __future__ import annotations

import asyncio
import gzip
from collections.abc import Callable

import pytest

from dsl.clients.http11 import (
    ConnectFailed,
    LeanPool,
    ProtocolFailed,
    TooLarge,
    plain_url,
)

Script = Callable[[int, bytes], bytes | None]  # (connection number, request) -> reply bytes


def ok(body: bytes, extra: bytes = b"") -> bytes:
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: "
            + str(len(body)).encode() + b"\r\n" + extra + b"\r\n" + body)


async def exchange(script: Script, requests: int = 1, limit: int = 1 << 20,
                   close_after: set[int] | None = None
                   ) -> tuple[list[object], int, list[bytes]]:
    """Send ``requests`` requests one after the other through one LeanPool; each result is
    (status, headers, body) or the exception. Returns them, the number of connections the
    server accepted, and the requests it read."""
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
                if len(seen) in close_after:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    url = plain_url(f"http://127.0.0.1:{port}/v1/chat/completions")
    assert url is not None
    pool = LeanPool(url, [(b"Host", f"127.0.0.1:{port}".encode()),
                          (b"Content-Type", b"application/json")], 4, 5.0)
    out: list[object] = []
    try:
        for i in range(requests):
            marks: list[bool] = []
            try:
                out.append(await pool.send(b'{"n": %d}' % i, limit, marks))
            except Exception as exc:  # the case says which
                out.append(exc)
            await asyncio.sleep(0.05)  # let a close by the server arrive
    finally:
        await pool.aclose()
        server.close()
        await server.wait_closed()
    return out, connections, seen


def test_a_request_is_http11_with_its_headers_and_body() -> None:
    out, _, seen = asyncio.run(exchange(lambda n, r: ok(b'{"a": 1}')))
    assert out == [(200, {"content-type": "application/json", "content-length": "8"},
                    b'{"a": 1}')]
    assert seen[0].startswith(b"POST /v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:")
    assert seen[0].endswith(b"Content-Length: 8\r\n\r\n{\"n\": 0}")


def test_keep_alive_uses_one_connection_for_every_request() -> None:
    out, connections, _ = asyncio.run(exchange(lambda n, r: ok(b"{}"), requests=3))
    assert [o[2] for o in out] == [b"{}"] * 3  # type: ignore[index]
    assert connections == 1


def test_connection_close_is_honoured() -> None:
    out, connections, _ = asyncio.run(exchange(
        lambda n, r: ok(b"{}", b"Connection: close\r\n"), requests=2))
    assert [o[0] for o in out] == [200, 200]  # type: ignore[index]
    assert connections == 2


def test_a_connection_the_server_closed_while_idle_is_replaced() -> None:
    out, connections, _ = asyncio.run(exchange(lambda n, r: ok(b"{}"), requests=2,
                                               close_after={1}))
    assert [o[0] for o in out] == [200, 200]  # type: ignore[index]
    assert connections == 2


def test_chunked_body_with_extensions_and_trailers() -> None:
    reply = (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
             b"4;ext=1\r\n{\"a\"\r\n5\r\n: 12}\r\n0\r\nX-Trailer: yes\r\n\r\n")
    out, connections, _ = asyncio.run(exchange(lambda n, r: reply, requests=2))
    assert [o[2] for o in out] == [b'{"a": 12}'] * 2  # type: ignore[index]
    assert connections == 1


def test_a_body_read_until_the_server_closes() -> None:
    out, connections, _ = asyncio.run(exchange(
        lambda n, r: b"HTTP/1.0 200 OK\r\n\r\n{\"until\": \"close\"}", requests=2,
        close_after={1, 2}))
    assert [o[2] for o in out] == [b'{"until": "close"}'] * 2  # type: ignore[index]
    assert connections == 2


def test_100_continue_before_the_reply() -> None:
    out, _, _ = asyncio.run(exchange(lambda n, r: b"HTTP/1.1 100 Continue\r\n\r\n"
                                                  + ok(b"[1]")))
    assert out[0][:1] + out[0][2:] == (200, b"[1]")  # type: ignore[index]


def test_gzip_is_decoded_and_a_bomb_is_refused_before_it_inflates() -> None:
    body = gzip.compress(b'{"x": "' + b"a" * 5000 + b'"}')
    out, _, _ = asyncio.run(exchange(lambda n, r: ok(body, b"Content-Encoding: gzip\r\n")))
    assert out[0][2] == b'{"x": "' + b"a" * 5000 + b'"}'  # type: ignore[index]
    bomb = gzip.compress(b"0" * 10_000_000)
    out, _, _ = asyncio.run(exchange(lambda n, r: ok(bomb, b"Content-Encoding: gzip\r\n"),
                                     limit=100_000))
    assert isinstance(out[0], TooLarge)


def test_a_body_longer_than_the_limit_is_refused_from_its_length() -> None:
    out, _, _ = asyncio.run(exchange(lambda n, r: ok(b"x" * 20_000), limit=1000))
    assert isinstance(out[0], TooLarge)


@pytest.mark.parametrize(("reply", "message"), [
    (b"SSH-2.0-OpenSSH_9.6\r\n\r\n", "illegal status line: b'SSH-2.0-OpenSSH_9.6'"),
    (b"HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n{\"cut", "peer closed connection "
                                                               "without sending complete"),
    (None, "Server disconnected without sending a response."),
    (b"HTTP/1.1 200 OK\r\nContent-Length: ten\r\n\r\n", "bad Content-Length: 'ten'"),
    (b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "bad chunk size"),
])
def test_broken_replies_are_protocol_failures(reply: bytes | None, message: str) -> None:
    out, _, _ = asyncio.run(exchange(lambda n, r: reply, close_after={1}))
    assert isinstance(out[0], ProtocolFailed), out
    assert str(out[0]).startswith(message)


def test_connection_refused_keeps_its_cause() -> None:
    async def go() -> BaseException:
        url = plain_url("http://127.0.0.1:9/v1")
        assert url is not None
        pool = LeanPool(url, [], 1, 5.0)
        try:
            await pool.send(b"{}", 1000, [])
        except ConnectFailed as exc:
            return exc
        raise AssertionError("no error")

    exc = asyncio.run(go())
    assert isinstance(exc.__cause__, ConnectionRefusedError)


@pytest.mark.parametrize(("url", "plain"), [
    ("http://127.0.0.1:8080/v1/chat/completions", ("127.0.0.1", 8080, b"/v1/chat/completions")),
    ("http://localhost/v1?x=1", ("localhost", 80, b"/v1?x=1")),
    ("http://[::1]:9000/v1", ("::1", 9000, b"/v1")),
    ("https://api.openai.com/v1", None),  # TLS: httpx
    ("http://user:pw@host/v1", None),  # credentials in the URL: httpx
    ("http://hôst.example/v1", None),  # IDNA: httpx
    ("http://host:99999/v1", None),  # httpx words the mistake
    ("http://host/a b", None),
])
def test_which_urls_the_lean_client_reads(url: str, plain: tuple[str, int, bytes] | None
                                          ) -> None:
    got = plain_url(url)
    assert (None if got is None else (got.host, got.port, got.target)) == plain
