"""``scenarist try`` (dsl/pipeline/tryout.py), function by function: the session a file
gives, what the person reads first, a conversation played through :func:`play` with the
terminal's two functions scripted (the model is the scripted server, over HTTP), the
``/commands``, ``/save`` and the closing check lines. The command in a real terminal is in
tests/cli/test_try.py."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from typing import Any

import pytest

from dsl.errors import explain
from dsl.pipeline.tryout import (
    HELP,
    SHOWN,
    NotTryable,
    Outcome,
    Session,
    Terminal,
    check_lines,
    intro,
    play,
    session_for,
)
from dsl.store.records import CheckResult
from dsl.targets.kinds import describe
from tests.cli.test_try import SCRIPT  # the model's side of these conversations
from tests.conftest import FakeServer, suite_yaml, write

SCENARIO = """
    id: close_saturday
    description: The owner closes on Saturdays.
    given:
      at: 2026-09-29T10:00:00-03:00
      tools: [list_business_hours, set_business_hours]
      history:
        - user: Hola, soy la dueña.
        - assistant: Buen día, ¿en qué la ayudo?
    when:
      - say: "Los sábados cerramos."
        then:
          - asks_to_confirm: set_business_hours
      - confirm: set_business_hours
    then:
      - calls: list_business_hours
      - {contains: "18:00", always: true}
    """

CASES = """
    id: ask
    given: {at: 2026-09-29T10:00:00-03:00}
    when: "{{ question }}"
    then: [non_empty]
    cases:
      - {id: a, question: Hola}
      - {id: b, question: Chau}
    """

class Typed(Terminal):
    """The person at the terminal: the lines they type (then Ctrl-D), and what they read."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.said: list[str] = []
        self.prompts: list[str] = []
        super().__init__(self.said.append, self._ask)

    def _ask(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def session(tmp_path: Path, url: str, **extra: Any) -> Session:
    write(tmp_path / "scenarist.yaml", suite_yaml(url, **extra))
    write(tmp_path / "close.yaml", SCENARIO)
    return session_for(tmp_path / "close.yaml", None, None, None)


def test_session_for_one_scenario(tmp_path: Path, server: FakeServer) -> None:
    s = session(tmp_path, server.url)
    assert (s.scenario.id, s.target.name) == ("close_saturday", "fake")
    assert s.cassette == tmp_path.resolve() / "cassettes" / "try-fake.jsonl"
    chosen = session_for(tmp_path / "close.yaml", "fake", "close_saturday", tmp_path / "c.jsonl")
    assert chosen.cassette == tmp_path / "c.jsonl"


def test_session_for_says_which_scenario_to_choose(tmp_path: Path, server: FakeServer) -> None:
    session(tmp_path, server.url)
    write(tmp_path / "ask.yaml", CASES)
    with pytest.raises(NotTryable) as caught:
        session_for(tmp_path / "ask.yaml", None, None, None)
    assert str(caught.value) == (f"{tmp_path / 'ask.yaml'} holds 2 scenarios (ask[a], ask[b]); "
                                 "choose one with --scenario ID")
    with pytest.raises(NotTryable) as caught:
        session_for(tmp_path / "ask.yaml", None, "ask[c]", None)
    assert str(caught.value) == (f"{tmp_path / 'ask.yaml'} has no scenario 'ask[c]' (it has: "
                                 "ask[a], ask[b])")
    assert session_for(tmp_path / "ask.yaml", None, "ask[b]", None).scenario.message == "Chau"


def test_intro(tmp_path: Path, server: FakeServer) -> None:
    s = session(tmp_path, server.url)
    assert intro(s) == [
        f"Trying close_saturday ({s.scenario.file}) with fake ({describe(s.target)}).",
        "It is Tuesday 29 September 2026, 10:00 (UTC-03:00). Fake tools: list_business_hours, "
        "set_business_hours (asks to confirm).",
        "The scenario: The owner closes on Saturdays.",
        "The scenario's own turns are not played: you are the person.",
        "(earlier) you: Hola, soy la dueña.",
        "(earlier) agent: Buen día, ¿en qué la ayudo?",
        HELP,
    ]


def test_a_conversation_with_a_tool_call_and_its_checks(tmp_path: Path,
                                                         server: FakeServer) -> None:
    server.script(SCRIPT)
    typed = Typed("  ", "¿Qué horario tienen hoy?")
    outcome = play(session(tmp_path, server.url), typed)
    assert typed.said == [
        "  tool call: list_business_hours {}",
        '    fake result: {"monday": "09:00-18:00", "tuesday": "09:00-18:00"}',
        "agent: Hoy abrimos de 09:00 a 18:00.",
        "",  # Ctrl-D
    ]
    assert typed.prompts == ["you: "] * 3
    assert outcome.data is not None
    assert (outcome.status, outcome.skipped_turn_checks) == ("pass", 1)
    assert [(c.label, c.status) for c in outcome.checks] == [
        ('calls: "list_business_hours"', "pass"), ('contains: "18:00"', "pass")]
    assert check_lines(outcome) == [
        "",
        "The scenario's checks on this conversation:",
        '  pass   calls: "list_business_hours"',
        '  pass   contains: "18:00" (must hold every time)',
        "  (1 check(s) of the scenario's scripted turns are not evaluated: you wrote other "
        "turns)",
        f"2 of 2 checks would pass; as an attempt of a run this conversation would be: pass "
        f"({outcome.reason}).",
    ]
    # the scenario's history came before what the person typed
    sent = server.requests()[0]["body"]["messages"]
    assert [m["content"] for m in sent[1:]] == ["Hola, soy la dueña.",
                                                 "Buen día, ¿en qué la ayudo?",
                                                 "¿Qué horario tienen hoy?"]


@pytest.mark.parametrize(("answer", "lines"), [
    ("y", ["  confirmed: set_business_hours ran",
           "    fake result: Hours for saturday updated.",
           "agent: Listo: los sábados cerrado."]),
    ("no", ["  cancelled: set_business_hours was not run",
            "agent: Listo: los sábados cerrado."]),
])
def test_a_held_call_is_asked_about(tmp_path: Path, server: FakeServer, answer: str,
                                    lines: list[str]) -> None:
    server.script(SCRIPT)
    typed = Typed("Los sábados cerramos.", answer, "/quit")
    outcome = play(session(tmp_path, server.url), typed)
    assert typed.prompts == [
        "you: ", '  confirm set_business_hours {"day": "saturday", "hours": "closed"}? [y/N] ',
        "you: "]
    assert typed.said == [
        '  tool call: set_business_hours {"day": "saturday", "hours": "closed"}',
        "    waits for the person to confirm",
        *lines,
    ]
    assert outcome.data is not None
    assert [t.kind for t in outcome.data.turns] == ["say", "confirm" if answer == "y"
                                                    else "cancel"]


def test_ctrl_d_at_the_question_leaves_the_call_waiting(tmp_path: Path,
                                                        server: FakeServer) -> None:
    server.script(SCRIPT)
    typed = Typed("Los sábados cerramos.")
    outcome = play(session(tmp_path, server.url), typed)
    assert outcome.data is not None
    (call,) = outcome.data.calls
    assert (call.name, call.pending) == ("set_business_hours", True)
    assert typed.said[-1] == ""


def test_nothing_said(tmp_path: Path, server: FakeServer) -> None:
    typed = Typed("", "/nope", "/help", "/save", "/quit")
    outcome = play(session(tmp_path, server.url), typed)
    assert typed.said == [f"There is no command /nope. {HELP}", HELP,
                          "Nothing new to save: the model has not been asked anything since."]
    assert (outcome.data, outcome.checks, outcome.status, outcome.reason) == (
        None, (), "none", "nothing was said")
    assert check_lines(outcome) == ["Nothing was said, so there is nothing to check."]
    assert server.requests() == []


def test_save_appends_what_is_new_to_the_cassette(tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    s = session(tmp_path, server.url)
    typed = Typed("¿Qué horario tienen hoy?", "/save", "/save", "¿Y el horario del lunes?",
                  "/save", "/quit")
    play(s, typed)
    dest = s.cassette
    replay = (f"a target with kind: replay and cassette: {dest} answers this conversation "
              "again offline.")
    assert [line for line in typed.said if not line.startswith(("  ", "agent:"))] == [
        f"Saved 2 model exchange(s) to {dest}; {replay}",
        "Nothing new to save: the model has not been asked anything since.",
        f"Saved 2 model exchange(s) to {dest}; {replay}",
    ]
    lines = dest.read_text("utf-8").splitlines()
    assert len(lines) == 5  # the header once, then four exchanges
    assert json.loads(lines[0])["settings"]["model"] == "fake-model"


def test_save_refuses_a_cassette_of_other_settings(tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    s = session(tmp_path, server.url)
    other = tmp_path / "other.jsonl"
    play(s, Typed("¿Qué horario tienen hoy?", f"/save {other}"))
    header, *exchanges = other.read_text("utf-8").splitlines()
    recorded = json.loads(header)
    recorded["settings"]["model"] = "another-model"  # as if recorded with another model
    kept = "".join(line + "\n" for line in (json.dumps(recorded), *exchanges))
    other.write_text(kept, "utf-8")
    typed = Typed("¿Qué horario tienen hoy?", f"/save {other}", "/quit")
    play(s, typed)
    assert typed.said[-1] == (f"Not saved: {other} was recorded with other settings (model, "
                              "temperature or system prompt); save to another file with "
                              "/save FILE.")
    assert other.read_text("utf-8") == kept


def test_a_dead_endpoint_stops_the_conversation(tmp_path: Path, server: FakeServer) -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]  # closed again at once: nothing listens there
    s = session(tmp_path, f"http://127.0.0.1:{port}/v1")
    typed = Typed("Hola")
    outcome = play(s, typed)
    assert outcome.error is not None
    assert (outcome.status, outcome.data, outcome.reason) == ("error", None,
                                                               outcome.error.message)
    assert typed.said == [f"The conversation stopped: {explain(outcome.error.kind)}",
                          f"  what the endpoint said: {outcome.error.message}"]
    assert check_lines(outcome) == []


def test_a_long_tool_result_is_cut(tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    long = "x" * (SHOWN + 7)
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    text = (tmp_path / "scenarist.yaml").read_text("utf-8")
    data = json.loads(text)
    data["tools"]["list_business_hours"]["returns"] = long
    (tmp_path / "scenarist.yaml").write_text(json.dumps(data), "utf-8")
    write(tmp_path / "close.yaml", SCENARIO)
    typed = Typed("¿Qué horario tienen hoy?")
    play(session_for(tmp_path / "close.yaml", None, None, None), typed)
    assert typed.said[1] == f"    fake result: {'x' * SHOWN}… (7 more characters)"


def test_check_lines_of_a_failed_conversation(tmp_path: Path, server: FakeServer) -> None:
    data = play(session(tmp_path, server.url), Typed("Hola")).data
    checks = (CheckResult("calls", "calls: list_business_hours", "fail",
                          "list_business_hours was never called"),
              CheckResult("contains", 'contains: "18:00"', "pass", "", always=True))
    outcome = Outcome(data, checks, "fail", "1 of 2 checks failed", 0)
    assert check_lines(outcome) == [
        "",
        "The scenario's checks on this conversation:",
        "  fail   calls: list_business_hours",
        "         list_business_hours was never called",
        '  pass   contains: "18:00" (must hold every time)',
        "1 of 2 checks would pass; as an attempt of a run this conversation would be: fail "
        "(1 of 2 checks failed).",
    ]
    none = Outcome(data, (), "pass", "no checks", 0)
    assert check_lines(none)[2:] == [
        "  (the scenario has no checks of its own)",
        "0 of 0 checks would pass; as an attempt of a run this conversation would be: pass "
        "(no checks)."]
