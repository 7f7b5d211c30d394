"""``anywhere: true`` on contains, matches and not_contains, and ``ignore_commas: true`` on
contains (issue 33 item 5), through the command line against the scripted server: the
required text in an earlier message of the conversation, "$1,093.34" containing "1093.34",
the text beside a tool call, a turn's own check, given.history left out, every failure
word for word."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.conftest import FakeServer, records_of, run_cli, suite_yaml, the_run, write


def talk(server: FakeServer, *answers: str, beside: str | None = None) -> None:
    """Each turn is answered with the next of ``answers``; with ``beside``, the first
    turn first calls a tool with that text beside the call."""
    rules = [{"match": f"turn {i}", "per_turn": True,
              "replies": [{"text": a}]} for i, a in enumerate(answers, 1)]
    if beside is not None:
        rules[0]["replies"] = [{"tool_calls": [{"name": "list_business_hours",
                                                "arguments": {}}], "text": beside},
                               {"text": answers[0]}]
    server.script({"rules": rules, "default": [{"text": "OK"}]})


def scenario(then: str, turns: int = 3, history: bool = False) -> str:
    said = "\n".join(f"  - turn {i}" for i in range(1, turns + 1))
    past = ("  history:\n    - user: earlier\n"
            "    - assistant: 'Refund of $1,093.34 and polyester.'\n"
            if history else "")
    return ("given:\n  at: 2026-09-29T10:00:00-03:00\n  tools: [list_business_hours]\n"
            + past + f"when:\n{said}\nthen:\n{then}runs: 1\nmin_pass: 1\n")


def outcomes(tmp_path: Path, server: FakeServer, text: str) -> list[tuple[str, str]]:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "talk.yaml", text)
    r = run_cli("run", ".", "--out", "runs", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code in (0, 1), r.output
    (rec,) = records_of(the_run(tmp_path / "runs"))
    return [(c["status"], c["reason"]) for c in rec["checks"]]


def test_contains_anywhere_finds_an_earlier_message_and_ignore_commas_the_amount(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    talk(server, "You will get back $1,093.34 in total.", "The shirt is Polyester.",
         "Anything else?")
    got = outcomes(tmp_path, server, scenario(
        "  - contains: {text: '1093.34', anywhere: true, ignore_commas: true}\n"
        "  - contains: {text: '1093.34', anywhere: true}\n"
        "  - contains: '1093.34'\n"
        "  - contains: {text: [polyester, '$1,093'], anywhere: true, ignore_case: true}\n"))
    assert got == [
        ("pass", "a message of the agent contains \"1093.34\" (ignoring commas)"),
        ("fail", "expected a message of the agent to contain \"1093.34\"; none of its 3 "
                 "messages did; the last was \"Anything else?\""),
        ("fail", "expected the answer to contain \"1093.34\"; the answer was \"Anything "
                 "else?\""),
        ("pass", "a message of the agent contains \"polyester\", \"$1,093\" (ignoring case)"),
    ]


def test_ignore_commas_works_on_both_sides(tmp_path: Path, server: FakeServer,
                                           cli_env: dict[str, str]) -> None:
    talk(server, "Total: 1093.34")
    got = outcomes(tmp_path, server, scenario(
        "  - contains: {text: '1,093.34', ignore_commas: true}\n"
        "  - contains: '1,093.34'\n", turns=1))
    assert got == [("pass", "the answer contains \"1,093.34\" (ignoring commas)"),
                   ("fail", "expected the answer to contain \"1,093.34\"; the answer was "
                            "\"Total: 1093.34\"")]


def test_not_contains_and_matches_anywhere(tmp_path: Path, server: FakeServer,
                                           cli_env: dict[str, str]) -> None:
    talk(server, "Your card number is 4242.", "Order #W2417020 is cancelled.", "Bye.")
    got = outcomes(tmp_path, server, scenario(
        "  - not_contains: {text: '4242', anywhere: true}\n"
        "  - not_contains: '4242'\n"
        "  - matches: {pattern: '#W[0-9]{7}', anywhere: true}\n"
        "  - matches: '#W[0-9]{7}'\n"
        "  - not_contains: {text: secret, anywhere: true}\n"))
    assert got == [
        ("fail", "expected no message of the agent to contain \"4242\"; message 1 of the "
                 "agent contains it at character 21: \"Your card number is 4242.\""),
        ("pass", "the answer does not contain \"4242\""),
        ("pass", "message 2 of the agent matches '#W[0-9]{7}' at \"#W2417020\""),
        ("fail", "expected the answer to match '#W[0-9]{7}'; the answer was \"Bye.\""),
        ("pass", "no message of the agent contains \"secret\""),
    ]


def test_the_text_beside_a_tool_call_counts_and_given_history_does_not(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    talk(server, "Done.", beside="Let me look up the hours; the store is on 5th Avenue.")
    got = outcomes(tmp_path, server, scenario(
        "  - contains: {text: 5th Avenue, anywhere: true}\n"
        "  - contains: {text: polyester, anywhere: true}\n", turns=1, history=True))
    assert got == [
        ("pass", "a message of the agent contains \"5th Avenue\""),
        ("fail", "expected a message of the agent to contain \"polyester\"; none of its 2 "
                 "messages did; the last was \"Done.\""),
    ]


def test_a_turns_own_check_sees_the_messages_up_to_that_turn(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    talk(server, "Hello.", "It costs 17.99.")
    text = ("given:\n  at: 2026-09-29T10:00:00-03:00\nwhen:\n"
            "  - say: turn 1\n    then:\n      - contains: {text: '17.99', anywhere: true}\n"
            "  - say: turn 2\n    then:\n      - contains: {text: '17.99', anywhere: true}\n"
            "then: [non_empty]\nruns: 1\nmin_pass: 1\n")
    got = outcomes(tmp_path, server, text)
    assert got[:2] == [
        ("fail", "expected a message of the agent to contain \"17.99\"; none of its 1 "
                 "message did; the last was \"Hello.\""),
        ("pass", "a message of the agent contains \"17.99\""),
    ]


def test_lint_says_which_checks_take_anywhere_and_ignore_commas(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "bad.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hi\nthen:\n"
          "  - equals: {text: hi, anywhere: true}\n"
          "  - not_contains: {text: hi, ignore_commas: true}\n"
          "  - matches: {pattern: hi, anywher: true}\n")
    r = run_cli("lint", "bad.yaml", cwd=tmp_path)
    assert r.exit_code == 1
    out: Any = r.output
    assert ("bad.yaml:5:24: error S102 the check 'equals' does not take 'anywhere'; "
            "'contains', 'matches' and 'not_contains' do") in out
    assert ("bad.yaml:6:30: error S102 the check 'not_contains' does not take "
            "'ignore_commas'; 'contains' does; did you mean 'ignore_case'?") in out
    assert ("bad.yaml:7:28: error S102 unknown key 'anywher' in the check 'matches'; did you "
            "mean 'anywhere'?") in out


def test_recheck_gives_the_same_verdicts(tmp_path: Path, server: FakeServer,
                                         cli_env: dict[str, str]) -> None:
    talk(server, "Refund: $1,093.34.", "Your card 4242 is fine.", "Bye.",
         beside="Checking the hours.")
    got = outcomes(tmp_path, server, scenario(
        "  - contains: {text: '1093.34', anywhere: true, ignore_commas: true}\n"
        "  - not_contains: {text: '4242', anywhere: true}\n"
        "  - matches: {pattern: 'Checking', anywhere: true}\n", history=True))
    assert [s for s, _ in got] == ["pass", "fail", "pass"]
    r = run_cli("recheck", str(the_run(tmp_path / "runs")), "--out", "again", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    (rec,) = records_of(the_run(tmp_path / "again"))
    assert [(c["status"], c["reason"]) for c in rec["checks"]] == got
