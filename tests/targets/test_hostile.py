"""Hostile endpoints: every reply class of bench/hostile/server.py (a real process on
127.0.0.1) ends its own attempt with a plain reason — the run goes on, every attempt is
recorded, nothing tracebacks. One run asks all the classes at once (one target each);
each test reads its own record. Messages are checked word for word.

Every test that talks to the server runs on both paths of dsl/clients/transport.py: plain
``http://`` (h11 on Scenarist's own connections) and ``https://`` (httpx), the server's
certificate signed by a certificate authority made for the session (the target's
``ca_file``). The words are the same on both."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PATHS, REPO, TLSFiles, run_cli, write

SERVER = REPO / "bench" / "hostile" / "server.py"


@dataclass(frozen=True)
class Hostile:
    """The hostile server: ``f"{hostile}"`` is its root (http://127.0.0.1:<port>, or
    https://); a target reaches it with ``**hostile.settings`` (the ca_file over TLS)."""

    root: str
    settings: dict[str, str]

    def __str__(self) -> str:
        return self.root


@pytest.fixture(scope="module", params=PATHS)
def hostile(request: pytest.FixtureRequest, tls_files: TLSFiles) -> Iterator[Hostile]:
    tls = request.param == "tls"
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--bomb-mib", "64",
                             *(["--tls", str(tls_files.server)] if tls else [])],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    yield Hostile(f"{'https' if tls else 'http'}://127.0.0.1:{line.split()[1]}",
                  {"ca_file": str(tls_files.ca)} if tls else {})
    proc.terminate()
    proc.wait(timeout=10)


SCENARIO = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: lookup
      description: Look something up.
      input_schema: {type: object, properties: {s: {type: string}}}
      returns: "found {{ args.s }}"
when: hi
then:
  - non_empty
