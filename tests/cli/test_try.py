"""``scenarist try`` (dsl/pipeline/tryout.py): a person chats with the agent inside a scenario's
world, through a real pseudo-terminal (pexpect) against the scripted server process, as
someone would type into it; the endings, the confirmations, /save and its replay, and the
errors word for word."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pexpect
import pytest

from dsl.execution.conversation import settle
from dsl.model import Call
from tests.conftest import FakeServer, run_cli, suite_yaml, write

SCENARIO = """
    id: close_saturday
    description: The owner closes on Saturdays, after checking the hours.
    given:
      at: 2026-09-29T10:00:00-03:00
      tools: [list_business_hours, set_business_hours]
    when:
      - say: "Los sábados cerramos."
        then:
          - asks_to_confirm: set_business_hours
      - confirm: set_business_hours
    then:
      - calls: list_business_hours
      - {calls: {name: set_business_hours, args: {day: saturday}}, name: it closes Saturday}
      - {contains: "18:00", always: true}
    runs: 3
    min_pass: 2
    """

SCRIPT: dict[str, Any] = {"rules": [
    {"match": "horario", "per_turn": True, "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Hoy abrimos de 09:00 a 18:00."}]},
    {"match": "sábado", "per_turn": True, "replies": [
        {"tool_calls": [{"name": "set_business_hours",
                         "arguments": {"day": "saturday", "hours": "closed"}}]},
        {"text": "Listo: los sábados cerrado."}]},
]}


def spawn(cwd: Path, *args: str) -> pexpect.spawn:
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200", "TERM": "dumb"}
    child = pexpect.spawn(sys.executable, ["-m", "dsl", "try", *args], cwd=str(cwd),
                          env=env, encoding="utf-8", timeout=20, dimensions=(50, 250))
    return child


def setup(tmp_path: Path, url: str, **extra: Any) -> Path:
    write(tmp_path / "scenarist.yaml", suite_yaml(url, **extra))
    return write(tmp_path / "close.yaml", SCENARIO)


def expect_lines(child: pexpect.spawn, *lines: str) -> None:
    for line in lines:
        child.expect_exact(line)


def test_a_conversation_with_tools_a_confirmation_save_and_the_checks(
        tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    setup(tmp_path, server.url)
    child = spawn(tmp_path, "close.yaml")
    expect_lines(
        child,
        "Trying close_saturday (close.yaml) with fake (fake-model at "
        f"{server.url}).",
        "It is Tuesday 29 September 2026, 10:00 (UTC-03:00). Fake tools: "
        "list_business_hours, set_business_hours (asks to confirm).",
        "The scenario: The owner closes on Saturdays, after checking the hours.",
        "The scenario's own turns are not played: you are the person.",
        "you: ")
    child.sendline("¿Qué horario tienen hoy?")
    expect_lines(
        child,
        "  tool call: list_business_hours {}",
        '    fake result: {"monday": "09:00-18:00", "tuesday": "09:00-18:00"}',
        "agent: Hoy abrimos de 09:00 a 18:00.",
        "you: ")
    child.sendline("Los sábados cerramos.")
    expect_lines(
        child,
        '  tool call: set_business_hours {"day": "saturday", "hours": "closed"}',
        "    waits for the person to confirm",
        '  confirm set_business_hours {"day": "saturday", "hours": "closed"}? [y/N] ')
    child.sendline("y")
    expect_lines(
        child,
        "  confirmed: set_business_hours ran",
        "    fake result: Hours for saturday updated.",
        "agent: Listo: los sábados cerrado.",
        "you: ")
    child.sendline("/save")
    expect_lines(
        child,
        f"Saved 4 model exchange(s) to {tmp_path / 'cassettes' / 'try-fake.jsonl'}; a "
        "target with kind: replay and cassette: "
        f"{tmp_path / 'cassettes' / 'try-fake.jsonl'} answers this conversation again "
        "offline.",
        "you: ")
    child.sendeof()
    expect_lines(
        child,
        "The scenario's checks on this conversation:",
        "  pass   calls: \"list_business_hours\"",
        "  pass   it closes Saturday",
        "  fail   contains: \"18:00\" (must hold every time)",
        "  (1 check(s) of the scenario's scripted turns are not evaluated: you wrote other "
        "turns)",
        "2 of 3 checks would pass; as an attempt of a run this conversation would be: "
        "fail (1 of 3 checks failed: contains: \"18:00\").")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0

    # the agent saw the scenario's world: its moment in the system prompt, its tools, and
    # the fake result of the confirmed call as the tool result
    last = server.requests()[-1]["body"]
    assert "Tuesday 29 September 2026, 10:00 (UTC-03:00)" in last["messages"][0]["content"]
    assert [t["function"]["name"] for t in last["tools"]] == [
        "list_business_hours", "set_business_hours"]
    assert last["messages"][-1] == {"role": "tool", "tool_call_id": "call_3_0",
                                    "content": "Hours for saturday updated."}
    # the cassette: a header and the four exchanges, keyed as a recording's
    lines = (tmp_path / "cassettes" / "try-fake.jsonl").read_text("utf-8").splitlines()
    assert json.loads(lines[0])["kind"] == "scenarist-cassette"
    assert [len(json.loads(x)["request"]["messages"]) for x in lines[1:]] == [2, 4, 6, 8]


def test_the_saved_conversation_replays_offline(tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    setup(tmp_path, server.url, targets={
        "fake": {"kind": "openai", "base_url": server.url, "model": "fake-model",
                 "retry": {"max_attempts": 1}},
        "again": {"kind": "replay", "cassette": "cassettes/try-fake.jsonl"}})
    child = spawn(tmp_path, "close.yaml", "--target", "fake")
    child.expect_exact("you: ")
    child.sendline("Los sábados cerramos.")
    child.expect_exact("? [y/N] ")
    child.sendline("y")
    child.expect_exact("agent: Listo: los sábados cerrado.")
    child.sendline("/save")
    child.expect_exact("Saved 2 model exchange(s)")
    child.sendline("/quit")
    child.expect(pexpect.EOF)
    before = len(server.requests())

    child = spawn(tmp_path, "close.yaml", "--target", "again")
    child.expect_exact("with again (replay")
    child.expect_exact("you: ")
    child.sendline("Los sábados cerramos.")
    child.expect_exact('  confirm set_business_hours {"day": "saturday", "hours": "closed"}? '
                       "[y/N] ")
    child.sendline("y")
    child.expect_exact("agent: Listo: los sábados cerrado.")
    child.sendline("/quit")
    child.expect_exact("as an attempt of a run this conversation would be: fail")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert len(server.requests()) == before  # nothing was sent: the cassette answered


def test_refusing_a_call_tells_the_agent_it_was_cancelled(tmp_path: Path,
                                                          server: FakeServer) -> None:
    server.script(SCRIPT)
    setup(tmp_path, server.url)
    child = spawn(tmp_path, "close.yaml")
    child.expect_exact("you: ")
    child.sendline("Los sábados cerramos.")
    child.expect_exact("? [y/N] ")
    child.sendline("")  # Enter: the default is no
    expect_lines(child, "  cancelled: set_business_hours was not run",
                 "agent: Listo: los sábados cerrado.", "you: ")
    child.sendline("/quit")
    expect_lines(child, "  pass   it closes Saturday",  # the call was made, then cancelled
                 "  fail   contains: \"18:00\" (must hold every time)",
                 "1 of 3 checks would pass")
    child.expect(pexpect.EOF)
    tool = server.requests()[-1]["body"]["messages"][-1]
    assert tool["role"] == "tool"
    assert tool["content"] == "The person cancelled this call: it was not run."


def test_commands_an_unknown_one_and_nothing_said(tmp_path: Path, server: FakeServer) -> None:
    setup(tmp_path, server.url)
    child = spawn(tmp_path, "close.yaml")
    child.expect_exact("you: ")
    child.sendline("/undo")
    child.expect_exact("There is no command /undo. Write what the person says and press "
                       "Enter. Commands: /save [FILE] keeps this conversation in a "
                       "cassette, /quit (or Ctrl-D) ends it and shows the checks, /help "
                       "shows this.")
    child.sendline("/save")
    child.expect_exact("Nothing new to save: the model has not been asked anything since.")
    child.sendline("/quit")
    child.expect_exact("Nothing was said, so there is nothing to check.")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert server.requests() == []


def test_save_refuses_a_cassette_recorded_with_other_settings(tmp_path: Path,
                                                              server: FakeServer) -> None:
    server.script(SCRIPT)
    setup(tmp_path, server.url)
    other = {"schema_version": 1, "kind": "scenarist-cassette", "target": "x",
             "settings": {"model": "another-model", "temperature": None, "params": {},
                          "system_prompt": ""}}
    write(tmp_path / "old.jsonl", json.dumps(other) + "\n")
    child = spawn(tmp_path, "close.yaml", "--cassette", "old.jsonl")
    child.expect_exact("you: ")
    child.sendline("¿Qué horario tienen hoy?")
    child.expect_exact("agent: ")
    child.sendline("/save")
    child.expect_exact("Not saved: old.jsonl was recorded with other settings (model, "
                       "temperature or system prompt); save to another file with /save "
                       "FILE.")
    child.sendline("/save new.jsonl")
    child.expect_exact("Saved 2 model exchange(s) to new.jsonl")
    child.sendeof()
    child.expect(pexpect.EOF)
    assert (tmp_path / "old.jsonl").read_text("utf-8") == json.dumps(other) + "\n"


def test_save_into_a_file_that_is_not_a_cassette_keeps_the_conversation(
        tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    setup(tmp_path, server.url)
    write(tmp_path / "notes.txt", "my notes\n")
    (tmp_path / "afolder").mkdir()
    child = spawn(tmp_path, "close.yaml")
    child.expect_exact("you: ")
    child.sendline("¿Qué horario tienen hoy?")
    child.expect_exact("agent: Hoy abrimos de 09:00 a 18:00.")
    child.sendline("/save notes.txt")
    child.expect_exact("Not saved: notes.txt is not a cassette (its first line is not a "
                       "cassette header), and /save adds only to a cassette; save to another "
                       "file with /save FILE (the conversation goes on).")
    child.sendline("/save afolder")
    child.expect_exact("Not saved: cannot write afolder: Is a directory; save to another "
                       "file with /save FILE (the conversation goes on).")
    child.sendline("¿Y mañana, qué horario?")
    child.expect_exact("agent: Hoy abrimos de 09:00 a 18:00.")
    write(tmp_path / "empty.jsonl", "")
    child.sendline("/save empty.jsonl")
    child.expect_exact("Saved 4 model exchange(s) to empty.jsonl")
    child.sendeof()
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert (tmp_path / "notes.txt").read_text("utf-8") == "my notes\n"
    saved = (tmp_path / "empty.jsonl").read_text("utf-8").splitlines()
    assert json.loads(saved[0])["kind"] == "scenarist-cassette"
    assert len(saved) == 5


def test_a_dead_endpoint_stops_the_conversation_in_plain_words(tmp_path: Path) -> None:
    setup(tmp_path, "http://127.0.0.1:9/v1")
    child = spawn(tmp_path, "close.yaml")
    child.expect_exact("you: ")
    child.sendline("hola")
    child.expect_exact("The conversation stopped: Scenarist could not reach the endpoint — "
                       "it is not running, or the address in scenarist.yaml is wrong; it "
                       "says nothing about the model, so it counts neither as a pass nor "
                       "as a failure.")
    child.expect_exact("  what the endpoint said: ")
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 3


def test_ctrl_c_ends_without_a_traceback(tmp_path: Path, server: FakeServer) -> None:
    setup(tmp_path, server.url)
    child = spawn(tmp_path, "close.yaml")
    child.expect_exact("you: ")
    child.sendintr()
    child.expect_exact("Interrupted: nothing was checked.")
    child.expect(pexpect.EOF)
    assert "Traceback" not in (child.before or "")
    child.close()
    assert child.exitstatus == 130


def test_a_python_agent_can_be_tried_but_not_saved(tmp_path: Path, server: FakeServer) -> None:
    write(tmp_path / "bot.py", """
        def answer(env):
            if env.confirmed:
                return "Done: " + env.confirmed[0].output
            if "sábado" in env.message:
                env.tools["set_business_hours"](day="saturday", hours="closed")
                return {"answer": "¿Confirmás?", "pending": []}
            return "Hoy hasta las 18:00."
        """)
    setup(tmp_path, server.url, targets={
        "bot": {"kind": "python", "entry": "bot:answer"}})
    child = spawn(tmp_path, "close.yaml")
    child.expect_exact("with bot (python bot:answer).")
    child.expect_exact("you: ")
    child.sendline("Los sábados cerramos.")
    child.expect_exact("agent: ¿Confirmás?")
    child.expect_exact("? [y/N] ")
    child.sendline("yes")
    child.expect_exact("agent: Done: Hours for saturday updated.")
    child.sendline("/save")
    child.expect_exact("This target is your own agent (kind: python): its conversations "
                       "cannot be saved to a cassette.")
    child.sendline("/quit")
    child.expect_exact("  pass   it closes Saturday")
    child.expect(pexpect.EOF)


@pytest.mark.parametrize(("files", "args", "message"), [
    ({"scenarist.yaml": "TWO"}, ["close.yaml"],
     "scenarist.yaml:2:3: error E207 scenarist.yaml defines several targets ('a' and 'b') "
     "and no default one\n  2 |   \"targets\": {\n    |   ^\n  hint: choose one with "
     "--target NAME, or set defaults.target in scenarist.yaml\n"),
    ({}, ["close.yaml", "--scenario", "nope"],
     "error: close.yaml has no scenario 'nope' (it has: close_saturday)\n"),
])
def test_choices_to_make_are_said(tmp_path: Path, files: dict[str, str], args: list[str],
                                  message: str) -> None:
    url = "http://127.0.0.1:9/v1"
    setup(tmp_path, url)
    if files:
        write(tmp_path / "scenarist.yaml", suite_yaml(url, targets={
            "a": {"kind": "openai", "base_url": url, "model": "m"},
            "b": {"kind": "openai", "base_url": url, "model": "m"}}))
    r = run_cli("try", *args, cwd=tmp_path)
    assert (r.exit_code, r.stderr) == (2, message)


def test_a_scenario_with_a_mistake_is_linted_first(tmp_path: Path) -> None:
    setup(tmp_path, "http://127.0.0.1:9/v1")
    write(tmp_path / "close.yaml", SCENARIO.replace("-03:00", ""))
    r = run_cli("try", "close.yaml", cwd=tmp_path)
    assert r.exit_code == 2
    assert "close.yaml:4:7: error E203" in r.output + r.stderr


def call(name: str, i: int) -> Call:
    return Call(f"c{i}", name, {"n": i}, "{}", None, "update", True, None, 1)


def test_confirming_some_held_calls_cancels_the_others() -> None:
    calls = [call("a", 0), call("b", 1), call("a", 2)]

    class _S:
        at = None

        def tool(self, name: str) -> None:
            return None

    done = settle(calls, "confirm", "all", _S(), pick={0, 1})  # type: ignore[arg-type]
    assert [(c.name, c.decision, c.output) for c in done.calls] == [
        ("a", "confirmed", "OK"), ("b", "confirmed", "OK"),
        ("a", "cancelled", "The person cancelled this call: it was not run.")]
    assert done.decided == (0, 1, 2)


def test_a_missing_api_key_is_said_before_anything_is_sent(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SCENARIST_TRY_KEY", raising=False)
    url = "http://127.0.0.1:9/v1"
    setup(tmp_path, url, targets={"keyed": {"kind": "openai", "base_url": url, "model": "m",
                                            "api_key_env": "SCENARIST_TRY_KEY"}})
    r = run_cli("try", "close.yaml", cwd=tmp_path)
    assert (r.exit_code, r.stderr) == (
        2, "error: the target 'keyed' reads its API key from the environment variable "
           "SCENARIST_TRY_KEY, which is not set\n")
