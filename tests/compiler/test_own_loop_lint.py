"""Lint of the targets that run their own loop (``kind: http``, ``kind: command``): every
mistake located, in words, and the plan that shows them."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli, write

SCENARIO = """
given:
  at: 2026-09-29T10:00:00-03:00
when: hi
then: [non_empty]
"""


def lint(tmp_path: Path, suite: str) -> str:
    write(tmp_path / "scenarist.yaml", suite)
    write(tmp_path / "a.yaml", SCENARIO)
    return str(run_cli("lint", ".", cwd=tmp_path).output)


def test_a_body_that_reads_a_name_a_turn_does_not_have(tmp_path: Path) -> None:
    out = lint(tmp_path, """
targets:
  svc:
    kind: http
    url: http://127.0.0.1:8000/chat
    body:
      message: "{{ mesage }}"
      nested: {when: "at {{ at }} in {{ sesion }}"}
      broken: "{{ message "
""")
    names = ("message, turn, session, mcp_url, at, seed, scenario, system, messages, "
             "confirmed, cancelled")
    assert out == f"""\
scenarist.yaml:6:20: error E208 the body of the target 'svc' reads 'mesage', which is not a value of a turn; did you mean 'message'?
  6 |       message: "{{{{ mesage }}}}"
    |                    ^
  hint: the names are {names}
scenarist.yaml:7:41: error E208 the body of the target 'svc' reads 'sesion', which is not a value of a turn; did you mean 'session'?
  7 |       nested: {{when: "at {{{{ at }}}} in {{{{ sesion }}}}"}}
    |                                         ^
  hint: the names are {names}
scenarist.yaml:8:16: error E208 a template in the body of the target 'svc' does not compile: unexpected end of template, expected 'end of print statement'.
  8 |       broken: "{{{{ message "
    |                ^
  hint: write a value as {{{{ message }}}}; the names are {names}
1 file(s): 3 error(s), 0 warning(s)
"""


def test_a_command_that_is_not_a_list_and_paths_that_are_not_dotted(tmp_path: Path) -> None:
    out = lint(tmp_path, """
targets:
  svc:
    kind: http
    url: http://127.0.0.1:8000/chat
    answer: "reply..text"
    pending: "held items"
  cmd:
    kind: command
    command: node agent.js
""")
    assert out == """\
scenarist.yaml:5:13: error S105 'answer' in targets.svc has an invalid form: "reply..text"
  5 |     answer: "reply..text"
    |             ^
  hint: write a dotted path to the value in the reply, e.g. reply or output.text
scenarist.yaml:6:14: error S105 'pending' in targets.svc has an invalid form: "held items"
  6 |     pending: "held items"
    |              ^
  hint: write a dotted path to the value in the reply, e.g. reply or output.text
scenarist.yaml:9:14: error S103 'command' in targets.cmd must be a list, not text ("node agent.js")
  9 |     command: node agent.js
    |              ^
  hint: write the program and its arguments as a list: [node, agent.js]
1 file(s): 3 error(s), 0 warning(s)
"""


def test_the_plan_shows_the_new_kinds(tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml", """
targets:
  svc: {kind: http, url: "http://127.0.0.1:8000/chat"}
  cmd: {kind: command, command: [node, agent.js]}
""")
    write(tmp_path / "a.yaml", SCENARIO)
    out = run_cli("plan", ".", "--target", "svc", "--target", "cmd", cwd=tmp_path).output
    assert ("[svc (agent service at http://127.0.0.1:8000/chat), cmd (command node "
            "agent.js)]") in out
