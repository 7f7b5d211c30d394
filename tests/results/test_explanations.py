"""Endpoint failures in plain words: every kind Scenarist can give an attempt has one
sentence (dsl/errors.py EXPLANATIONS), shown in the terminal and the report with the
server's own words one click away; and the terminal says when fewer attempts ran than the
files ask, and why. Through the real command line against tests/fakeserver.py."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from dsl.errors import EXPLANATIONS, NEITHER, UNKNOWN_KIND, explain
from dsl.targets.cassette import RECORDED_ERRORS
from tests.conftest import HOURS, REPO, FakeServer, make_suite

DSL = REPO / "dsl"


def kinds_in_the_source() -> set[str]:
    """Every kind an EndpointError is raised with, and every kind of failed attempt."""
    found: set[str] = {"cassette"}  # CassetteMiss
    for path in DSL.rglob("*.py"):
        text = path.read_text("utf-8")
        found.update(re.findall(r'EndpointError\(\s*"([a-z_]+)"', text))
        found.update(re.findall(r'failure_kind = "([a-z_]+)"', text))
    return found


def test_every_kind_has_its_sentence() -> None:
    kinds = kinds_in_the_source() | set(RECORDED_ERRORS)
    assert {"connection", "timeout", "status", "malformed", "model_output",
            "tool_call_as_text", "unsupported_tools", "agent", "judge", "template",
            "cassette", "max_steps"} <= kinds
    assert kinds <= set(EXPLANATIONS), kinds - set(EXPLANATIONS)
    for kind, sentence in EXPLANATIONS.items():
        assert sentence[0].isupper(), kind
        assert sentence.count(". ") == 0, f"{kind}: one sentence"
        # each says whether the attempt counts against the model
        assert sentence.endswith((f"{NEITHER}.", "it counts as a failed attempt.")), kind
    assert explain("model_output") == ("The model's reply was neither a valid tool call nor an "
                                       "answer — small models do this; it counts as a failed "
                                       "attempt.")
    assert explain("something new") == UNKNOWN_KIND


def scenarist(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    return subprocess.run([sys.executable, "-m", "dsl", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


UNPARSABLE = {"error": {"code": 500, "type": "server_error", "message": "The model produced "
                        "output that does not match the expected peg-native format"}}


def test_a_reply_the_server_could_not_parse_is_explained_in_the_terminal_and_report(
        tmp_path: Path, server: FakeServer) -> None:
    server.script({"rules": [{"match": "hora", "replies": [{"status": 500, "body": UNPARSABLE}]}]})
    make_suite(tmp_path, server, HOURS + "runs: 2\nmin_pass: 1\n")
    p = scenarist("run", ".", cwd=tmp_path)
    assert p.returncode == 1, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("FAIL  hours  fake    0/2   min 1")
    # what really failed first (issue 32, item 16: the checks could not decide on an answer
    # that never came — before, two of them were said failed)
    assert lines[1:3] == [
        "      ! model_output ×2: The model's reply was neither a valid tool call nor an "
        "answer — small models do this; it counts as a failed attempt.",
        "        the server said: the server could not parse the model's reply as a tool call "
        "or answer (HTTP 500: '{\"error\": {\"code\": 500, \"type\": \"server_error\", \"message\": "
        "\"The model produce…"]
    assert lines[3] == ('      – calls: "list_business_hours"  (not evaluated in 2 of 2: the '
                        "attempt failed before it could decide)")
    assert not any("✗" in line for line in lines)
    (run_dir,) = (tmp_path / "runs").iterdir()
    row = json.loads((run_dir / "summary.json").read_text())["scenarios"][0]
    assert (row["failure_kinds"], row["error_kinds"], row["fails"]) == ({"model_output": 2},
                                                                        {}, 2)
    html = (run_dir / "report.html").read_text("utf-8")
    assert ("<li><strong>model_output</strong> ×2: The model&#39;s reply was neither a valid "
            "tool call nor an answer — small models do this; it counts as a failed attempt."
            '<details class="said" open><summary>What the server said</summary><div class="text">'
            "the server could not parse the model&#39;s reply") in html
    record = json.loads((run_dir / "results.jsonl").read_text().splitlines()[0])
    assert record["failure_kind"] == "model_output"
    assert record["failure"].startswith("the server could not parse the model's reply")


def test_connection_errors_are_explained_and_counted_apart(tmp_path: Path,
                                                           server: FakeServer) -> None:
    targets = {"fake": {"kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                        "timeout_ms": 2000, "retry": {"max_attempts": 1}}}
    make_suite(tmp_path, server, HOURS + "runs: 1\nmin_pass: 1\n", targets=targets)
    p = scenarist("run", ".", cwd=tmp_path)
    assert p.returncode == 3
    lines = p.stdout.splitlines()
    assert lines[1] == ("      ! connection ×1: Scenarist could not reach the endpoint — it is "
                        "not running, or the address in scenarist.yaml is wrong; it says nothing "
                        "about the model, so it counts neither as a pass nor as a failure.")
    assert lines[2].startswith("        what happened: cannot reach http://127.0.0.1:9/v1: ")


def test_the_terminal_says_why_fewer_attempts_ran(tmp_path: Path, server: FakeServer) -> None:
    server.script({"rules": [{"match": "hora", "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Hoy atendemos hasta las 18:00."}]}]})
    make_suite(tmp_path, server, HOURS + "runs: 10\nmin_pass: 8\n")
    p = scenarist("run", ".", "--runs", "4", "-j", "1", cwd=tmp_path)
    assert p.returncode == 0, p.stdout
    assert ("--runs 4: each scenario ran at most 4 times, fewer than the 10 its file asks for; "
            "min_pass was scaled to match (run without --runs for the full count).") \
        in p.stdout.splitlines()
    early = scenarist("run", ".", "-j", "1", cwd=tmp_path)
    assert early.returncode == 0
    assert early.stdout.splitlines()[-5:-3] == [
        "Early stop: 2 of the 10 planned attempts were not run, because their scenario's "
        "verdict was already decided (hours passed after 8 of 10); --no-early-stop runs "
        "them all.",
        "Tool calls: F1 100% (precision 100%, recall 100%; 8 right, 0 wrong, 0 missed)"]
    full = scenarist("run", ".", "-j", "1", "--no-early-stop", cwd=tmp_path)
    assert "Early stop" not in full.stdout
    assert "--runs" not in full.stdout
