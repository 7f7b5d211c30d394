"""Live, replay and recheck give the same verdict for every check, with and without
``redact`` (issue 32, "What must work"): a property over generated scenarios, through the
``scenarist`` command against the scripted model server (tests/fakeserver.py).

Each example is a suite of a few scenarios whose secrets — card tokens a pattern matches,
four-digit PINs another one matches, a ``redact.env`` value — stand in the person's
message, the system prompt, the world's row ids, the model's tool-call arguments (as the
person said them, another card's, one the model made up; a PIN as a number or as text) and
its answer. The suite runs live (recording a cassette), replays the cassette and is
rechecked from its results, once with ``redact:`` and once without. Then:

* every check's status is the same live, on replay and on recheck (with redaction and
  without), by construction;
* with redaction, every check but ``no_secrets`` (which is about what redaction names a
  secret) has the status it has without — whenever the secrets are the scenario's own (a
  token the model made up cannot be put back from a redacted file: there, every mode sees
  its mark);
* with redaction, no file of the run folders or the cassette holds a token or the
  ``redact.env`` value.

Bounded (a handful of examples, each six runs in this process) to fit the CI budget."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from tests.conftest import REPO, FakeServer, records_of, run_cli, the_run, write

AGENT = REPO / "tests" / "ownagent.py"

ENV_NAME = "CARD_VAULT_KEY"
ENV_VALUE = "vault-Q7x9-Kp2m-Zr55"
MADE_UP = "tok_ZZZZ9999"

TOKENS = st.text("ABCDEFGHJKLMNPQRSTUVWXYZ23456789", min_size=8, max_size=8).map(
    lambda s: "tok_" + s)
PINS = st.integers(1000, 9999).filter(lambda n: n != 2026)  # 2026: the year of the moment

CHECKS = ("contains", "not_contains", "calls", "valid_args", "world", "does_not_modify",
          "no_secrets", "matches")


@dataclass(frozen=True)
class Case:
    ids: tuple[str, ...]  # its rows of the world
    pins: tuple[int, ...]
    target: int  # the row the person asks about
    arg_id: str  # what the model passes as card_id
    arg_pin: int | str
    system_secret: bool  # the redact.env value is in given.system
    answer: tuple[str, ...]  # what the answer says: id, pin, env, other, made_up
    checks: tuple[str, ...]

    @property
    def made_up(self) -> bool:
        """A secret the scenario does not hold reaches what the agent wrote."""
        return self.arg_id == MADE_UP or "made_up" in self.answer


@st.composite
def cases(draw: st.DrawFn) -> Case:
    ids = tuple(draw(st.lists(TOKENS, min_size=2, max_size=3, unique=True)))
    pins = tuple(draw(st.lists(PINS, min_size=len(ids), max_size=len(ids))))
    target = draw(st.integers(0, len(ids) - 1))
    arg_id = draw(st.sampled_from([ids[target], ids[(target + 1) % len(ids)], MADE_UP]))
    pin = draw(st.sampled_from([pins[target], pins[(target + 1) % len(ids)]]))
    arg_pin: int | str = draw(st.sampled_from([pin, str(pin)]))
    answer = tuple(draw(st.lists(st.sampled_from(["id", "pin", "env", "other", "made_up"]),
                                 max_size=3, unique=True)))
    checks = tuple(draw(st.lists(st.sampled_from(CHECKS), min_size=2, max_size=5,
                                 unique=True)))
    return Case(ids, pins, target, arg_id, arg_pin, draw(st.booleans()), answer, checks)


def _check(case: Case, name: str) -> str:
    mine, other = case.ids[case.target], case.ids[(case.target + 1) % len(case.ids)]
    return {
        "contains": f'contains: "{mine}"',
        "not_contains": f'not_contains: "{other}"',
        "calls": f'calls: {{name: block_card, args: {{card_id: "{mine}"}}}}',
        "valid_args": "valid_args: true",
        "world": f'world: {{cards: {{"{mine}": {{status: blocked}}}}}}',
        "does_not_modify": "does_not_modify",
        "no_secrets": "no_secrets",
        "matches": 'matches: "tok_[A-Z0-9]{8} is blocked"',
    }[name]


def _said(case: Case) -> str:
    mine, other = case.ids[case.target], case.ids[(case.target + 1) % len(case.ids)]
    words = {"id": f"{mine} is blocked", "pin": f"PIN {case.pins[case.target]} checked",
             "env": f"vault {ENV_VALUE}", "other": f"{other} untouched",
             "made_up": f"{MADE_UP} is blocked"}
    return "Done. " + "; ".join(words[w] for w in case.answer)


def _suite(root: Path, server_url: str, examples: list[Case], redact: bool,
           agent: bool = False) -> None:
    rows = [{"id": i, "pin": p, "status": "active"}
            for case in examples for i, p in zip(case.ids, case.pins, strict=True)]
    live: dict[str, Any] = {"kind": "openai", "base_url": server_url, "model": "m",
                            "timeout_ms": 5000, "retry": {"max_attempts": 1}}
    if agent:  # a program that runs its own loop, its tools over MCP (tests/ownagent.py)
        live = {"kind": "command", "command": [sys.executable, str(AGENT), "stdio"],
                "timeout_ms": 20000}
    suite: dict[str, Any] = {
        "targets": {
            "live": live,
            "again": {"kind": "replay", "cassette": "c.jsonl"},
        },
        "defaults": {"runs": 1, "target": "live", "concurrency": 2},
        "world": {"cards": rows},
        "tools": {"block_card": {
            "description": "Block one card, with its PIN.",
            "input_schema": {"type": "object",
                             "properties": {"card_id": {"type": "string"},
                                            "pin": {"type": "integer"}},
                             "required": ["card_id", "pin"]},
            "action": "update", "table": "cards",
            "where": {"id": "{{ args.card_id }}", "pin": "{{ args.pin }}"},
            "set": {"status": "blocked"}}},
    }
    if redact:
        suite["redact"] = {"env": [ENV_NAME],
                           "patterns": {"card-token": "tok_[A-Z0-9]{8}",
                                        "pin": r"\b\d{4}\b"}}
    write(root / "scenarist.yaml", json.dumps(suite, indent=2))
    for n, case in enumerate(examples):
        mine = case.ids[case.target]
        system = f"You guard cards. Vault key: {ENV_VALUE}." if case.system_secret \
            else "You guard cards."
        then = "\n".join(f"  - {_check(case, c)}" for c in case.checks)
        when = f"case-{n}: block {mine}, PIN {case.pins[case.target]}"
        if agent:  # the person's words tell the scripted agent what to call
            when += " CALL block_card " + json.dumps({"card_id": case.arg_id,
                                                      "pin": case.arg_pin})
        write(root / f"case{n}.yaml",
              f"given:\n  at: 2026-09-29T10:00:00-03:00\n  system: \"{system}\"\n"
              f"  tools: [block_card]\n"
              f"when: {json.dumps(when)}\n"
              f"then:\n{then}\nruns: 1\n")


def _script(examples: list[Case]) -> dict[str, Any]:
    return {"rules": [
        {"match": f"case-{n}:", "replies": [
            {"tool_calls": [{"name": "block_card",
                             "arguments": {"card_id": c.arg_id, "pin": c.arg_pin}}]},
            {"text": _said(c)}]}
        for n, c in enumerate(examples)]}


Verdicts = dict[str, tuple[str, ...]]


def _verdicts(run_dir: Path) -> Verdicts:
    return {r["scenario"]: (r["status"], *(c["status"] for c in r["checks"]))
            for r in records_of(run_dir)}


def _three(root: Path) -> dict[str, Verdicts]:
    """Live (recording), replay, recheck: each run folder's verdicts."""
    live = run_cli("run", "--record", "c.jsonl", "--out", "live", cwd=root)
    assert live.exit_code in (0, 1), live.output
    replay = run_cli("run", "--target", "again", "--out", "replay", cwd=root)
    assert replay.exit_code in (0, 1), replay.output
    recheck = run_cli("recheck", str(the_run(root / "live")), "--out", "recheck", cwd=root)
    assert recheck.exit_code in (0, 1), recheck.output
    return {mode: _verdicts(the_run(root / mode)) for mode in ("live", "replay", "recheck")}


