"""A hostile OpenAI-compatible chat-completions server: every kind of reply an endpoint
should never send, served on purpose, so that probes and tests can check that Scenarist
turns each into a plain error and goes on.

A real HTTP/1.1 server on 127.0.0.1 only (asyncio), started as its own process:

    python bench/hostile/server.py [--port 0] [--bomb-mib 1024] [--tls PEM]

``--tls PEM`` serves the same replies over HTTPS (the private key and certificate chain in
that file), so that the httpx path is probed as the plain one.

It prints ``PORT <n>`` on its first line once it listens. The reply class is chosen by the
first segment of the path, so a target's ``base_url`` picks it and nothing needs scripting:

    base_url: http://127.0.0.1:<port>/<kind>/v1      e.g. /gzip-bomb/v1, /drip/v1

``GET /kinds`` lists every kind with one line about it; ``GET /health`` answers ok. The
server is bounded: a drip stops after ``MAX_DRIP_S``, an endless body after
``MAX_ENDLESS_BYTES``, the gzip bomb is compressed once (``--bomb-mib`` of decoded size)
and the server never reads more than ``MAX_REQUEST_BYTES`` of a request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import sys
import zlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

MAX_REQUEST_BYTES = 16 * 2**20
MAX_DRIP_S = 60.0
DRIP_EVERY_S = 0.5
MAX_ENDLESS_BYTES = 512 * 2**20
DEEP = 100_000  # nesting of the deep-JSON replies (json.loads gives up near 1,000)
SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"  # AWS's documented example key


@dataclass
class Request:
    kind: str
    path: str
    headers: dict[str, str]
    body: Any  # the parsed JSON body, or None
    port: int
    writer: asyncio.StreamWriter
    nth: int = 0  # how many requests came before this one on its connection

    @property
    def step(self) -> int:
        """How many assistant messages the request holds (0: the first model call)."""
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        return sum(1 for m in messages or [] if isinstance(m, dict)
                   and m.get("role") == "assistant")

    @property
    def judged(self) -> bool:
        return isinstance(self.body, dict) and "response_format" in self.body


Handler = Callable[[Request], Awaitable[bool]]  # returns: keep the connection open
KINDS: dict[str, tuple[str, Handler]] = {}


def kind(name: str, doc: str) -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        KINDS[name] = (doc, fn)
        return fn
    return register


# ------------------------------------------------------------------ writing replies

REASONS = {200: "OK", 301: "Moved Permanently", 302: "Found", 307: "Temporary Redirect",
           308: "Permanent Redirect", 400: "Bad Request", 404: "Not Found",
           500: "Internal Server Error"}


def head(status: int, headers: dict[str, str] | None = None, *, length: int | None = None,
         content_type: str = "application/json") -> bytes:
    lines = [f"HTTP/1.1 {status} {REASONS.get(status, 'Status')}",
             f"Content-Type: {content_type}"]
    if length is not None:
        lines.append(f"Content-Length: {length}")
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


async def send(r: Request, status: int, body: bytes, headers: dict[str, str] | None = None,
               content_type: str = "application/json") -> bool:
    r.writer.write(head(status, {"Connection": "keep-alive", **(headers or {})},
                        length=len(body), content_type=content_type) + body)
    await r.writer.drain()
    return True


def completion(content: Any = "OK", *, tool_calls: Any = None, usage: Any = None,
               finish_reason: Any = "stop", **message: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content, **message}
    if tool_calls is not None:
        msg["tool_calls"] = tool_calls
        finish_reason = "tool_calls" if finish_reason == "stop" else finish_reason
    return {"id": "chatcmpl-hostile", "object": "chat.completion", "model": "hostile",
            "choices": [{"index": 0, "message": msg, "finish_reason": finish_reason}],
            "usage": usage if usage is not None else
            {"prompt_tokens": 10, "completion_tokens": 2, "total_tokens": 12}}


async def send_json(r: Request, data: Any, status: int = 200) -> bool:
    return await send(r, status, json.dumps(data).encode())


async def send_text(r: Request, text: str, status: int = 200,
                    headers: dict[str, str] | None = None) -> bool:
    """A body given as JSON *text* (for what json.dumps cannot write: NaN, \\ud800...)."""
    return await send(r, status, text.encode("utf-8", "surrogatepass"), headers)


VERDICT = json.dumps({"verdict": "pass", "score": 1, "confidence": 0.95,
                      "reason": "the answer says OK"})


def call(name: str, arguments: Any, i: int = 0) -> dict[str, Any]:
    return {"id": f"call_{i}", "type": "function",
            "function": {"name": name, "arguments": arguments}}


# ------------------------------------------------------------------ well-behaved kinds

@kind("ok", "a plain answer, OK (and a passing verdict when the judge asks)")
async def ok(r: Request) -> bool:
    return await send_json(r, completion(VERDICT if r.judged else "OK"))


@kind("call-then-answer", "calls the scenario's first tool with {\"s\": \"x\"}, then "
                          "answers OK")
async def call_then_answer(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        return await send_json(r, completion(None, tool_calls=[call(name, '{"s": "x"}')]))
    return await send_json(r, completion("OK"))


# ------------------------------------------------------------------ item 5: unreadable

def _usage(value: str) -> Handler:
    async def handler(r: Request) -> bool:
        content = json.dumps(VERDICT if r.judged else "OK")
        return await send_text(r, '{"choices": [{"index": 0, "message": {"role": '
                                  f'"assistant", "content": {content}}}, "finish_reason": '
                                  f'"stop"}}], "usage": {value}}}')
    return handler


for _name, _value, _doc in [
    ("usage-string", '"lots"', "usage is a string"),
    ("usage-field-string", '{"prompt_tokens": "12", "completion_tokens": "many"}',
     "usage's counts are strings"),
    ("usage-infinity", '{"prompt_tokens": Infinity, "completion_tokens": 1}',
     "usage.prompt_tokens is Infinity"),
    ("usage-nan", '{"prompt_tokens": 1, "completion_tokens": NaN}',
     "usage.completion_tokens is NaN"),
    ("usage-negative", '{"prompt_tokens": 10, "completion_tokens": -1000000000}',
     "a negative token count (would bypass --max-tokens)"),
    ("usage-huge", '{"prompt_tokens": 1000000000000000000000000000000, '
                   '"completion_tokens": 1}', "10^30 tokens"),
    ("usage-float-huge", '{"prompt_tokens": 1e300, "completion_tokens": 1}',
     "1e300 tokens"),
    ("usage-bool", '{"prompt_tokens": true, "completion_tokens": 1}', "a boolean count"),
]:
    KINDS[_name] = (_doc, _usage(_value))


def _static(body: Any, doc: str, name: str) -> None:
    async def handler(r: Request) -> bool:
        if isinstance(body, str):
            return await send_text(r, body)
        return await send_json(r, body)
    KINDS[name] = (doc, handler)


_static(completion([{"type": "image_url", "image_url": {"url": "http://x/y.png"}}]),
        "a content part that is not text (an image)", "content-image")
_static(completion([5, "x"]), "content parts that are not objects", "content-parts-numbers")
_static(completion(5), "content is a number", "content-number")
_static(completion({"text": "hi"}), "content is an object", "content-object")
_static(completion(None, tool_calls=5), "tool_calls: 5", "tool-calls-number")
_static(completion(None, tool_calls=["x", 5]), "tool_calls entries that are not objects",
        "tool-calls-strings")
_static(completion(None, tool_calls={"a": 1}), "tool_calls is an object",
        "tool-calls-object")
_static(completion(None, tool_calls=[{"id": "c", "type": "function", "function": "x"}]),
        "a tool call whose function is a string", "tool-call-function-string")
_static(completion(None, tool_calls=[call(5, "{}")]), "a tool call whose name is a number",
        "tool-call-name-number")
_static(completion(None, tool_calls=[call("t", 5)]), "tool call arguments that are a number",
        "tool-call-args-number")
_static(completion(None, tool_calls=[{"id": {"x": 1}, "type": "function",
                                       "function": {"name": "t", "arguments": "{}"}}]),
        "a tool call whose id is an object", "tool-call-id-object")
_static(completion("OK", finish_reason={"why": ["deep"]}), "finish_reason is an object",
        "finish-reason-object")
_static({"choices": [5]}, "choices that are not objects", "choices-numbers")
_static({"choices": {"0": completion()["choices"][0]}}, "choices is an object",
        "choices-object")
_static({"choices": [{"message": "hi"}]}, "a message that is a string", "message-string")
_static({"choices": []}, "no choices", "choices-empty")
_static([], "the body is a JSON list", "body-list")
_static("null", "the body is null", "body-null")
_static({"error": {"message": "x" * 5_000_000}}, "an error with a 5 MB message",
        "error-huge")
_static({"error": 5}, "an error that is a number", "error-number")
_static('{"choices": [{"index": 0, "message": {"role": "assistant", "content": '
        '"bad \\ud800 text"}, "finish_reason": "stop"}]}',
        "a lone surrogate in the answer (escaped)", "surrogate-content")
_static('{"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, '
        '"finish_reason": "stop"}], "id": "\\ud800"}',
        "a lone surrogate in a field Scenarist does not read (written to cassettes)",
        "surrogate-elsewhere")
_static('{"choices": [{"index": 0, "message": {"role": "assistant", "content": "\\ud83d'
        '\\ude00 fine"}, "finish_reason": "stop"}]}',
        "an escaped surrogate *pair* (an emoji): valid, must pass", "surrogate-pair-ok")


@kind("surrogate-args", "tool-call arguments that decode to a lone surrogate")
async def surrogate_args(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        return await send_json(r, completion(None, tool_calls=[call(name, '{"s": "\\ud800"}')]))
    return await send_json(r, completion("OK"))


@kind("surrogate-tool-name", "a call to a tool whose name holds a lone surrogate, then OK")
async def surrogate_tool_name(r: Request) -> bool:
    if r.step == 0:
        return await send_text(r, '{"choices": [{"index": 0, "message": {"role": "assistant", '
                                  '"content": null, "tool_calls": [{"id": "c", "type": '
                                  '"function", "function": {"name": "t\\udfff", "arguments": '
                                  '"{}"}}]}, "finish_reason": "tool_calls"}]}')
    return await send_json(r, completion("OK"))


@kind("surrogate-bytes", "raw UTF-8-encoded surrogate bytes (ED A0 80) in the answer")
async def surrogate_bytes(r: Request) -> bool:
    body = (b'{"choices": [{"index": 0, "message": {"role": "assistant", "content": "x'
            b'\xed\xa0\x80"}, "finish_reason": "stop"}]}')
    return await send(r, 200, body)


@kind("not-utf8", "a body in Latin-1")
async def not_utf8(r: Request) -> bool:
    return await send(r, 200, json.dumps(completion("caf\u00e9"), ensure_ascii=False)
                      .encode("latin-1"))


def _nest(depth: int, inner: str = "1") -> str:
    return "[" * depth + inner + "]" * depth


_static('{"choices": ' + _nest(DEEP) + "}", f"{DEEP:,}-deep JSON", "deep-json")
_static('{"choices": [{"index": 0, "message": {"role": "assistant", "content": "OK"}, '
        '"finish_reason": "stop"}], "extra": ' + _nest(900) + "}",
        "900-deep JSON in a field Scenarist does not read (json.loads reads it)",
        "deep-json-900")


@kind("deep-args", f"tool-call arguments nested {DEEP:,} deep")
async def deep_args(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        args = '{"s": ' + _nest(DEEP) + "}"
        return await send_json(r, completion(None, tool_calls=[call(name, args)]))
    return await send_json(r, completion("OK"))


@kind("deep-args-object", "tool-call arguments given as an object, nested 900 deep")
async def deep_args_object(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        text = ('{"choices": [{"index": 0, "message": {"role": "assistant", "content": null, '
                '"tool_calls": [{"id": "c", "type": "function", "function": {"name": '
                f'"{name}", "arguments": {{"s": {_nest(900)}}}}}}}]}}, "finish_reason": '
                '"tool_calls"}]}')
        return await send_text(r, text)
    return await send_json(r, completion("OK"))


@kind("deep-text", "an answer that is 100,000-deep JSON as text (checks and the judge "
                   "may parse it)")
async def deep_text(r: Request) -> bool:
    return await send_json(r, completion(_nest(DEEP)))


@kind("deep-object-text", "an answer that is a 100,000-deep JSON object as text")
async def deep_object_text(r: Request) -> bool:
    return await send_json(r, completion('{"a": ' * DEEP + "1" + "}" * DEEP))


# ------------------------------------------------------------------ encodings, size

_BOMBS: dict[tuple[str, int], bytes] = {}


def bomb(encoding: str, mib: int) -> bytes:
    """A reply that decodes to ``mib`` MiB of JSON whitespace, compressed once."""
    key = (encoding, mib)  # compressed once (about 3 s for 1 GiB), then reused
    if key not in _BOMBS:
        wbits = 31 if encoding == "gzip" else 15
        c = zlib.compressobj(9, zlib.DEFLATED, wbits)
        chunk = b" " * 2**20
        parts = [c.compress(b'{"choices": [{"message": {"content": "')]
        parts += [c.compress(chunk) for _ in range(mib)]
        parts += [c.compress(b'"}}]}'), c.flush()]
        _BOMBS[key] = b"".join(parts)
    return _BOMBS[key]


BOMB_MIB = 1024


@kind("gzip-bomb", "a gzip body of about 1 MB that decodes to --bomb-mib MiB")
async def gzip_bomb(r: Request) -> bool:
    await send(r, 200, bomb("gzip", BOMB_MIB), {"Content-Encoding": "gzip"})
    return False


@kind("deflate-bomb", "the same bomb as Content-Encoding: deflate")
async def deflate_bomb(r: Request) -> bool:
    await send(r, 200, bomb("deflate", BOMB_MIB), {"Content-Encoding": "deflate"})
    return False


@kind("gzip-ok", "a correct gzip-encoded completion (must pass)")
async def gzip_ok(r: Request) -> bool:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    data = c.compress(json.dumps(completion(VERDICT if r.judged else "OK")).encode())
    return await send(r, 200, data + c.flush(), {"Content-Encoding": "gzip"})


@kind("bad-gzip", "Content-Encoding: gzip on a body that is not gzip")
async def bad_gzip(r: Request) -> bool:
    return await send(r, 200, b"this is not gzip at all", {"Content-Encoding": "gzip"})


@kind("truncated-gzip", "a gzip body cut in the middle")
async def truncated_gzip(r: Request) -> bool:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    data = c.compress(json.dumps(completion("x" * 10_000)).encode()) + c.flush()
    return await send(r, 200, data[: len(data) // 2], {"Content-Encoding": "gzip"})


@kind("unknown-encoding", "Content-Encoding: x-hostile")
async def unknown_encoding(r: Request) -> bool:
    return await send(r, 200, json.dumps(completion()).encode(),
                      {"Content-Encoding": "x-hostile"})


@kind("double-gzip", "Content-Encoding: gzip, gzip (a bomb in a bomb)")
async def double_gzip(r: Request) -> bool:
    c = zlib.compressobj(9, zlib.DEFLATED, 31)
    data = c.compress(bomb("gzip", BOMB_MIB)) + c.flush()
    await send(r, 200, data, {"Content-Encoding": "gzip, gzip"})
    return False


_HUGE: list[bytes] = []


@kind("huge-body", "a correct completion whose answer is 20 MB (over the 8 MiB default)")
async def huge_body(r: Request) -> bool:
    if not _HUGE:
        _HUGE.append(json.dumps(completion("A" * 20_000_000)).encode())
    await send(r, 200, _HUGE[0])
    return False


@kind("endless", "a chunked body that never ends (stops after 512 MiB)")
async def endless(r: Request) -> bool:
    r.writer.write(head(200, {"Transfer-Encoding": "chunked"}))
    r.writer.write(b'7\r\n{"a": "\r\n')
    chunk = b" " * 2**20
    framed = f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n"
    sent = 0
    while sent < MAX_ENDLESS_BYTES and not r.writer.transport.is_closing():
        r.writer.write(framed)
        await r.writer.drain()
        sent += len(chunk)
    return False


@kind("huge-headers", "a 1 MB header line")
async def huge_headers(r: Request) -> bool:
    body = json.dumps(completion()).encode()
    r.writer.write(head(200, {"X-Big": "a" * 2**20}, length=len(body)) + body)
    await r.writer.drain()
    return False


@kind("length-mismatch", "Content-Length promises more than is sent, then the socket closes")
async def length_mismatch(r: Request) -> bool:
    body = json.dumps(completion()).encode()
    r.writer.write(head(200, length=len(body) + 100) + body)
    await r.writer.drain()
    return False


# ------------------------------------------------------------------ issue 31: framing
# An otherwise valid completion, framed the ways HTTP/1.1 forbids (h11 refuses each), and
# replies that leave bytes behind on a kept-alive connection: a client that read them as
# the next request's reply would judge a later attempt on an earlier answer.

def _body(r: Request, content: str = "OK") -> bytes:
    return json.dumps(completion(VERDICT if r.judged else content)).encode()


def _framed(r: Request, head_lines: list[bytes], payload: bytes) -> None:
    r.writer.write(b"\r\n".join([b"HTTP/1.1 200 OK", b"Content-Type: application/json",
                                  *head_lines]) + b"\r\n\r\n" + payload)


async def _sent(r: Request) -> bool:
    await r.writer.drain()
    return False


@kind("chunk-0x", "a chunked completion whose chunk size is written 0x<hex>")
async def chunk_0x(r: Request) -> bool:
    body = _body(r)
    _framed(r, [b"Transfer-Encoding: chunked"],
            f"0x{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    return await _sent(r)


@kind("chunk-negative", "a chunk size of -1 before the completion")
async def chunk_negative(r: Request) -> bool:
    body = _body(r)
    _framed(r, [b"Transfer-Encoding: chunked"],
            b"-1\r\n" + f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n\r\n")
    return await _sent(r)


@kind("chunk-no-crlf", "chunk data without the CRLF that ends it")
async def chunk_no_crlf(r: Request) -> bool:
    body = _body(r)
    half = len(body) // 2
    _framed(r, [b"Transfer-Encoding: chunked"],
            f"{half:x}\r\n".encode() + body[:half]
            + f"{len(body) - half:x}\r\n".encode() + body[half:] + b"\r\n0\r\n\r\n")
    return await _sent(r)


@kind("chunk-lf-end", "chunks ended by a bare LF instead of CRLF (a sloppy chunk ending)")
async def chunk_lf_end(r: Request) -> bool:
    body = _body(r)
    _framed(r, [b"Transfer-Encoding: chunked"],
            f"{len(body):x}\r\n".encode() + body + b"\n0\r\n\r\n")
    return await _sent(r)


@kind("length-conflict", "Content-Length: N, N+5 (two values in one header)")
async def length_conflict(r: Request) -> bool:
    body = _body(r)
    _framed(r, [f"Content-Length: {len(body)}, {len(body) + 5}".encode()], body)
    return await _sent(r)


@kind("length-twice", "two Content-Length headers of different values (2 and the body's)")
async def length_twice(r: Request) -> bool:
    body = _body(r)
    _framed(r, [b"Content-Length: 2", f"Content-Length: {len(body)}".encode()], body)
    return await _sent(r)


@kind("length-not-digit", "Content-Length: +N")
async def length_not_digit(r: Request) -> bool:
    body = _body(r)
    _framed(r, [f"Content-Length: +{len(body)}".encode()], body)
    return await _sent(r)


@kind("length-superscript", "Content-Length: \\xb2 (a superscript two in Latin-1: "
                            "str.isdigit() says it is a digit, int() refuses it)")
async def length_superscript(r: Request) -> bool:
    _framed(r, [b"Content-Length: \xb2"], _body(r))
    return await _sent(r)


@kind("te-gzip-chunked", "Transfer-Encoding: gzip, chunked over a gzipped, chunked completion")
async def te_gzip_chunked(r: Request) -> bool:
    c = zlib.compressobj(6, zlib.DEFLATED, 31)
    data = c.compress(_body(r)) + c.flush()
    _framed(r, [b"Transfer-Encoding: gzip, chunked"],
            f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n\r\n")
    return await _sent(r)


@kind("status-101", "101 Switching Protocols nobody asked for, then a completion")
async def status_101(r: Request) -> bool:
    body = _body(r)
    r.writer.write(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\n\r\n")
    _framed(r, [f"Content-Length: {len(body)}".encode()], body)
    return await _sent(r)


@kind("endless-trailer", "a chunked completion whose trailer never ends (stops after "
                         "512 MiB)")
async def endless_trailer(r: Request) -> bool:
    body = _body(r)
    _framed(r, [b"Transfer-Encoding: chunked"],
            f"{len(body):x}\r\n".encode() + body + b"\r\n0\r\n")
    line = b"X-Trailer: " + b"t" * 1000 + b"\r\n"
    block = line * 1000
    sent = 0
    while sent < MAX_ENDLESS_BYTES and not r.writer.transport.is_closing():
        r.writer.write(block)
        await r.writer.drain()
        sent += len(block)
    return False


@kind("endless-headers", "a status line, then headers that never end (stops after 512 MiB)")
async def endless_headers(r: Request) -> bool:
    r.writer.write(b"HTTP/1.1 200 OK\r\n")
    block = (b"X-Header: " + b"h" * 1000 + b"\r\n") * 1000
    sent = 0
    while sent < MAX_ENDLESS_BYTES and not r.writer.transport.is_closing():
        r.writer.write(block)
        await r.writer.drain()
        sent += len(block)
    return False


@kind("bare-lf", "a correct completion whose status line and headers end in bare LF "
                 "(httpx reads it: must pass)")
async def bare_lf(r: Request) -> bool:
    body = _body(r)
    r.writer.write(b"HTTP/1.1 200 OK\nContent-Type: application/json\nContent-Length: "
                   + str(len(body)).encode() + b"\nConnection: keep-alive\n\n" + body)
    await r.writer.drain()
    return True


def _smuggled(r: Request) -> bytes:
    """A whole reply that answers SMUGGLED: what a desynchronised client reads next."""
    body = _body(r, "SMUGGLED")
    return head(200, {"Connection": "keep-alive"}, length=len(body)) + body


@kind("extra-bytes", "calls the first tool in a reply followed by a second, unasked reply "
                     "(SMUGGLED), then answers OK: must pass with the answer OK")
async def extra_bytes(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        data = json.dumps(completion(None, tool_calls=[call(name, '{"s": "x"}')])).encode()
        r.writer.write(head(200, {"Connection": "keep-alive"}, length=len(data)) + data
                       + _smuggled(r))
        await r.writer.drain()
        return True
    return await send_json(r, completion("OK"))


@kind("no-content-body", "the first request of each connection gets 204 No Content with a "
                         "whole reply (SMUGGLED) as its body; the next ones OK")
async def no_content_body(r: Request) -> bool:
    if r.nth == 0:
        smuggled = _smuggled(r)
        r.writer.write(head(204, {"Connection": "keep-alive"}, length=len(smuggled))
                       + smuggled)
        await r.writer.drain()
        return True
    return await ok(r)


# ------------------------------------------------------------------ item 7: drips

@kind("drip", "a correct completion, one byte every half second (stops after 60 s)")
async def drip(r: Request) -> bool:
    body = json.dumps(completion("OK")).encode()
    r.writer.write(head(200, length=len(body)))
    await r.writer.drain()
    await _drip(r, body)
    return False


@kind("drip-headers", "the status line and headers one byte every half second")
async def drip_headers(r: Request) -> bool:
    body = json.dumps(completion("OK")).encode()
    await _drip(r, head(200, length=len(body)) + body)
    return False


async def _drip(r: Request, data: bytes) -> None:
    loop = asyncio.get_running_loop()
    until = loop.time() + MAX_DRIP_S
    for i in range(len(data)):
        if loop.time() > until or r.writer.transport.is_closing():
            return
        r.writer.write(data[i:i + 1])
        await r.writer.drain()
        await asyncio.sleep(DRIP_EVERY_S)


@kind("hang", "never answers (stops after 60 s)")
async def hang(r: Request) -> bool:
    await asyncio.sleep(MAX_DRIP_S)
    return False


# ------------------------------------------------------------------ item 9: redirects

SCHEME = "http"  # https with --tls


def _location(r: Request, to: str) -> str:
    return f"{SCHEME}://127.0.0.1:{r.port}/{to}/v1/chat/completions"


@kind("redirect-302-json", "302 to /ok/, with a correct completion as its body")
async def redirect_302_json(r: Request) -> bool:
    return await send(r, 302, json.dumps(completion("redirected")).encode(),
                      {"Location": _location(r, "ok")})


@kind("redirect-307", "307 to /ok/, with an empty body")
async def redirect_307(r: Request) -> bool:
    return await send(r, 307, b"", {"Location": _location(r, "ok")})


@kind("redirect-301-no-location", "301 without a Location header")
async def redirect_301(r: Request) -> bool:
    return await send(r, 301, b"")


@kind("not-modified-304", "304 Not Modified (an answer to a conditional request) to a POST")
async def not_modified_304(r: Request) -> bool:
    return await send(r, 304, b"")


@kind("multiple-choices-300", "300 Multiple Choices with a JSON body and no Location")
async def multiple_choices_300(r: Request) -> bool:
    return await send(r, 300, json.dumps({"choices": ["a", "b"]}).encode())


@kind("redirect-hostile-location", "302 to a 100 KB Location full of control characters")
async def redirect_hostile(r: Request) -> bool:
    return await send(r, 302, b"", {"Location": "http://x/" + "\x1b[31m" * 20_000})


# ------------------------------------------------------------------ the lead's classes

@kind("secret-args", "calls the first tool with {\"aws_secret_key\": <AWS example key>}, "
                     "then answers (redaction must keep results.jsonl valid JSON)")
async def secret_args(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        return await send_json(r, completion(None, tool_calls=[
            call(name, json.dumps({"aws_secret_key": SECRET, "s": "x"}))]))
    return await send_json(r, completion("OK"))


@kind("number-args", "calls the first tool with {\"n\": 12345678} (meets a user pattern "
                     "like \\b\\d{8}\\b)")
async def number_args(r: Request) -> bool:
    if r.step == 0:
        tools = r.body.get("tools") if isinstance(r.body, dict) else None
        name = tools[0]["function"]["name"] if tools else "tool"
        return await send_json(r, completion(None, tool_calls=[
            call(name, '{"n": 12345678, "s": "x"}')]))
    return await send_json(r, completion("OK"))


def _auth(r: Request) -> str:
    value = r.headers.get("authorization", "")
    return value.removeprefix("Bearer ")


@kind("echo-key", "answers with the API key it was sent")
async def echo_key(r: Request) -> bool:
    return await send_json(r, completion(f"your key is {_auth(r)}"))


@kind("echo-key-status", "a malformed status line that holds the API key")
async def echo_key_status(r: Request) -> bool:
    r.writer.write(f"HTTP/1.1 2{_auth(r)} broken\r\n\r\n".encode("latin-1", "replace"))
    await r.writer.drain()
    return False


@kind("echo-key-500", "HTTP 500 whose body holds the API key")
async def echo_key_500(r: Request) -> bool:
    return await send(r, 500, f"upstream rejected key {_auth(r)}".encode(),
                      content_type="text/plain")


@kind("slow-ok", "a plain answer after 300 ms (for lock and resume probes)")
async def slow_ok(r: Request) -> bool:
    await asyncio.sleep(0.3)
    return await ok(r)


# ------------------------------------------------------------------ the server

async def handle(port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
                 ) -> None:
    nth = 0
    try:
        while True:
            raw_head = await reader.readuntil(b"\r\n\r\n")
            lines = raw_head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers: dict[str, str] = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = min(int(headers.get("content-length", "0") or 0), MAX_REQUEST_BYTES)
            raw = await reader.readexactly(length) if length else b""
            try:
                body = json.loads(raw) if raw else None
            except ValueError:
                body = None
            name = path.strip("/").split("/", 1)[0]
            r = Request(name, path, headers, body, port, writer, nth)
            nth += 1
            if path == "/health":
                keep = await send(r, 200, b'{"status": "ok"}')
            elif path == "/kinds":
                keep = await send_json(r, {k: doc for k, (doc, _) in sorted(KINDS.items())})
            elif name in KINDS and method == "POST":
                keep = await KINDS[name][1](r)
            else:
                keep = await send(r, 404, json.dumps({"error": f"no kind {name!r}"}).encode())
            if not keep:
                return
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError,
            ValueError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def serve(port: int, tls: str | None = None) -> None:
    actual: list[int] = []
    context = None
    if tls:
        import ssl

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(tls)
    server = await asyncio.start_server(
        lambda r, w: handle(actual[0], r, w), "127.0.0.1", port, limit=MAX_REQUEST_BYTES,
        ssl=context)
    actual.append(server.sockets[0].getsockname()[1])
    print(f"PORT {actual[0]}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    global BOMB_MIB, SCHEME
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--bomb-mib", type=int, default=BOMB_MIB,
                    help="decoded size of the gzip and deflate bombs (default 1024)")
    ap.add_argument("--tls", help="serve HTTPS: a PEM file with the key and certificate chain")
    a = ap.parse_args(argv)
    BOMB_MIB = a.bomb_mib
    SCHEME = "https" if a.tls else "http"
    # writes to a TLS connection the client dropped are logged once per write ("socket.send()
    # raised exception."): the endless replies stop at their cap, quietly
    logging.getLogger("asyncio").setLevel(logging.ERROR)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(a.port, a.tls))


if __name__ == "__main__":
    sys.exit(main())
