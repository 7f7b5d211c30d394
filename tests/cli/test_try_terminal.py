"""``scenarist try`` never passes a model's or a tool's terminal escape sequences to the
person's terminal (a window title, a screen clear, colours, a carriage return): through a
real pseudo-terminal, against the scripted server process."""

from __future__ import annotations

from pathlib import Path

import pexpect

from tests.cli.test_try import expect_lines, spawn
from tests.conftest import FakeServer, suite_yaml, write

HOSTILE = "Hoy \x1b]0;pwned\x07abrimos \x1b[2J\x1b[31mhasta\x1b[0m las \x9b1m18:00.\rX"


def test_model_and_tool_text_reach_the_terminal_without_control_sequences(
        tmp_path: Path, server: FakeServer) -> None:
    server.script({"rules": [{"match": "horario", "per_turn": True, "replies": [
        {"tool_calls": [{"name": "list_business_hours\x1b[2J", "arguments": {}}]},
        {"text": HOSTILE}]}]})
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "hours.yaml", """
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when: "¿Qué horario tienen hoy?"
then:
  - contains: "18:00"
""")
    child = spawn(tmp_path, "hours.yaml")
    child.expect_exact("you: ")
    child.sendline("¿Qué horario tienen hoy?")
    expect_lines(child, "  tool call: list_business_hours {}",
                 "agent: Hoy abrimos hasta las 18:00.\\x0dX", "you: ")
    seen = child.before or ""
    child.sendeof()
    child.expect(pexpect.EOF)
    shown = seen + (child.before or "")
    for sequence in ("\x1b]0;", "\x1b[2J", "\x1b[31m", "\x9b", "\x07", "\r"):
        assert sequence not in shown.replace("\r\n", "\n"), repr(sequence)