runs: 1
min_pass: 1
"""

M = "malformed"
# kind → (status, error kind, message); {url} is the target's base_url
REPLIES: dict[str, tuple[str, str | None, str]] = {
    # item 5: replies the code cannot read
    "usage-string": ("error", M, "the reply's usage is text, not an object"),
    "usage-field-string": ("error", M, "the reply's usage.prompt_tokens is text (\"12\"), not a "
                                       "number of tokens"),
    "usage-infinity": ("error", M, "the reply's usage.prompt_tokens is inf, not a whole number "
                                   "of tokens"),
    "usage-nan": ("error", M, "the reply's usage.completion_tokens is nan, not a whole number "
                              "of tokens"),
    "usage-bool": ("error", M, "the reply's usage.prompt_tokens is a boolean (true), not a "
                               "number of tokens"),
    "content-image": ("error", M, "part 1 of the reply's content is of type 'image_url'; "
                                  "Scenarist reads text answers only"),
    "content-parts-numbers": ("error", M, "part 1 of the reply's content is a number, not an "
                                          "object"),
    "content-number": ("error", M, "the reply's content is a number, not text or a list of "
                                   "text parts"),
    "content-object": ("error", M, "the reply's content is an object, not text or a list of "
                                   "text parts"),
    "tool-calls-number": ("error", M, "the reply's tool_calls is a number, not a list"),
    "tool-calls-object": ("error", M, "the reply's tool_calls is an object, not a list"),
    "tool-calls-strings": ("error", M, "tool call 1 of the reply is text, not an object"),
    "tool-call-function-string": ("error", M, "tool call 1 of the reply has no function object "
                                              "(its function is text)"),
    "tool-call-name-number": ("error", M, "the name of tool call 1 of the reply is a number, "
                                          "not text"),
    "tool-call-args-number": ("error", M, "the arguments of tool call 1 of the reply are a "
                                          "number, not text or an object"),
    "tool-call-id-object": ("error", M, "the id of tool call 1 of the reply is an object, not "
                                        "text"),
    "finish-reason-object": ("error", M, "the reply's finish_reason is an object, not text"),
    "choices-numbers": ("error", M, "the reply's first choice has no message"),
    "choices-object": ("error", M, "the reply has no choices (an empty completion)"),
    "message-string": ("error", M, "the reply's first choice has no message"),
    "body-list": ("error", M, "the reply is JSON but not an object"),
    "body-null": ("error", M, "the reply is JSON but not an object"),
    "error-number": ("error", M, "the endpoint answered with an error: 5"),
    "error-huge": ("error", M, "the endpoint answered with an error: " + "x" * 300 + "…"),
    "deep-json": ("error", M, "the reply from {url} is nested more than 100 levels deep"),
    "deep-json-900": ("error", M, "the reply from {url} is nested more than 100 levels deep"),
    # half an emoji (a reply cut by max_tokens) is kept: files hold it as a \\ud83d escape
    "surrogate-content": ("pass", None, ""),
    "surrogate-elsewhere": ("pass", None, ""),
    "surrogate-args": ("pass", None, ""),
    "surrogate-tool-name": ("pass", None, ""),  # an unknown tool: the model is told so
    "surrogate-bytes": ("error", M, "the reply from {url} is not UTF-8 text (byte 0xed at "
                                    "position 72)"),
    "not-utf8": ("error", M, "the reply from {url} is not UTF-8 text (byte 0xe9 at position "
                             "149)"),
    "surrogate-pair-ok": ("pass", None, ""),
    # items 6 and 8: sizes and counts
    "usage-negative": ("error", M, "the reply's usage.completion_tokens is negative "
                                   "(-1,000,000,000); a token count cannot be"),
    "usage-huge": ("error", M, "the reply's usage.prompt_tokens is 1e+30, more than "
                               "100,000,000 tokens in one reply"),
    "usage-float-huge": ("error", M, "the reply's usage.prompt_tokens is 1e+300, more than "
                                     "100,000,000 tokens in one reply"),
    "gzip-bomb": ("error", M, "the reply from {url} is larger than 8,388,608 bytes "
                              "(max_reply_bytes); raise max_reply_bytes if the endpoint really "
                              "sends replies this long"),
    "deflate-bomb": ("error", M, "the reply from {url} is larger than 8,388,608 bytes "
                                 "(max_reply_bytes); raise max_reply_bytes if the endpoint "
                                 "really sends replies this long"),
    "huge-body": ("error", M, "the reply from {url} is larger than 8,388,608 bytes "
                              "(max_reply_bytes); raise max_reply_bytes if the endpoint really "
                              "sends replies this long"),
    "endless": ("error", M, "the reply from {url} is larger than 8,388,608 bytes "
                            "(max_reply_bytes); raise max_reply_bytes if the endpoint really "
                            "sends replies this long"),
    "gzip-ok": ("pass", None, ""),
    "bad-gzip": ("error", M, "the reply from {url} is not valid gzip data (Error -3 while "
                             "decompressing data: incorrect header check)"),
    "truncated-gzip": ("error", M, "the reply from {url} ends in the middle of its gzip data"),
    "unknown-encoding": ("error", M, "the reply from {url} is encoded as 'x-hostile'; "
                                     "Scenarist reads gzip, deflate or no encoding"),
    "double-gzip": ("error", M, "the reply from {url} is encoded as 'gzip, gzip'; Scenarist "
                                "reads gzip, deflate or no encoding"),
    # item 7: the whole reply is bounded in time
    "drip": ("error", "timeout", "the reply from {url} was still arriving after 8 s "
                                 "(timeout_ms bounds the whole reply)"),
    "drip-headers": ("error", "timeout", "no reply from {url} within 8 s"),
    # item 9: redirects
    "redirect-302-json": ("error", "status", "HTTP 302 from {url}: the endpoint redirected to "
                                             "'{root}/ok/v1/chat/completions'; set base_url to "
                                             "the final address"),
    "redirect-307": ("error", "status", "HTTP 307 from {url}: the endpoint redirected to "
                                        "'{root}/ok/v1/chat/completions'; set base_url to the "
                                        "final address"),
    "redirect-301-no-location": ("error", "status", "HTTP 301 from {url}: the endpoint "
                                                    "redirected without saying where (no "
                                                    "Location header); set base_url to the "
                                                    "final address"),
    # issue 32, item 15: a 3xx that is not a redirect is not "redirected without saying where"
    "not-modified-304": ("error", "status", "HTTP 304 from {url}: '304 Not Modified' answers a "
                                            "request that asked whether a copy it holds is "
                                            "still fresh, which Scenarist never asks: the "
                                            "endpoint sent no answer (a cache or a proxy in "
                                            "between may have answered instead)"),
    "multiple-choices-300": ("error", "status", "HTTP 300 from {url}: the endpoint answered "
                                                "with '300 Multiple Choices', which is neither "
                                                "an answer nor a redirect with an address"),
    "ok": ("pass", None, ""),
    # issue 31: an otherwise valid completion framed as HTTP/1.1 forbids is refused (h11's
    # words, on both paths), in bounded memory and time
    "chunk-0x": ("error", M, "the reply from {url} is not valid HTTP/1.1 (illegal chunk "
                             "header: bytearray(b'0xfe\\r\\n'))"),
    "chunk-negative": ("error", M, "the reply from {url} is not valid HTTP/1.1 (illegal chunk "
                                   "header: bytearray(b'-1\\r\\n'))"),
    "chunk-no-crlf": ("error", M, "the reply from {url} is not valid HTTP/1.1 (malformed "
                                  "chunk footer: bytearray(b'7f') (expected b'\\r\\n'))"),
    "chunk-lf-end": ("error", M, "the reply from {url} is not valid HTTP/1.1 (malformed chunk "
                                 "footer: bytearray(b'\\n0') (expected b'\\r\\n'))"),
    "length-conflict": ("error", M, "the reply from {url} is not valid HTTP/1.1 (conflicting "
                                    "Content-Length headers)"),
    "length-twice": ("error", M, "the reply from {url} is not valid HTTP/1.1 (conflicting "
                                 "Content-Length headers)"),
    "length-not-digit": ("error", M, "the reply from {url} is not valid HTTP/1.1 (bad "
                                     "Content-Length)"),
    "length-superscript": ("error", M, "the reply from {url} is not valid HTTP/1.1 (bad "
                                       "Content-Length)"),
    "te-gzip-chunked": ("error", M, "the reply from {url} is not valid HTTP/1.1 (Only "
                                    "Transfer-Encoding: chunked is supported)"),
    "status-101": ("error", M, "the reply from {url} is not valid HTTP/1.1 (Received server "
                               "_SWITCH_UPGRADE event without a pending proposal)"),
    "endless-trailer": ("error", M, "the reply from {url} has a status line and headers, or a "
                                    "trailer, longer than 102,400 bytes"),
    "endless-headers": ("error", M, "the reply from {url} has a status line and headers, or a "
                                    "trailer, longer than 102,400 bytes"),
    "huge-headers": ("error", M, "the reply from {url} has a status line and headers, or a "
                                 "trailer, longer than 102,400 bytes"),
    "bare-lf": ("pass", None, ""),  # as httpx reads it
    "extra-bytes": ("pass", None, ""),  # the bytes after the first reply are never read
    "no-content-body": ("error", M, "the reply from {url} is not JSON: ''"),
}

# tool-call arguments that cannot be used: the call is answered with an error (the model
# may recover), the attempt goes on and here passes
BAD_ARGS = {
    "deep-args": "nested more than 100 levels deep",
}


def _name(kind: str) -> str:
    return kind.replace("-", "_")


@pytest.fixture(scope="module")
def hostile_records(hostile: Hostile, tmp_path_factory: pytest.TempPathFactory
                    ) -> dict[str, dict[str, Any]]:
    """One run against every hostile kind; the record of each, by kind."""
    root = tmp_path_factory.mktemp("hostile")
    kinds = [*REPLIES, *BAD_ARGS, "deep-args-object"]
    # the drips get 8 s (their headers alone take 50 s to drip, their bodies 100 s: a
    # loaded machine still sees the headers of "drip" within 8 s, TLS handshake
    # included); the others all the time a loaded machine may need
    targets = {_name(k): {"kind": "openai", "base_url": f"{hostile}/{k}/v1", "model": "m",
                          **hostile.settings,
                          "timeout_ms": 8000 if k.startswith("drip") else 60_000,
                          "retry": {"max_attempts": 1}} for k in kinds}
    write(root / "scenarist.yaml", json.dumps({"targets": targets,
                                               "defaults": {"concurrency": 16}}))
    write(root / "s.yaml", SCENARIO)
    args = [a for k in kinds for a in ("--target", _name(k))]
    r = run_cli("run", ".", "--no-early-stop", *args, cwd=root)
    assert r.exit_code == 3, r.output  # errors, and no failure
    (run_dir,) = (root / "runs").iterdir()
    recs = [json.loads(x) for x in (run_dir / "results.jsonl").read_text("utf-8").splitlines()]
    assert (run_dir / "summary.json").exists()
    by_target = {r["target"]: r for r in recs}
    assert len(by_target) == len(kinds)
    return {k: by_target[_name(k)] for k in kinds}


@pytest.mark.parametrize("kind", list(REPLIES))
def test_each_hostile_reply_ends_its_attempt_with_a_plain_reason(
        kind: str, hostile: Hostile, hostile_records: dict[str, dict[str, Any]]) -> None:
    status, error_kind, message = REPLIES[kind]
    rec = hostile_records[kind]
    assert rec["status"] == status, rec["reason"]
    if error_kind is None:
        assert rec["error"] is None
        return
    expected = message.format(url=f"{hostile}/{kind}/v1", root=hostile)
    assert rec["error"]["kind"] == error_kind
    assert rec["error"]["message"] == expected
    assert rec["reason"] == f"{error_kind}: {expected}"


@pytest.mark.parametrize("kind", list(BAD_ARGS))
def test_arguments_that_cannot_be_used_are_answered_with_an_error_and_the_attempt_goes_on(
        kind: str, hostile_records: dict[str, dict[str, Any]]) -> None:
    rec = hostile_records[kind]
    assert rec["status"] == "pass", rec["reason"]
    (call,) = rec["calls"]
    assert call["error"] == "invalid-json"
    assert call["args"] is None
    assert call["output"] == (f"error: the arguments are not valid JSON ({BAD_ARGS[kind]}). "
                              "Call lookup again with a JSON object.")


def test_arguments_given_as_a_deep_object_end_the_attempt_as_malformed(
        hostile: Hostile, hostile_records: dict[str, dict[str, Any]]) -> None:
    rec = hostile_records["deep-args-object"]
    assert rec["error"]["message"] == (f"the reply from {hostile}/deep-args-object/v1 is "
                                       "nested more than 100 levels deep")


@pytest.mark.parametrize("kind", ["extra-bytes", "no-content-body"])
def test_a_reply_that_leaves_bytes_behind_never_answers_a_later_request(
        kind: str, hostile: Hostile, tmp_path: Path) -> None:
    """Each request is answered by its own reply: a connection with unread bytes (a whole
    reply, SMUGGLED, after the tool call of extra-bytes; as the body of no-content-body's
    204) is never used again. One connection at a time, so a reused one would be read."""
    target = {"kind": "openai", "base_url": f"{hostile}/{kind}/v1", "model": "m",
              "retry": {"max_attempts": 1}, **hostile.settings}
    write(tmp_path / "scenarist.yaml", json.dumps({"targets": {"t": target},
                                                   "defaults": {"concurrency": 1}}))
    write(tmp_path / "s.yaml", SCENARIO.replace("runs: 1", "runs: 3"))
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    (run_dir,) = (tmp_path / "runs").iterdir()
    recs = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(recs) == 3
    assert "SMUGGLED" not in (run_dir / "results.jsonl").read_text()
    if kind == "extra-bytes":
        assert r.exit_code == 0, r.output
        assert [(x["status"], x["answer"], len(x["calls"])) for x in recs] == [
            ("pass", "OK", 1)] * 3
    else:
        assert r.exit_code == 3, r.output
        assert [x["error"]["message"] for x in recs] == [
            f"the reply from {hostile}/{kind}/v1 is not JSON: ''"] * 3


def test_half_a_surrogate_pair_is_kept_as_it_came(
        hostile_records: dict[str, dict[str, Any]]) -> None:
    assert hostile_records["surrogate-content"]["answer"] == "bad \ud800 text"
    assert hostile_records["surrogate-args"]["calls"][0]["output"] == "found \ud800"
    assert hostile_records["surrogate-tool-name"]["calls"][0]["name"] == "t\udfff"


def test_an_answer_of_deep_json_fails_the_json_check_and_is_null_to_expressions(
        hostile: Hostile, tmp_path: Path) -> None:
    suite_with(tmp_path, {"base_url": f"{hostile}/deep-object-text/v1", **hostile.settings,
                          "retry": {"max_attempts": 1}})
    write(tmp_path / "s.yaml", SCENARIO.replace(
        "  - non_empty\n", "  - json: true\n  - expect: \"json(answer) == null\"\n"))
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 1
    (run_dir,) = (tmp_path / "runs").iterdir()
    (rec,) = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert [c["status"] for c in rec["checks"]] == ["fail", "pass"]
    assert rec["checks"][0]["reason"].startswith(
        "expected the answer to be a JSON object; it is not JSON (it is nested too deeply to "
        "read): ")


def test_max_reply_bytes_is_the_target_s_own(hostile: Hostile, tmp_path: Path) -> None:
    target = {"kind": "openai", "base_url": f"{hostile}/ok/v1", "model": "m",
              **hostile.settings, "max_reply_bytes": 1024, "retry": {"max_attempts": 1}}
    write(tmp_path / "scenarist.yaml", json.dumps({"targets": {"t": target}}))
    write(tmp_path / "s.yaml", SCENARIO)
    assert run_cli("run", ".", cwd=tmp_path).exit_code == 0  # a reply of 300 bytes
    target["base_url"] = f"{hostile}/huge-body/v1"
    write(tmp_path / "scenarist.yaml", json.dumps({"targets": {"t": target}}))
    assert run_cli("run", ".", "--out", "again", cwd=tmp_path).exit_code == 3
    (run_dir,) = (tmp_path / "again").iterdir()
    (rec,) = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert rec["error"]["message"].startswith(f"the reply from {hostile}/huge-body/v1 is "
                                              "larger than 1,024 bytes (max_reply_bytes)")


# ------------------------------------------------------------------ the judge's replies

JUDGED = SCENARIO.replace("  - non_empty\n", "  - faithful\n")


def test_half_a_surrogate_pair_in_the_answer_is_judged_and_cached(
        hostile: Hostile, tmp_path: Path) -> None:
    targets = {
        "agent": {"kind": "openai", "base_url": f"{hostile}/surrogate-content/v1",
                  **hostile.settings,
                  "model": "m", "retry": {"max_attempts": 1}},
        "judge": {"kind": "openai", "base_url": f"{hostile}/ok/v1", "model": "j",
                  **hostile.settings,
                  "retry": {"max_attempts": 1}},
    }
    write(tmp_path / "scenarist.yaml", json.dumps({
        "targets": targets, "defaults": {"target": "agent"}, "judge": {"target": "judge"}}))
    write(tmp_path / "s.yaml", JUDGED)
    for _ in range(2):  # asked, then from the cache
        r = run_cli("run", ".", cwd=tmp_path)
        assert r.exit_code == 0, r.output
    cached = list((tmp_path / ".scenarist" / "judge-cache").rglob("*.json"))
    assert len(cached) == 1
    assert "bad \ud800 text" in json.loads(cached[0].read_text("utf-8"))["prompt"]


@pytest.mark.parametrize(("kind", "status", "reason"), [
    ("usage-string", "error", "judge: the judge's endpoint failed: malformed: the reply's "
                              "usage is text, not an object"),
    ("usage-negative", "error", "judge: the judge's endpoint failed: malformed: the reply's "
                                "usage.completion_tokens is negative (-1,000,000,000); a "
                                "token count cannot be"),
    ("deep-json", "error", "judge: the judge's endpoint failed: malformed: the reply from "
                           "{url} is nested more than 100 levels deep"),
    ("gzip-bomb", "error", "judge: the judge's endpoint failed: malformed: the reply from "
                           "{url} is larger than 8,388,608 bytes (max_reply_bytes); raise "
                           "max_reply_bytes if the endpoint really sends replies this long"),
    ("deep-text", "unsure", "no check failed, but the judge was unsure"),
    ("deep-object-text", "unsure", "no check failed, but the judge was unsure"),
    ("ok", "pass", "all 1 checks passed"),
])
def test_a_judge_that_replies_badly_is_a_judge_error_or_unsure_never_a_model_failure(
        hostile: Hostile, tmp_path: Path, kind: str, status: str, reason: str) -> None:
    url = f"{hostile}/{kind}/v1"
    targets = {
        "agent": {"kind": "openai", "base_url": f"{hostile}/ok/v1", "model": "m",
                  **hostile.settings,
                  "retry": {"max_attempts": 1}},
        "judge": {"kind": "openai", "base_url": url, "model": "j", **hostile.settings,
                  "retry": {"max_attempts": 1}},
    }
    write(tmp_path / "scenarist.yaml", json.dumps({
        "targets": targets, "defaults": {"target": "agent"},
        "judge": {"target": "judge", "max_attempts": 1, "cache": False}}))
    write(tmp_path / "s.yaml", JUDGED.replace("runs: 1", "runs: 2").replace("min_pass: 1",
                                                                            "min_pass: 2"))
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == {"pass": 0, "unsure": 1, "error": 3}[status], r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    recs = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert len(recs) == 2
    for rec in recs:
        assert rec["status"] == status
        assert rec["reason"] == reason.format(url=url)


# ------------------------------------------------------------------ the author's own files

def lint_found(root: Path, *paths: str) -> list[tuple[str, str, str]]:
    """``scenarist lint --format json``: (file:line:col, code, message) of each problem."""
    r = run_cli("lint", "--format", "json", *(paths or (".",)), cwd=root)
    assert r.exit_code in (0, 1), r.output
    return [(f"{d['file']}:{d['line']}:{d['col']}", d["code"], d["message"])
            for d in json.loads(r.output)["diagnostics"]]


HOURS_AT = "given:\n  at: 2026-09-29T10:00:00-03:00\n"


def suite_with(root: Path, target: dict[str, Any] | None = None, **extra: Any) -> None:
    t = {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
         **(target or {})}
    write(root / "scenarist.yaml", json.dumps({"targets": {"t": t}, **extra}, indent=1))


@pytest.mark.parametrize(("target", "found"), [
    ({"base_url": "http://127.0.0.1:70000/v1"},
     ("scenarist.yaml:5:16", "S105", "the base_url 'http://127.0.0.1:70000/v1' cannot be used: "
                                     "its port is not a number from 1 to 65535 ('70000')")),
    ({"base_url": "http://[::1/v1"},
     ("scenarist.yaml:5:16", "S105", "the base_url 'http://[::1/v1' cannot be used: it is not "
                                     "a valid URL (Invalid IPv6 URL)")),
    ({"headers": {"X-Équipe": "clinic"}},
     ("scenarist.yaml:8:5", "S105", "the header name 'X-Équipe' has the character 'É'; header "
                                    "names are ASCII letters, digits and !#$%&'*+-.^_`|~")),
    ({"headers": {"X-Team": "clínica"}},
     ("scenarist.yaml:8:15", "S105", "the value of the header 'X-Team' holds a character that "
                                     "is not ASCII ('í'); header values are printable ASCII")),
    ({"ca_file": "certs/missing.pem"},
     ("scenarist.yaml:7:15", "S105", "the ca_file 'certs/missing.pem' of the target 't' does "
                                     "not exist")),
    ({"headers": {"X-Team": "a\r\nX-Injected: 1"}},
     ("scenarist.yaml:8:15", "S105", "the value of the header 'X-Team' holds a line break "
                                     "('\\r'); header values are printable ASCII")),
])
def test_target_values_no_request_can_carry_are_found_by_lint(
        tmp_path: Path, target: dict[str, Any], found: tuple[str, str, str]) -> None:
    suite_with(tmp_path, target)
    write(tmp_path / "s.yaml", SCENARIO)
    assert lint_found(tmp_path) == [found]
    r = run_cli("run", ".", cwd=tmp_path)  # the run refuses it the same way
    assert r.exit_code == 2
    assert found[2] in r.output


def test_the_target_constructor_never_tracebacks(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from dsl.clients.openai import OpenAIModel
    from dsl.errors import InputError, Span
    from dsl.model import Target
    from dsl.settings import OpenAISettings

    def target(**settings: Any) -> Target:
        return Target("t", "openai", Span("s.yaml", 2, 3), OpenAISettings(model="m", **settings))

    bad = [target(base_url="http://h:70000/v1"), target(base_url="http://[::1/v1"),
           target(base_url="http://h/v1", headers={"X-A": "é"}),
           target(base_url="http://h/v1", api_key_env="HOSTILE_KEY")]
    monkeypatch.setenv("HOSTILE_KEY", "sk-clé")
    messages = []
    for t in bad:
        with pytest.raises(InputError) as exc:
            OpenAIModel(t)
        messages.append(exc.value.diagnostics[0].message)
    assert messages == [
        "the base_url 'http://h:70000/v1' of the target 't' cannot be used: its port is not a "
        "number from 1 to 65535 ('70000')",
        "the base_url 'http://[::1/v1' of the target 't' cannot be used: it is not a valid URL "
        "(Invalid IPv6 URL)",
        "the target 't' cannot be used: the value of the header 'X-A' holds a character that "
        "is not ASCII ('é'); header values are printable ASCII",
        "the API key in HOSTILE_KEY holds a character that is not printable ASCII; check the "
        "variable",
    ]


def test_a_ca_file_that_holds_no_certificate_stops_the_run_at_the_target(
        tmp_path: Path) -> None:
    write(tmp_path / "notes.pem", "not a certificate\n")
    suite_with(tmp_path, {"base_url": "https://127.0.0.1:9/v1", "ca_file": "notes.pem"})
    write(tmp_path / "s.yaml", SCENARIO)
    assert lint_found(tmp_path) == []  # a file is there; whether it is PEM, the run finds
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 2, r.output
    assert (f"scenarist.yaml:3:3: error S105 the ca_file '{tmp_path / 'notes.pem'}' of the "
            "target 't' cannot be used: [X509: NO_CERTIFICATE_OR_CRL_FOUND] no certificate "
            "or crl found") in r.output


def test_a_key_that_no_header_can_carry_stops_the_run_with_a_message(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOSTILE_KEY", "sk-clé")
    suite_with(tmp_path, {"api_key_env": "HOSTILE_KEY"})
    write(tmp_path / "s.yaml", SCENARIO)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 2
    assert "the API key in HOSTILE_KEY holds a character that is not printable ASCII" in r.output
    assert "sk-clé" not in r.output


@pytest.mark.parametrize(("where", "found"), [
    ("matches", ("s.yaml:10:16", "E204", "the repetition {1000000000} repeats 1,000,000,000 "
                                        "times; a count may be at most 1,000 in the pattern "
                                        "'a{1000000000}'")),
    ("expect", ("s.yaml:10:31", "E204", "the repetition {1000000000} repeats 1,000,000,000 "
                                       "times; a count may be at most 1,000 in the pattern "
                                       "'a{1000000000}'")),
    ("nested", ("s.yaml:10:24", "E204", "the nested repetitions ending with {1000} repeat "
                                       "1,000,000 times; at most 10,000 are allowed in the "
                                       "pattern '(a{1000}){1000}'")),
    ("redact", ("scenarist.yaml:11:13", "E204", "the repetition {1000000000} repeats "
                                                "1,000,000,000 times; a count may be at most "
                                                "1,000 in the redact pattern 'big'")),
])
def test_regex_bombs_are_refused_at_their_place(tmp_path: Path, where: str,
                                                found: tuple[str, str, str]) -> None:
    then = {"matches": "  - matches: 'a{1000000000}'\n",
            "expect": "  - expect: \"answer matches 'a{1000000000}'\"\n",
            "nested": "  - matches: '(a{1000}){1000}'\n",
            "redact": "  - non_empty\n"}[where]
    extra = {"redact": {"patterns": {"big": "a{1000000000}"}}} if where == "redact" else {}
    suite_with(tmp_path, **extra)
    write(tmp_path / "s.yaml", SCENARIO.replace("  - non_empty\n", then))
    assert lint_found(tmp_path) == [found]


BOMBS = [
    ("{{ 'A' * 3000000000 }}",
     "repeating a value 3,000,000,000 times would make 3,000,000,000 characters or items; a "
     "template may make at most 10,000,000"),
    ("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}",
     "these loops run 10,000,100,000 steps; a template may run at most 100,000"),
    ("{{ 'x' | center(3000000000) }}",
     "center() would make 3,000,000,000 characters or items; a template may make at most "
     "10,000,000"),
    ("{{ 2 ** 100000000 }}", "2 ** 100,000,000 makes a number with more than 100,000 bits"),
    ("{{ '%3000000000s' % 'a' }}",
     "the format '%3000000000s' would make 3,000,000,000 characters or items; a template may "
     "make at most 10,000,000"),
]


@pytest.mark.parametrize(("template", "message"), BOMBS, ids=[b[0][:24] for b in BOMBS])
def test_template_bombs_that_lint_can_know_are_located_errors(
        tmp_path: Path, template: str, message: str) -> None:
    suite_with(tmp_path)
    write(tmp_path / "s.yaml", SCENARIO.replace('"found {{ args.s }}"', json.dumps(template)))
    assert lint_found(tmp_path) == [
        ("s.yaml:7:17", "E208", f"the template in returns of the tool 'lookup' is too costly: "
                                f"{message}")]


@pytest.mark.parametrize(("template", "output"), [
    ("{{ args.s * 3000000000 }}",
     "error: the tool failed: repeating a value 3,000,000,000 times would make 3,000,000,000 "
     "characters or items; a template may make at most 10,000,000"),
    ("{% for i in range(1000 * args.s|length) %}{% for j in range(1000) %}{{ args.s }}"
     "{% endfor %}{% endfor %}",
     "error: the tool failed: the template ran more than 100,000 loop steps and calls"),
    ("{% for a in args.s * 1000 %}{% for b in args.s * 1000 %}{% endfor %}{% endfor %}",
     "error: the tool failed: the template ran more than 100,000 loop steps and calls"),
    ("{% set ns = namespace(t=args.s) %}{% for i in range(60) %}{% set ns.t = ns.t ~ ns.t %}"
     "{% endfor %}{{ ns.t }}",
     "error: the tool failed: joining text with ~ would make 16,777,216 characters or items; "
     "a template may make at most 10,000,000"),
    ("{{ range(args.s|length * 100000) | list }}",
     "error: the tool failed: range() of 100,000 numbers; a template may count to at most "
     "10,000"),
])
def test_template_bombs_at_run_time_fail_the_tool_call_and_the_run_goes_on(
        hostile: Hostile, tmp_path: Path, template: str, output: str) -> None:
    suite_with(tmp_path, {"base_url": f"{hostile}/call-then-answer/v1", **hostile.settings,
                          "retry": {"max_attempts": 1}})
    write(tmp_path / "s.yaml", SCENARIO.replace('"found {{ args.s }}"', json.dumps(template)))
    assert lint_found(tmp_path) == []
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    (rec,) = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert rec["status"] == "pass"
    assert rec["calls"][0]["output"] == output


def test_a_system_prompt_that_passes_a_limit_at_run_time_is_an_attempt_error(
        hostile: Hostile, tmp_path: Path) -> None:
    prompt = "{% for i in range(10000) %}{% for j in range(system|length) %}{% endfor %}" \
             "{% endfor %}{{ now }}"
    suite_with(tmp_path, {"base_url": f"{hostile}/ok/v1", "system_prompt": prompt,
                          **hostile.settings})
    write(tmp_path / "s.yaml", SCENARIO.replace("given:\n", "given:\n  system: "
                                                + "x" * 100 + "\n"))
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 3, r.output
    (run_dir,) = (tmp_path / "runs").iterdir()
    (rec,) = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    assert rec["error"] == {"kind": "template", "status": None, "message":
                            "the target's system_prompt could not be rendered: the template "
                            "ran more than 100,000 loop steps and calls"}


# ------------------------------------------------------------------ files that are not files

def test_only_regular_files_are_read(tmp_path: Path) -> None:
    import os

    from dsl.source.load import read_file

    os.mkfifo(tmp_path / "fifo.yaml")
    (tmp_path / "zero.yaml").symlink_to("/dev/zero")
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "dir.yaml").mkdir()
    found = {name: [(d.code, d.message) for d in read_file(tmp_path / name, name).diagnostics]
             for name in ("fifo.yaml", "zero.yaml", "loop.yaml", "dir.yaml")}
    assert found == {
        "fifo.yaml": [("Y112", "the path is a FIFO (named pipe), not a regular file")],
        "zero.yaml": [("Y112", "the path is a device, not a regular file")],
        "loop.yaml": [("Y112", "cannot read the file: it is a symbolic link that leads back to "
                               "itself (a symlink loop)")],
        "dir.yaml": [("Y112", "the path is a folder, not a regular file")],
    }


def test_a_symlink_loop_and_a_dangling_link_in_a_folder_are_reported(tmp_path: Path) -> None:
    suite_with(tmp_path)
    write(tmp_path / "s.yaml", SCENARIO)
    (tmp_path / "loop.yaml").symlink_to("loop.yaml")
    (tmp_path / "gone.yaml").symlink_to("missing.yaml")
    assert lint_found(tmp_path) == [
        ("gone.yaml:1:1", "Y112", "cannot read the file: No such file or directory"),
        ("loop.yaml:1:1", "Y112", "cannot read the file: it is a symbolic link that leads back "
                                  "to itself (a symlink loop)"),
    ]
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 2
    assert "loop.yaml:1:1: error Y112" in r.output


@pytest.mark.parametrize(("text", "found"), [
    ("~\n", ("s.yaml:1:1", "Y108", "the file holds only null ('~'), not a mapping")),
    ("null\n", ("s.yaml:1:1", "Y108", "the file holds only null ('null'), not a mapping")),
    ("---\n", ("s.yaml:1:1", "Y107", "the file holds an empty YAML document")),
    ("# a comment\n---\n...\n", ("s.yaml:1:1", "Y107", "the file holds an empty YAML "
                                                       "document")),
    (HOURS_AT + 'when: "caf\\ud800"\nthen: [non_empty]\n',
     ("s.yaml:3:11", "Y105", "the escape \\ud800 is a surrogate, which is not a character")),
])
def test_a_file_without_a_scenario_is_an_error(tmp_path: Path, text: str,
                                               found: tuple[str, str, str]) -> None:
    suite_with(tmp_path)
    write(tmp_path / "s.yaml", text)
    assert lint_found(tmp_path) == [found]


# ------------------------------------------------------------------ corrupt cassettes

HEADER = json.dumps({"schema_version": 1, "kind": "scenarist-cassette",
                     "settings": {"model": "m", "temperature": None, "params": {},
                                  "system_prompt": "{{ now }}"}})


@pytest.mark.parametrize(("lines", "message"), [
    ([HEADER, "[1, 2]"], "{path}:2: the line is not a JSON object; record the cassette again"),
    ([HEADER, '{"request": {}}'], "{path}:2: the line has no 'key' (a text); record the "
                                  "cassette again"),
    ([HEADER, '{"key": "k", "response": "text"}', '{"key": "j", "response": {}}'],
     "{path}:2: its 'response' is not an object; record the cassette again"),
    ([HEADER, '{"key": "k", "error": {"kind": "python", "message": 5}}', ""],
     "{path}:2: its 'error' is not an object with a kind (status, malformed or model_output), "
     "a message and a status; record the cassette again"),
    ([HEADER, '{"key": "k"}', '{"key": "j", "response": {}}'],
     "{path}:2: the line has neither a 'response' nor an 'error'; record the cassette again"),
    ([HEADER, '{"key": "k", "response": ' + "[" * 100_000 + "]" * 100_000 + "}", ""],
     "{path}:2: the line is nested more than 100 levels deep; record the cassette again"),
    ([HEADER.replace('"params": {}', '"params": 5')],
     "{path}:1: the cassette's header is damaged: settings.params is not an object; record "
     "the cassette again"),
    (["[]"], "{path} is not a Scenarist cassette (its first line is not a cassette header); "
             "record one with scenarist run --record FILE"),
])
def test_a_corrupt_cassette_is_a_located_message(tmp_path: Path, lines: list[str],
                                                 message: str) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text("\n".join(lines), "utf-8")
    suite_with(tmp_path, None)
    write(tmp_path / "scenarist.yaml", json.dumps(
        {"targets": {"r": {"kind": "replay", "cassette": "c.jsonl"}}}))
    write(tmp_path / "s.yaml", SCENARIO)
    r = run_cli("run", ".", cwd=tmp_path)
    assert r.exit_code == 2, r.output
    assert ("error E206 the replay target 'r' cannot be used: "
            + message.format(path=path.resolve())) in r.output


def test_a_cassette_in_latin_1_a_fifo_or_a_device_is_a_message(tmp_path: Path) -> None:
    import os

    from dsl.errors import RunDirError
    from dsl.targets.cassette import ReplayModel, read_header

    latin = tmp_path / "latin.jsonl"
    latin.write_bytes(HEADER.encode() + b'\n{"key": "caf\xe9"}\n')
    os.mkfifo(tmp_path / "fifo.jsonl")
    found = []
    for path in (latin, tmp_path / "fifo.jsonl", Path("/dev/zero")):
        with pytest.raises(RunDirError) as exc:
            ReplayModel(path)
        found.append(str(exc.value))
    with pytest.raises(RunDirError):
        read_header(Path("/dev/zero"))
    assert found == [
        f"{latin}:2: the line is not UTF-8 text (byte 0xe9 at column 13); record the cassette "
        "again",
        f"the cassette {tmp_path / 'fifo.jsonl'} is a FIFO (named pipe), not a regular file",
        "the cassette /dev/zero is a device, not a regular file",
    ]


def test_a_torn_last_line_is_still_skipped(tmp_path: Path) -> None:
    from dsl.targets.cassette import ReplayModel

    path = tmp_path / "c.jsonl"
    path.write_text(HEADER + '\n{"key": "k", "response": {}}\n{"key": "j", "resp', "utf-8")
    assert list(ReplayModel(path).replies) == ["k"]


async def _replay(path: Path, body: dict[str, Any]) -> Any:
    from dsl.targets.cassette import ReplayModel

    return await ReplayModel(path).complete(body)


def test_a_recorded_reply_scenarist_cannot_read_is_a_malformed_error_with_its_line(
        tmp_path: Path) -> None:
    import asyncio

    from dsl.errors import EndpointError
    from dsl.targets.cassette import request_key

    body = {"model": "m", "messages": []}
    path = tmp_path / "c.jsonl"
    path.write_text(HEADER + "\n" + json.dumps({"key": request_key(body), "response": {
        "choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}}}) + "\n")
    with pytest.raises(EndpointError) as exc:
        asyncio.run(_replay(path, body))
    assert exc.value.kind == "malformed"
    assert exc.value.message == ("the cassette c.jsonl:2 holds a reply Scenarist cannot read: "
                                 "the reply's usage.prompt_tokens is negative (-1); a token "
                                 "count cannot be")


def test_the_cassette_writer_keeps_a_lone_surrogate_as_an_escape(tmp_path: Path) -> None:
    import asyncio

    from dsl.targets.base import Reply, RequestSettings
    from dsl.targets.cassette import Recorder

    class Inner:
        settings = RequestSettings("m", None, {}, "")

        async def complete(self, body: dict[str, Any]) -> Reply:
            from dsl.model import Tokens
            return Reply({"content": "ok"}, "stop", Tokens(), 0.0, raw={"choices": []})

        async def aclose(self) -> None:
            return None

    async def go() -> None:
        rec = Recorder(Inner(), tmp_path / "c.jsonl", "t")
        await rec.complete({"model": "m", "messages": [{"role": "user", "content": "\ud800"}]})
        await rec.aclose()

    asyncio.run(go())
    lines = (tmp_path / "c.jsonl").read_text("utf-8").splitlines()
    assert len(lines) == 2
    assert '"content": "\\ud800"' in lines[1]