@pytest.fixture
def vault(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_NAME, ENV_VALUE)
    monkeypatch.setenv("NO_COLOR", "1")


EXAMPLES = os.environ.get("SCENARIST_PROPERTY_EXAMPLES")  # more, and random, when set


@settings(max_examples=int(EXAMPLES or "25"), deadline=None, derandomize=not EXAMPLES,
          database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(examples=st.lists(cases(), min_size=1, max_size=3))
def test_live_replay_and_recheck_agree_with_and_without_redact(
        examples: list[Case], server: FakeServer, vault: None) -> None:
    agree(examples, server, agent=False)


@settings(max_examples=int(EXAMPLES or "6"), deadline=None, derandomize=not EXAMPLES,
          database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(examples=st.lists(cases(), min_size=1, max_size=2))
def test_an_agent_that_runs_its_own_loop_agrees_too(
        examples: list[Case], server: FakeServer, vault: None) -> None:
    """The same with a ``kind: command`` program: the person's words say which card and
    PIN it passes to the tool (the scenario's own, another row's, one made up)."""
    agree(examples, server, agent=True)


def agree(examples: list[Case], server: FakeServer, agent: bool) -> None:
    ids = [i for c in examples for i in c.ids]
    assume(len(set(ids)) == len(ids))  # one world: each row's id once
    server.script(_script(examples))
    seen: dict[bool, dict[str, Verdicts]] = {}
    for redact in (True, False):
        with tempfile.TemporaryDirectory() as folder:
            root = Path(folder)
            _suite(root, server.url, examples, redact, agent)
            seen[redact] = runs = _three(root)
            assert runs["live"] == runs["replay"] == runs["recheck"], (redact, runs)
            if redact:
                secrets = [i for c in examples for i in c.ids] + [ENV_VALUE, MADE_UP]
                for f in [*root.glob("live/**/*"), *root.glob("replay/**/*"),
                          *root.glob("recheck/**/*"), root / "c.jsonl"]:
                    if f.is_file():
                        data = f.read_bytes()
                        for s in secrets:
                            assert s.encode() not in data, (s, f)
    for n, case in enumerate(examples):
        if case.made_up:
            continue  # a secret the scenario does not hold: every mode sees its mark
        with_redact, without = seen[True]["live"][f"case{n}"], seen[False]["live"][f"case{n}"]
        keep = [i for i, c in enumerate(case.checks) if c != "no_secrets"]
        assert [with_redact[1 + i] for i in keep] == [without[1 + i] for i in keep], \
            (case, with_redact, without)
