"""Data-driven cases with what main added beside them, through the real command line
against the scripted server: a check's ``name:`` and ``always:`` read a case, an
attachment's path on a conversation's turn reads a case, a fake tool's answers for a case
file are checked against the tool's input_schema (once, not once per case), and the ids
``ID[CASE]`` in the history, ``scenarist diff`` and ``scenarist recheck``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from dsl.cli import main
from tests.conftest import FakeServer, records_of, run_cli, suite_yaml, the_run, write

PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
                    "53de0000000c4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44"
                    "ae426082")

HOURS = """
id: hours
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [list_business_hours]
when:
  - say: "{{ question }}"
    attachments:
      - {path: "files/{{ id }}.txt", kind: file, label: "notes in {{ id }}"}
    then:
      - {contains: "{{ closes }}", name: "says {{ closes }} in {{ id }}", always: true}
  - "¿Y mañana?"
then:
  - {not_contains: "cerrado", name: "never closed for {{ id }}"}
cases:
  - {id: es, question: "¿Hasta qué hora el sábado?", closes: "13:00"}
  - {id: en, question: "Until when on Saturday?", closes: "12:00"}
runs: 2
min_pass: 1
"""

ANSWERS = {"rules": [{"match": "Saturday", "replies": [{"text": "Until 13:00."}]}],
           "default": [{"text": "Hasta las 13:00."}]}


def hours(tmp_path: Path, server: FakeServer) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "hours.yaml", HOURS)
    write(tmp_path / "files" / "es.txt", "Notas del paciente.\n")
    write(tmp_path / "files" / "en.txt", "The patient's notes.\n")


def summary(run_dir: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((run_dir / "summary.json").read_text())
    return data


def test_a_checks_name_and_always_and_a_turns_attachment_read_the_case(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    hours(tmp_path, server)
    plan = json.loads(run_cli("plan", ".", "--json", cwd=tmp_path).output)
    labels = {s["id"]: [(c["label"], c.get("always", False), c.get("named", False))
                        for c in s["checks"]] for s in plan["scenarios"]}
    assert labels == {
        "hours[es]": [("turn 1 · says 13:00 in es", True, True),
                      ("never closed for es", False, True)],
        "hours[en]": [("turn 1 · says 12:00 in en", True, True),
                      ("never closed for en", False, True)]}
    turns = {s["id"]: s["turns"][0]["attachments"][0] for s in plan["scenarios"]}
    assert (turns["hours[es]"]["path"], turns["hours[es]"]["label"]) == (
        "files/es.txt", "notes in es")
    assert (turns["hours[en]"]["path"], turns["hours[en]"]["label"]) == (
        "files/en.txt", "notes in en")

    server.script(ANSWERS)
    r = run_cli("run", ".", "--no-early-stop", cwd=tmp_path)
    assert r.exit_code == 1, r.output
    run_dir = the_run(tmp_path / "runs")
    verdicts = {row["scenario"]: (row["verdict"], row["passes"], row["verdict_reason"])
                for row in summary(run_dir)["scenarios"]}
    # en: its always check (its name read from the case) failed
    assert verdicts == {"hours[es]": ("pass", 2, "min_pass"),
                        "hours[en]": ("fail", 0, "always_broken")}
    firsts = [req["body"]["messages"][1] for req in server.requests()
              if len(req["body"]["messages"]) == 2]
    assert sorted(m["content"][1]["text"] for m in firsts) == [
        "Attached file: notes in en\n\nThe patient's notes.\n",
        "Attached file: notes in en\n\nThe patient's notes.\n",
        "Attached file: notes in es\n\nNotas del paciente.\n",
        "Attached file: notes in es\n\nNotas del paciente.\n"]
    failed = {c["label"] for rec in records_of(run_dir) if rec["scenario"] == "hours[en]"
              for c in rec["checks"] if c["status"] == "fail"}
    assert failed == {"turn 1 · says 12:00 in en"}
    assert "says 12:00 in en" in r.output


def test_a_tools_answers_in_a_case_file_are_checked_once_against_its_schema(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "find.yaml", """
        given:
          at: 2026-09-29T10:00:00-03:00
          tools:
            - name: find_patient
              description: Find a patient by document number.
              input_schema: {type: object, properties: {document: {type: string}}}
              answers:
                - when: {documnet: "{{ doc }}"}
                  returns: {found: true}
        when: "Mi documento es {{ doc }}."
        then:
          - calls: find_patient
        cases:
          - {doc: "123"}
          - {doc: "456"}
          - {doc: "789"}
        """)
    r = run_cli("lint", ".", cwd=tmp_path)
    assert r.exit_code == 1
    found = [line for line in r.output.splitlines() if " E232 " in line]
    # the key is misspelt whatever the case: said once, at the key, about no case
    assert found == ["find.yaml:8:18: error E232 the tool 'find_patient' has no argument "
                     "'documnet'; did you mean 'document'?"]
    assert r.output.splitlines()[-1] == "1 file(s): 1 error(s), 3 warning(s)"


def test_case_ids_in_the_history_diff_and_recheck(tmp_path: Path, server: FakeServer,
                                                  cli_env: dict[str, str]) -> None:
    hours(tmp_path, server)
    server.script(ANSWERS)
    assert run_cli("run", ".", "--no-early-stop", cwd=tmp_path).exit_code == 1
    (base,) = sorted((tmp_path / "runs").iterdir())
    server.script({"rules": [], "default": [{"text": "Until 12:00, hasta las 13:00."}]})
    assert run_cli("run", ".", "--no-early-stop", cwd=tmp_path).exit_code == 0
    new = sorted((tmp_path / "runs").iterdir())[-1]

    listed = run_cli("runs", "list", "--scenario", "hours[en]", "--target", "fake",
                     cwd=tmp_path)
    assert listed.exit_code == 0, listed.output
    lines = listed.output.splitlines()
    results = [line.split()[:3] for line in lines if line.startswith("    ")]
    assert results == [["PASS", "fake", "2/2"], ["FAIL", "fake", "0/2"]]  # newest first

    diff = json.loads(run_cli("diff", str(base), str(new), "--format", "json",
                              cwd=tmp_path).output)
    moved = {c["scenario"]: (c["status"], c["before"]["verdict"], c["now"]["verdict"])
             for c in diff["changes"]}
    assert moved.keys() == {"hours[es]", "hours[en]"}
    assert moved["hours[en]"][1:] == ("fail", "pass")
    assert moved["hours[es]"] == ("unchanged", "pass", "pass")

    server.script({"rules": []})
    scenario = tmp_path / "hours.yaml"
    written = scenario.read_text("utf-8")
    scenario.write_text(written.replace('closes: "12:00"', 'closes: "13:00"'), "utf-8")
    refused = run_cli("recheck", str(base), cwd=tmp_path)
    assert refused.exit_code == 0, refused.output  # hours[es] is rechecked
    assert ("refused hours[en]: its given or when changed since the run (the case's "
            "values: closes): its transcripts answer a different question; run it again "
            "with scenarist run") in refused.output.splitlines()
    scenario.write_text(written.replace(
        '{contains: "{{ closes }}", name: "says {{ closes }} in {{ id }}", always: true}',
        '{contains: "13:00", name: "says 13:00", always: true}'), "utf-8")
    out = run_cli("recheck", str(base), cwd=tmp_path)
    assert server.requests() == []  # no model was asked
    rechecked = sorted((tmp_path / "runs").iterdir())[-1]
    assert out.output.splitlines()[-2] == f"Rechecked {base} into {rechecked}"
    verdicts = {row["scenario"]: row["verdict"] for row in summary(rechecked)["scenarios"]}
    assert verdicts == {"hours[es]": "pass", "hours[en]": "pass"}


def test_try_names_the_cases_of_a_file_and_takes_one_by_its_id(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    hours(tmp_path, server)
    r = run_cli("try", "hours.yaml", cwd=tmp_path)
    assert r.exit_code == 2
    assert r.output == ("error: hours.yaml holds 2 scenarios (hours[es], hours[en]); choose "
                        "one with --scenario ID\n")
    server.script(ANSWERS)
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        chat = CliRunner().invoke(main, ["try", "hours.yaml", "--scenario", "hours[en]"],
                                  input="Until when on Saturday?\n/quit\n")
    finally:
        os.chdir(here)
    lines = chat.output.splitlines()
    assert lines[0].startswith("Trying hours[en] (hours.yaml) with fake ")
    assert "agent: Until 13:00." in chat.output
    # a conversation's own turns are not played in try, so neither are their checks
    assert "  pass   never closed for en" in lines


def test_a_case_overrides_runs_min_pass_and_tags_and_tag_selects_by_its_tags(
        tmp_path: Path, server: FakeServer, cli_env: dict[str, str]) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml(server.url))
    write(tmp_path / "hours.yaml", """
        id: hours
        tags: [clinic]
        given:
          at: 2026-09-29T10:00:00-03:00
        when: "{{ question }}"
        then:
          - contains: "{{ closes }}"
        cases_file: hours.csv
        runs: 5
        min_pass: 3
        """)
    (tmp_path / "hours.csv").write_text(
        "id,question,closes,runs,min_pass,tags\n"
        "es,¿Hasta qué hora el sábado?,13:00,,,\n"
        "en,Until when on Thursday?,20:00,10,9,\"slow, nightly\"\n"
        "pt,Até que horas na sexta?,18:00,2,2,\n", "utf-8")
    plan = json.loads(run_cli("plan", ".", "--json", cwd=tmp_path).output)
    got = {s["id"]: (s["runs"], s["min_pass"], s["tags"]) for s in plan["scenarios"]}
    assert got == {"hours[es]": (5, 3, ["clinic"]),
                   "hours[en]": (10, 9, ["slow", "nightly"]),
                   "hours[pt]": (2, 2, ["clinic"])}  # an empty cell keeps the file's
    only = run_cli("plan", ".", "--tag", "!slow", cwd=tmp_path).output.splitlines()
    assert only[-1] == "--tag '!slow' selected 2 of 3 scenarios"
