"""kind: openai — each endpoint fault ends its attempt with the right status and reason,
retries honour Retry-After with backoff; against a real scripted server, reached over each
path of dsl/clients/transport.py (plain http:// through h11, https:// through httpx)."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

import pytest

from dsl.clients.openai import backoff_seconds, request_body, retry_after_seconds
from dsl.targets.base import MAX_REPLY_DEPTH, Unreadable, read_reply_json
from tests.conftest import (
    HOURS,
    ONE_RUN,
    TOOL_THEN_ANSWER,
    FakeServer,
    plain_suite,
    records_of,
    run_cli,
    the_run,
    write,
)

FAULTS = [
    # (name, replies, expected status, expected error kind, message start)
    ("html_500", [{"status": 500, "body": "<html><body><h1>502 Bad Gateway</h1></body></html>"}],
     "error", "status", "HTTP 500 from {url}: '<html><body><h1>502 Bad Gateway</h1></body></html>' (after 2 tries)"),
    ("invalid_json", [{"raw": '{"choices": [{"message": '}], "error", "malformed",
     "the reply from {url} is not JSON: '{{\"choices\": [{{\"message\":'"),
    ("close_without_answer", [{"close": True}], "error", "connection",
     "cannot reach {url}: the server closed the connection mid-reply"),
    ("close_mid_response", [{"truncate": True}], "error", "connection",
     "cannot reach {url}: the server closed the connection mid-reply"),
    ("hang_past_timeout", [{"hang": True}], "error", "timeout",
     "no reply from {url} within {limit} s (after 2 tries)"),
    ("tool_call_as_text", [{"text": '{"name": "list_business_hours", "arguments": {}}'}],
     "error", "tool_call_as_text",
     "the endpoint returned a call to list_business_hours as plain text instead of a tool "
     "call: the server is not parsing this model's tool calls (check its chat template or "
     "tool-call parser)"),
    ("tool_call_as_text_fenced", [{"text": '```json\n{"name": "list_business_hours", '
                                           '"parameters": {}}\n```'}],
     "error", "tool_call_as_text", "the endpoint returned a call to list_business_hours"),
    ("unsupported_tools", [{"status": 400, "body": {"error": "registry.ollama.ai/library/"
                                                             "gemma:2b does not support tools"}}],
     "error", "unsupported_tools",
     "the endpoint does not support tool calls for this model (HTTP 400: "
     "'{{\"error\": \"registry.ollama.ai/library/gemma:2b does not support tools\"}}')"),
]


@pytest.mark.parametrize(("name", "replies", "status", "kind", "message"), FAULTS,
                         ids=[f[0] for f in FAULTS])
def test_each_fault_ends_the_attempt_with_the_right_status_and_reason(
        tmp_path: Path, any_server: FakeServer, cli_env: dict[str, str], name: str,
        replies: list[dict[str, Any]], status: str, kind: str, message: str) -> None:
    server = any_server
    server.script({"rules": [{"match": "hora", "replies": replies}]})
    # a hang needs a timeout to pass; the other faults all the time a loaded machine needs
    plain_suite(tmp_path, server.url, timeout_ms=1000 if kind == "timeout" else 30_000,
                **server.settings)
    write(tmp_path / "hours.yaml", HOURS + "runs: 2\nmin_pass: 1\n")
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    recs = records_of(the_run(tmp_path / "runs"))
    assert len(recs) == 2
    for rec in recs:
        assert rec["status"] == status
        assert rec["error"]["kind"] == kind
        assert rec["error"]["message"].startswith(message.format(url=server.url, limit="1")), \
            rec["error"]["message"]
    requests = len(server.requests())
    retried = kind in ("status", "connection", "timeout")
    assert requests == (4 if retried else 2)


def test_all_faults_in_one_run_none_crashes_it(tmp_path: Path, any_server: FakeServer,
                                               cli_env: dict[str, str]) -> None:
    server = any_server
    rules = []
    for i, (name, replies, *_rest) in enumerate(FAULTS):
        rules.append({"match": f"fault-{i}", "replies": replies})
        write(tmp_path / f"{name}.yaml", HOURS.replace("¿Hasta qué hora atendemos hoy?",
                                                       f"fault-{i}") + "runs: 1\nmin_pass: 1\n")
    rules.append({"match": "ok-", "replies": TOOL_THEN_ANSWER["rules"][0]["replies"]})
    write(tmp_path / "fine.yaml", HOURS.replace("¿Hasta qué hora atendemos hoy?", "ok-1")
          + "runs: 1\nmin_pass: 1\n")
    server.script({"rules": rules})
    plain_suite(tmp_path, server.url, timeout_ms=2000, **server.settings)
    r = run_cli("run", ".", "-j", "8", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    recs = {x["scenario"]: x for x in records_of(the_run(tmp_path / "runs"))}
    assert len(recs) == len(FAULTS) + 1
    assert recs["fine"]["status"] == "pass"
    for name, _replies, status, kind, _message in FAULTS:
        assert (recs[name]["status"], recs[name]["error"]["kind"]) == (status, kind)


def test_429_with_retry_after_is_retried_and_counted(
        tmp_path: Path, any_server: FakeServer, cli_env: dict[str, str]) -> None:
    server = any_server
    rule = dict(TOOL_THEN_ANSWER["rules"][0])
    rule["first"] = [{"status": 429, "body": {"error": "slow down"},
                      "headers": {"Retry-After": "0.3"}}]
    server.script({"rules": [rule]})
    plain_suite(tmp_path, server.url, retry={"max_attempts": 3, "backoff_ms": 1},
                **server.settings)
    write(tmp_path / "hours.yaml", ONE_RUN)
    t0 = time.monotonic()
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    assert time.monotonic() - t0 >= 0.3  # Retry-After was honoured, not the 1 ms backoff
    (rec,) = records_of(the_run(tmp_path / "runs"))
    assert rec["retries"] == 1
    assert rec["model_calls"][0]["retries"] == 1
    assert len(server.requests()) == 3


def test_retry_after() -> None:
    now = dt.datetime(2026, 11, 30, 12, 0, 0, tzinfo=dt.UTC)
    assert retry_after_seconds("2") == 2.0
    assert retry_after_seconds("0.2") == 0.2
    assert retry_after_seconds("Mon, 30 Nov 2026 12:00:05 GMT", now) == 5.0
    assert retry_after_seconds("Mon, 30 Nov 2026 11:00:00 GMT", now) == 0.0
    assert retry_after_seconds("soon") is None
    assert retry_after_seconds(None) is None


def test_a_request_body_is_compact_json_that_reads_back_as_sent() -> None:
    body = {"model": "m", "messages": [{"role": "user", "content": "é 😀 \u2028 \x00 \"q\""},
                                       {"role": "assistant", "content": None}],
            "temperature": 0.7, "seed": 3, "big": 10**30, "small": 1e-7, "tuple": (1, 2)}
    raw = request_body(body)
    assert raw.startswith(b'{"model":"m","messages":[{"role":"user","content":"\xc3\xa9')
    assert json.loads(raw) == {**body, "tuple": [1, 2]}
    # what JSON cannot carry: NaN goes as null; a lone surrogate (half an emoji) escaped
    assert request_body({"t": float("nan"), "i": float("-inf")}) == b'{"t":null,"i":null}'
    assert request_body({"content": "cut \ud83d"}) == b'{"content":"cut \\ud83d"}'
    assert request_body({1: "a"}) == b'{"1":"a"}'


def test_a_reply_reads_as_the_json_module_reads_it() -> None:
    for text in ['{"a": 1, "a": 2}', "123456789012345678901234567890", '[1.0, -0, 1.5e-320]',
                 '{"x": NaN}', '"\\ud83d"', "1E400", '{"k": "\\u00e9"}']:
        got, want = read_reply_json(text), json.loads(text)
        assert repr(got) == repr(want), text
    with pytest.raises(Unreadable, match="is not JSON"):
        read_reply_json('{"a": 1} x')
    with pytest.raises(Unreadable, match="is nested more than 100 levels deep"):
        read_reply_json("[" * (MAX_REPLY_DEPTH + 1) + "]" * (MAX_REPLY_DEPTH + 1))
    with pytest.raises(Unreadable, match="is nested more than 100 levels deep"):
        read_reply_json("[" * 100_000 + "]" * 100_000)


def test_backoff_grows_with_jitter() -> None:
    for i in range(4):
        b = 0.5 * 2**i
        for _ in range(50):
            assert b / 2 <= backoff_seconds(i, 500) <= b


def test_a_post_the_server_may_have_processed_is_never_sent_again(
        tmp_path: Path, any_server: FakeServer, cli_env: dict[str, str]) -> None:
    """The server reads the second request of an attempt on a kept-alive connection and
    closes it without a word: with ``retry: {max_attempts: 1}`` nothing sends it again (it
    may have been processed); the attempt ends as a connection error after 2 requests."""
    server = any_server
    rule = dict(TOOL_THEN_ANSWER["rules"][0])
    rule["first"] = [{"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
                     {"close": True}]
    server.script({"rules": [rule]})
    plain_suite(tmp_path, server.url, retry={"max_attempts": 1}, **server.settings)
    write(tmp_path / "hours.yaml", ONE_RUN)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    (rec,) = records_of(the_run(tmp_path / "runs"))
    assert rec["error"] == {"kind": "connection", "status": None, "message": (
        f"cannot reach {server.url}: the server closed the connection mid-reply (Server "
        "disconnected without sending a response.)")}
    assert rec["retries"] == 0
    assert len(server.requests()) == 2


def test_each_failure_says_whether_the_server_may_have_processed_the_request(
        any_server: FakeServer) -> None:
    """``EndpointError.maybe_processed``: false only when the request provably never left
    (no connection); with ``resend`` off, such a request is not tried again."""
    import asyncio

    from dsl.clients.openai import JsonEndpoint
    from dsl.errors import EndpointError, Span
    from dsl.model import Target
    from dsl.settings import OpenAISettings, Retry

    server = any_server
    server.script({"rules": [{"match": "x", "replies": [{"close": True}]}]})

    def endpoint(url: str, resend: bool) -> JsonEndpoint:
        settings = OpenAISettings(model="m", base_url=url, ca_file=server.settings.get(
            "ca_file"), retry=Retry(max_attempts=3, backoff_ms=1))
        return JsonEndpoint(Target("t", "openai", Span("s.yaml", 1, 1), settings),
                            url + "/chat/completions", url, "base_url", resend=resend)

    async def fail(url: str, resend: bool) -> EndpointError:
        client = endpoint(url, resend)
        try:
            await client.complete({"messages": [{"role": "user", "content": "x"}]})
        except EndpointError as exc:
            return exc
        finally:
            await client.aclose()
        raise AssertionError("no error")

    dropped = asyncio.run(fail(server.url, resend=True))
    assert (dropped.kind, dropped.maybe_processed, dropped.retries) == ("connection", True, 2)
    assert len(server.requests()) == 3  # the retry policy's choice, counted
    server.script({"rules": [{"match": "x", "replies": [{"close": True}]}]})
    kept = asyncio.run(fail(server.url, resend=False))
    assert (kept.maybe_processed, kept.retries) == (True, 0)
    assert len(server.requests()) == 1  # may have been processed: never sent again
    refused = asyncio.run(fail(server.url.replace(f":{server.port}/", ":9/"), resend=False))
    assert (refused.kind, refused.maybe_processed, refused.retries) == ("connection", False, 2)
