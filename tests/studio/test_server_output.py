"""What the studio prints while it serves: its address and its stop, and nothing a client
sends — a request that is not HTTP leaves no uvicorn log line ("Invalid HTTP request
received.") in the person's terminal."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from .conftest import make_suite


def test_a_request_that_is_not_http_prints_nothing(studio_on: Any, tmp_path: Path) -> None:
    studio = studio_on(make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1"))
    for garbage in (b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03 not http\r\n\r\n",
                    b"GET / HTTP/1.1\r\nHost: \x1b[2J\r\n\r\n", b"NOT A REQUEST\r\n\r\n"):
        with socket.create_connection(("127.0.0.1", studio.port)) as raw:
            raw.sendall(garbage)
            raw.settimeout(10)
            raw.recv(1000)
    with studio.client() as c:
        assert c.get("/api/suite").status_code == 200
    code, said = studio.stop()
    assert code == 0
    assert set(said.splitlines()) <= {"Press Ctrl-C to stop it.", "Studio stopped."}, said
    assert said.splitlines()[-1] == "Studio stopped."
