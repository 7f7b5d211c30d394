"""A lean OpenAI-compatible server for benchmarks: every chat completion answers after a
fixed delay, a 2-step tool loop (first a call to ``lookup_order`` with the order number
found in the user's message, then a text answer), with optional random 429s and 500s.

It does as little as it can per request (asyncio.Protocol, no JSON parsing of the body,
answers prepared in advance), so that on a 2-core machine the benchmark measures the client,
not the server. Prints ``PORT <n>`` when it listens.

    python bench/bench_server.py [--port 0] [--delay-ms 50] [--throttle-rate 0] [--fail-rate 0]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import re

ORDER = re.compile(rb"order (\d+)")


def response(status: int, reason: str, body: bytes, extra: str = "") -> bytes:
    return (f"HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}Connection: keep-alive\r\n\r\n"
            ).encode() + body


def tool_call(order: bytes) -> bytes:
    args = json.dumps({"order": order.decode()})
    body = {"id": "b", "object": "chat.completion", "model": "bench",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_1", "type": "function",
                    "function": {"name": "lookup_order", "arguments": args}}]}}],
            "usage": {"prompt_tokens": 120, "completion_tokens": 20, "total_tokens": 140}}
    return response(200, "OK", json.dumps(body).encode())


ANSWER = response(200, "OK", json.dumps({
    "id": "b", "object": "chat.completion", "model": "bench",
    "choices": [{"index": 0, "finish_reason": "stop", "message": {
        "role": "assistant", "content": "Your order has shipped and should arrive on 2 "
                                        "October."}}],
    "usage": {"prompt_tokens": 180, "completion_tokens": 15, "total_tokens": 195}}).encode())
THROTTLED = response(429, "Too Many Requests", b'{"error":"slow down"}', "Retry-After: 0.2\r\n")
FAILED = response(500, "Internal Server Error", b"<html><body>Internal error</body></html>")


class Handler(asyncio.Protocol):
    def __init__(self, opts: argparse.Namespace) -> None:
        self.opts = opts
        self.buf = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.buf += data
        while True:
            head_end = self.buf.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buf[:head_end].lower()
            i = head.find(b"content-length:")
            length = int(head[i + 15:head.find(b"\r\n", i) if head.find(b"\r\n", i) > 0
                              else None]) if i >= 0 else 0
            end = head_end + 4 + length
            if len(self.buf) < end:
                return
            body = self.buf[head_end + 4:end]
            self.buf = self.buf[end:]
            asyncio.get_running_loop().call_later(self.opts.delay_ms / 1000, self.answer,
                                                  body)

    def answer(self, body: bytes) -> None:
        if self.transport is None or self.transport.is_closing():
            return
        r = random.random()  # fault injection, not cryptography
        if r < self.opts.throttle_rate:
            out = THROTTLED
        elif r < self.opts.throttle_rate + self.opts.fail_rate:
            out = FAILED
        elif b'"role":"assistant"' in body or b'"role": "assistant"' in body:
            out = ANSWER
        else:
            m = ORDER.search(body)
            out = tool_call(m.group(1) if m else b"0")
        self.transport.write(out)


async def serve(opts: argparse.Namespace) -> None:
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: Handler(opts), "127.0.0.1", opts.port,
                                      backlog=1024)
    print(f"PORT {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, default=50)
    ap.add_argument("--throttle-rate", type=float, default=0.0)
    ap.add_argument("--fail-rate", type=float, default=0.0)
    asyncio.run(serve(ap.parse_args()))


if __name__ == "__main__":
    main()
