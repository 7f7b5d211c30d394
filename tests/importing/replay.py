"""What the import tests share: a suite whose model is the scripted server, a scripted
model that repeats a logged conversation, and the check that an imported scenario lints
clean and passes every "as logged" check when the model does what the log shows."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml import YAML

from tests.conftest import HERE, FakeServer, records_of, run_cli, suite_yaml, write


def suite(folder: Path, server: FakeServer, **extra: Any) -> Path:
    """A suite in ``folder`` whose one target is the scripted server (one run each)."""
    write(folder / "scenarist.yaml", suite_yaml(server.url, defaults={"runs": 1},
                                                tools={}, **extra))
    return folder


def reply_of(message: Mapping[str, Any]) -> dict[str, Any]:
    """An OpenAI assistant message as the scripted server's reply."""
    out: dict[str, Any] = {"text": message.get("content")}
    calls = message.get("tool_calls") or []
    if calls:
        out["tool_calls"] = [{"id": c.get("id"), "name": c["function"]["name"],
                              "arguments": c["function"]["arguments"]} for c in calls]
    return out


def rule(first_user: str, assistant: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """A rule that answers the conversation whose first message is ``first_user`` with
    the logged assistant messages, in order (the i-th for a request that already holds
    i assistant messages: as the log's requests did)."""
    return {"match_any": json.dumps(first_user, ensure_ascii=False)[1:-1],
            "replies": [reply_of(m) for m in assistant]}


def gateway_transcripts(log: Path) -> list[list[dict[str, Any]]]:
    """Each conversation of a gateway log as its whole transcript (the longest request of
    those that start with the same person's message, and its answer) — read here without
    Scenarist, as a test should."""
    best: dict[str, list[dict[str, Any]]] = {}
    for line in log.read_text("utf-8").splitlines():
        try:
            ex = json.loads(line)
        except ValueError:
            continue
        messages = ex["request"]["messages"]
        first = next(m["content"] for m in messages if m["role"] == "user")
        whole = [*messages, ex["response"]["choices"][0]["message"]]
        if len(whole) > len(best.get(first, [])):
            best[first] = whole
    return list(best.values())


def script_of(transcripts: Sequence[Sequence[Mapping[str, Any]]]) -> dict[str, Any]:
    """The scripted server's script: each conversation answered as the log shows."""
    rules = []
    for t in transcripts:
        first = next(m["content"] for m in t if m["role"] == "user")
        rules.append(rule(first, [m for m in t if m["role"] == "assistant"]))
    return {"rules": rules}


def load(path: Path) -> Any:
    return YAML(typ="safe").load(path.read_text("utf-8"))


def as_logged(scenario: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The scenario's "as logged" calls checks, as written."""
    return [c for c in scenario["then"] if str(c.get("name", "")).startswith("as logged:")]


@dataclass
class Replay:
    lint: Any
    run: Any
    records: list[dict[str, Any]]


def replay(folder: Path, server: FakeServer, script: Mapping[str, Any]) -> Replay:
    """Lint the suite's imported scenarios with --strict, then run them against the
    scripted server repeating the logs."""
    server.script(dict(script))
    linted = run_cli("lint", "--strict", "imported", cwd=folder)
    ran = run_cli("run", "imported", "--out", "runs", cwd=folder)
    (run_dir,) = (folder / "runs").iterdir()
    return Replay(linted, ran, records_of(run_dir))


def assert_replays(r: Replay, files: int) -> None:
    """Lint clean, and every attempt passed with every "as logged" check passing."""
    assert r.lint.exit_code == 0, r.lint.output
    assert f"{files} file(s): 0 error(s), 0 warning(s)" in r.lint.output
    assert len(r.records) == files, r.run.output
    for rec in r.records:
        logged = [c for c in rec["checks"] if c["label"].startswith("as logged:")]
        assert logged, rec["scenario"]
        assert all(c["status"] == "pass" for c in logged), (rec["scenario"], rec["checks"])
        assert rec["status"] == "pass", (rec["scenario"], rec["reason"])


@contextmanager
def gateway(upstream: str, log: Path, offset: str = "") -> Iterator[str]:
    """The logging proxy (tests/importing/gateway.py) in front of ``upstream``: its URL."""
    args = [sys.executable, str(HERE / "importing" / "gateway.py"), "--upstream", upstream,
            "--log", str(log)]
    if offset:
        args.append(f"--offset={offset}")
    proc = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("PORT "), proc.stderr.read() if proc.stderr else line
        yield f"http://127.0.0.1:{int(line.split()[1])}/v1"
    finally:
        proc.terminate()
        proc.wait(timeout=10)
