"""Cassettes: the key of a request."""

from __future__ import annotations

from dsl.targets.cassette import request_key


def test_cassette_key_ignores_order_but_not_content() -> None:
    a = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "seed": 1}
    b = {"seed": 1, "messages": [{"role": "user", "content": "hi"}], "model": "m"}
    assert request_key(a) == request_key(b)
    assert request_key(a) != request_key({**a, "seed": 2})
    assert request_key(a) == request_key({**a, "stream": False})
