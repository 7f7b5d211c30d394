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


NOTHING_TO_CONFIRM = """
given:
  at: 2026-09-29T10:00:00-03:00
  tools:
    - name: get_card
      description: Read a card.
      returns: "card C-1"
when: hi
then:
  - asks_nothing_to_confirm
"""


def test_asks_nothing_to_confirm_is_not_said_to_never_fail_for_agents_that_hold_calls(
        tmp_path: Path) -> None:
    """Issue 32, item 15: an agent that runs its own loop may hold a call for the person's
    yes itself (its ``pending``), whatever the tools say — so the check can fail, and W404
    ("can never fail") was false for it."""
    write(tmp_path / "a.yaml", NOTHING_TO_CONFIRM)
    for target in ("{kind: http, url: 'http://127.0.0.1:8000/chat', pending: held}",
                   "{kind: command, command: [python3, agent.py]}",
                   "{kind: python, entry: 'agent:run'}"):
        write(tmp_path / "scenarist.yaml", f"targets:\n  svc: {target}\n")
        r = run_cli("lint", ".", cwd=tmp_path)
        assert r.output == "1 file(s): 0 error(s), 0 warning(s)\n", (target, r.output)
    # an http service whose replies say no pending, and a model endpoint: it cannot fail
    for target in ("{kind: http, url: 'http://127.0.0.1:8000/chat'}",
                   "{kind: openai, base_url: 'http://127.0.0.1:9/v1', model: m}"):
        write(tmp_path / "scenarist.yaml", f"targets:\n  svc: {target}\n")
        r = run_cli("lint", ".", cwd=tmp_path)
        assert r.output.splitlines()[0] == (
            "a.yaml:9:5: warning W404 asks_nothing_to_confirm can never fail here: no tool of "
            "the scenario has confirm: true, so the agent is never stopped to ask"), target
    # a scenario meant only for the model endpoint, in a suite that also has a command agent
    write(tmp_path / "scenarist.yaml",
          "targets:\n  model: {kind: openai, base_url: 'http://127.0.0.1:9/v1', model: m}\n"
          "  agent: {kind: command, command: [python3, agent.py]}\n"
          "defaults: {target: model}\n")
    write(tmp_path / "a.yaml", NOTHING_TO_CONFIRM + "targets: [model]\n")
    assert " W404 " in run_cli("lint", ".", cwd=tmp_path).output
