"""dsl/clients/http11.py alone: which URLs the plain path takes, and that nothing escapes
a connection's ``data_received`` (the behaviour both paths share is in
test_transport.py)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from dsl.clients.http11 import PlainPool, plain_url
from dsl.clients.transport import Limits, NotHTTP, Progress


def test_an_error_while_reading_a_reply_ends_that_request_and_nothing_escapes(
        caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever goes wrong inside data_received (here: h11 itself raising something it
    should not) ends the request with a plain error; asyncio logs no "Fatal error"."""
    import h11

    def broken(self: h11.Connection, data: bytes) -> None:
        raise ValueError("invalid literal for int() with base 10: '²'")

    async def go() -> BaseException:
        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            await reader.readuntil(b"\r\n\r\n")
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]")
            await writer.drain()
            await asyncio.sleep(0.5)
            writer.close()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        url = plain_url(f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}/v1")
        assert url is not None
        pool = PlainPool(url, [(b"Host", b"x")], Limits(5, 5, 1000), 1)
        monkeypatch.setattr(h11.Connection, "receive_data", broken)  # this test only
        try:
            await pool.send(b"{}", Progress())
        except NotHTTP as exc:
            return exc
        finally:
            await pool.aclose()
            server.close()
            await server.wait_closed()
        raise AssertionError("no error")

    with caplog.at_level(logging.DEBUG, logger="asyncio"):
        exc = asyncio.run(go())
    assert str(exc) == ("could not be read (ValueError: invalid literal for int() with base "
                        "10: '²')")
    assert not [r for r in caplog.records if "Fatal error" in r.getMessage()]


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
def test_which_urls_the_plain_path_reads(url: str, plain: tuple[str, int, bytes] | None
                                         ) -> None:
    got = plain_url(url)
    assert (None if got is None else (got.host, got.port, got.target)) == plain
