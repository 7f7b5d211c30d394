"""A scripted OpenAI-compatible chat-completions server, for tests and benchmarks.

A real HTTP/1.1 server on 127.0.0.1 (asyncio, keep-alive), started as its own process:

    python tests/fakeserver.py [--port 0] [--delay-ms 50] [--script FILE] [--tls PEM]

``--tls PEM`` serves HTTPS with the private key and certificate chain in that file (the
tests make one with trustme: the httpx path of dsl/clients/transport.py).

It prints ``PORT <n>`` on its first line once it listens. Tests script it over HTTP:

* ``POST /_script`` — replace the script (JSON, below) and clear the request log;
* ``GET /_requests`` — every chat request received since: ``[{headers, body}, ...]``;
* ``GET /health``;
* ``GET /v1/models`` — the models it serves, as OpenAI's endpoint lists them: the
  script's ``models`` (default ``["scripted-model"]``); with ``"models_status": 500`` it
  answers that status instead.

A script has ``rules``; the first rule whose ``match`` is found in the request's last user
message (or in the whole request, with ``match_any``) answers. ``replies[i]`` answers the
request that already holds ``i`` assistant messages (the last reply repeats);
``by_seed: {"3": [...]}`` overrides per seed; ``first: [...]`` is consumed one reply per
request before anything else (retry and fault tests). With ``"per_turn": true``,
``replies[i]`` answers the request that holds ``i`` assistant messages after its last user
message (a conversation: each turn starts again at 0). A reply is one of::

    {"text": "..."}                                   an answer
    {"tool_calls": [{"name": "t", "arguments": {...} | "raw text"}], "text": "..."}
    {"status": 500, "body": "<html>...", "headers": {"Retry-After": "1"}}
    {"json": {...}}                                   this body, as it is (200)
    {"raw": "not json"}                               this body as text (200)
    {"hang": true}                                    never answer
    {"close": true}                                   close the socket without answering
    {"truncate": true}                                send half a response, then close
    {"raw_http": "HTTP/1.1 2OO ..."}                  these bytes as the whole response,
                                                      then close (a malformed status line)

A text reply may add ``"top_logprobs": {"Yes": 0.85, " yes": 0.05, "no": 0.1}``: the first
reply token's alternatives with their probabilities (sent as natural-log ``logprobs`` in
the OpenAI shape, the likeliest as the chosen token), for the judge's logprobs mode.
Any reply may add ``"delay_ms"``. Usage tokens are counted roughly (4 characters a token).
In tool-call arguments given as text, ``{{user_number}}`` becomes the first number in the
last user message. ``"faults": {"throttle_rate": 0.05, "fail_rate": 0.02}`` answers that
share of chat requests with 429 (``Retry-After: 0.2``) or 500, at random (benchmarks).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import math
import random
import re
import sys
from typing import Any

DEFAULT_SCRIPT: dict[str, Any] = {
    "rules": [],
    "default": [{"text": "OK"}],
}


class State:
    def __init__(self, script: dict[str, Any], delay_ms: float) -> None:
        self.script = script
        self.delay_ms = delay_ms
        self.requests: list[dict[str, Any]] = []
        self.consumed: dict[int, int] = {}
        self.counter = 0


def _last_user(body: dict[str, Any]) -> str:
    for m in reversed(body.get("messages") or []):
        if m.get("role") == "user":
            c = m.get("content")
            return c if isinstance(c, str) else json.dumps(c)
    return ""


def choose(state: State, body: dict[str, Any]) -> dict[str, Any]:
    faults = state.script.get("faults") or {}
    if faults:
        r = random.random()
        throttle = float(faults.get("throttle_rate", 0))
        if r < throttle:
            return {"status": 429, "body": {"error": "slow down"},
                    "headers": {"Retry-After": str(faults.get("retry_after", "0.2"))}}
        if r < throttle + float(faults.get("fail_rate", 0)):
            return {"status": 500, "body": "<html><body>Internal error</body></html>"}
    user = _last_user(body)
    whole = json.dumps(body, ensure_ascii=False)
    messages = body.get("messages") or []
    step = sum(1 for m in messages if m.get("role") == "assistant")
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    in_turn = sum(1 for m in messages[last_user + 1:] if m.get("role") == "assistant")
    for i, rule in enumerate(state.script.get("rules", [])):
        needle = rule.get("match")
        if needle is not None and needle not in user:
            continue
        if rule.get("match_any") is not None and rule["match_any"] not in whole:
            continue
        first = rule.get("first") or []
        used = state.consumed.get(i, 0)
        if used < len(first):
            state.consumed[i] = used + 1
            return dict(first[used])
        replies = rule.get("replies") or [{"text": "OK"}]
        seed = body.get("seed")
        by_seed = rule.get("by_seed") or {}
        if seed is not None and str(seed) in by_seed:
            replies = by_seed[str(seed)]
        at = in_turn if rule.get("per_turn") else step
        return dict(replies[min(at, len(replies) - 1)])
    default = state.script.get("default") or [{"text": "OK"}]
    return dict(default[min(step, len(default) - 1)])


def completion(reply: dict[str, Any], body: dict[str, Any], n: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.get("text")}
    step = 1 + sum(1 for m in body.get("messages") or [] if m.get("role") == "assistant")
    finish = "stop"
    if reply.get("tool_calls"):
        calls = []
        for j, tc in enumerate(reply["tool_calls"]):
            args = tc.get("arguments", {})
            calls.append({
                "id": tc.get("id", f"call_{step}_{j}"),
                "type": "function",
                "function": {"name": tc["name"],
                             "arguments": _fill(args, body) if isinstance(args, str)
                             else json.dumps(args)},
            })
        message["tool_calls"] = calls
        finish = "tool_calls"
    prompt = len(json.dumps(body.get("messages", []))) // 4
    out = len(json.dumps(message)) // 4
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": finish}
    if reply.get("top_logprobs"):
        choice["logprobs"] = {"content": [_first_token(reply["top_logprobs"])]}
    return {
        "id": f"chatcmpl-{n}",
        "object": "chat.completion",
        "model": body.get("model", "fake"),
        "choices": [choice],
        "usage": {"prompt_tokens": prompt, "completion_tokens": out,
                  "total_tokens": prompt + out},
    }


def _first_token(probabilities: dict[str, float]) -> dict[str, Any]:
    top = [{"token": t, "logprob": math.log(p), "bytes": list(t.encode())}
           for t, p in sorted(probabilities.items(), key=lambda kv: -kv[1])]
    return {**top[0], "top_logprobs": top}


def _fill(text: str, body: dict[str, Any]) -> str:
    if "{{user_number}}" in text:
        m = re.search(r"\d+", _last_user(body))
        text = text.replace("{{user_number}}", m.group(0) if m else "")
    return text


def http_response(status: int, body: bytes, content_type: str = "application/json",
                  headers: dict[str, str] | None = None) -> bytes:
    reason = {200: "OK", 404: "Not Found", 400: "Bad Request", 429: "Too Many Requests",
              500: "Internal Server Error", 502: "Bad Gateway", 503: "Service Unavailable"}
    lines = [f"HTTP/1.1 {status} {reason.get(status, 'Status')}",
             f"Content-Type: {content_type}", f"Content-Length: {len(body)}",
             "Connection: keep-alive"]
    for k, v in (headers or {}).items():
        lines.append(f"{k}: {v}")
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def handle(state: State, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            lines = head.decode("latin-1").split("\r\n")
            method, path, _ = lines[0].split(" ", 2)
            headers = {}
            for line in lines[1:]:
                if ":" in line:
                    k, v = line.split(":", 1)
                    headers[k.strip().lower()] = v.strip()
            length = int(headers.get("content-length", "0"))
            raw = await reader.readexactly(length) if length else b""
            if not await route(state, method, path, headers, raw, writer):
                return
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.LimitOverrunError):
        pass
    finally:
        with contextlib.suppress(Exception):
            writer.close()


async def route(state: State, method: str, path: str, headers: dict[str, str], raw: bytes,
                writer: asyncio.StreamWriter) -> bool:
    if path == "/health":
        writer.write(http_response(200, b'{"status":"ok"}'))
        return True
    if path == "/_script" and method == "POST":
        state.script = json.loads(raw or b"{}")
        state.requests = []
        state.consumed = {}
        writer.write(http_response(200, b"{}"))
        return True
    if path.endswith("/models") and method == "GET":
        status = int(state.script.get("models_status", 200))
        names = state.script.get("models", ["scripted-model"])
        body = {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "test"}
                                           for n in names]}
        writer.write(http_response(status, json.dumps(body if status == 200 else
                                                      {"error": "no"}).encode()))
        return True
    if path == "/_requests":
        writer.write(http_response(200, json.dumps(state.requests).encode()))
        return True
    if path.endswith("/chat/completions") and method == "POST":
        try:
            body = json.loads(raw)
        except ValueError:
            writer.write(http_response(400, b'{"error":"bad json"}'))
            return True
        state.requests.append({"headers": headers, "body": body})
        state.counter += 1
        reply = choose(state, body)
        delay = reply.get("delay_ms", state.delay_ms)
        if delay:
            await asyncio.sleep(delay / 1000)
        if reply.get("hang"):
            await asyncio.sleep(3600)
            return False
        if reply.get("close"):
            return False
        if "raw_http" in reply:
            writer.write(reply["raw_http"].encode("utf-8", "surrogateescape"))
            await writer.drain()
            return False
        if reply.get("truncate"):
            full = http_response(200, json.dumps(completion(reply, body, state.counter))
                                 .encode())
            writer.write(full[: len(full) // 2])
            await writer.drain()
            return False
        if "status" in reply:
            payload = reply.get("body", "")
            data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
            ctype = "text/html" if isinstance(payload, str) and payload.lstrip().startswith("<") \
                else "application/json"
            writer.write(http_response(reply["status"], data, ctype, reply.get("headers")))
            return True
        if "json" in reply:
            writer.write(http_response(200, json.dumps(reply["json"]).encode()))
            return True
        if "raw" in reply:
            writer.write(http_response(200, reply["raw"].encode(), "text/plain"))
            return True
        data = json.dumps(completion(reply, body, state.counter)).encode()
        writer.write(http_response(200, data))
        return True
    writer.write(http_response(404, b'{"error":"not found"}'))
    return True


async def serve(port: int, state: State, tls: str | None = None) -> None:
    context = None
    if tls:
        import ssl

        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        context.load_cert_chain(tls)
    server = await asyncio.start_server(lambda r, w: handle(state, r, w), "127.0.0.1", port,
                                        backlog=1024, ssl=context)
    sock = server.sockets[0]
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--port", type=int, default=0)
    ap.add_argument("--delay-ms", type=float, default=0)
    ap.add_argument("--script", help="a JSON script file to start with")
    ap.add_argument("--tls", help="serve HTTPS: a PEM file with the key and certificate chain")
    a = ap.parse_args(argv)
    script = DEFAULT_SCRIPT
    if a.script:
        with open(a.script, encoding="utf-8") as f:
            script = json.load(f)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve(a.port, State(script, a.delay_ms), a.tls))


if __name__ == "__main__":
    sys.exit(main())
