"""``scenarist import`` of a run folder: a real run against the scripted model server, whose
failed attempts become scenarios of their own — the confirm and cancel turns exactly as the
run had them — that lint clean and pass their "as logged" checks when the model repeats
the run."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.conftest import FakeServer, run_cli, write
from tests.importing.replay import as_logged, assert_replays, load, replay, suite

TOOLS = """
  tools:
    - name: search_slots
      description: Free slots on a day.
      input_schema: {type: object, properties: {day: {type: string}}, required: [day]}
      returns: {slots: ["10:00", "11:30"]}
    - name: book_appointment
      description: Book an appointment.
      input_schema:
        type: object
        properties: {date: {type: string}, time: {type: string}}
        required: [date, time]
      action: create
      confirm: true
      returns: "Booked {{ args.date }} at {{ args.time }}."
"""
BOOK = """
description: A booking confirmed in a second turn; the answer misses the day.
given:
  at: 2026-09-29T10:00:00-03:00
  system: The patient is Ana Gómez.
""" + TOOLS + """
when:
  - "Quiero un turno el sábado a la mañana."
  - confirm: book_appointment
then:
  - contains: "sábado"
runs: 2
min_pass: 1
"""
CANCEL = """
description: The person cancels the booking.
given:
  at: 2026-09-29T10:00:00-03:00
""" + TOOLS + """
when:
  - "Reservame el sábado a las 11:30."
  - cancel: book_appointment
then:
  - does_not_modify
runs: 1
min_pass: 1
"""
SEARCH = {"tool_calls": [{"name": "search_slots", "arguments": {"day": "saturday"}}]}
SCRIPT = {"rules": [
    {"match": "a la mañana", "replies": [
        SEARCH,
        {"text": "¿Reservo el 3 de octubre a las 10:00?",
         "tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-10-03", "time": "10:00"}}]},
        {"text": "Listo, reservado para el 3 de octubre."}]},
    {"match": "11:30", "replies": [
        {"text": "¿Reservo el 3 de octubre a las 11:30?",
         "tool_calls": [{"name": "book_appointment",
                         "arguments": {"date": "2026-10-03", "time": "11:30"}}]},
        {"text": "De acuerdo, no reservo nada."}]},
]}


@pytest.fixture
def run_dir(tmp_path: Path, server: FakeServer) -> Path:
    """A run of two scenarios: book fails twice (its answer never names the day), cancel
    passes."""
    folder = suite(tmp_path / "clinic", server)
    write(folder / "book.yaml", BOOK)
    write(folder / "cancel.yaml", CANCEL)
    server.script(SCRIPT)
    result = run_cli("run", "book.yaml", "cancel.yaml", "--out", str(tmp_path / "runs"),
                     cwd=folder)
    assert result.exit_code == 1, result.output
    (found,) = (tmp_path / "runs").iterdir()
    return found


def _script_of_run() -> dict[str, Any]:
    return SCRIPT


def test_every_failed_attempt_becomes_a_scenario(tmp_path: Path, server: FakeServer,
                                                 run_dir: Path) -> None:
    folder = suite(tmp_path / "again", server)
    result = run_cli("import", str(run_dir), cwd=folder)
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == [
        "imported/book_fake_1.yaml  2 turns, 2 tool calls",
        "imported/book_fake_2.yaml  2 turns, 2 tool calls",
        "2 scenarios imported into imported/",
    ]
    book = load(folder / "imported" / "book_fake_1.yaml")
    assert book["when"] == [{"say": "Quiero un turno el sábado a la mañana."},
                            {"confirm": "book_appointment"}]
    assert book["given"]["at"] == "2026-09-29T10:00:00-03:00"
    assert book["given"]["system"] == "The patient is Ana Gómez."
    assert "attempt book@fake/1" in book["description"]
    assert "contains" in book["description"]  # why it failed
    tools = {t["name"]: t for t in book["given"]["tools"]}
    assert tools["book_appointment"]["confirm"] is True
    assert tools["book_appointment"]["action"] == "create"
    assert tools["book_appointment"]["answers"] == [
        {"when": {"date": "2026-10-03", "time": "10:00"},
         "returns": "Booked 2026-10-03 at 10:00."}]
    assert tools["search_slots"]["answers"] == [
        {"when": {"day": "saturday"}, "returns": {"slots": ["10:00", "11:30"]}}]
    assert [c["calls"] for c in as_logged(book)] == [
        {"name": "search_slots", "args": {"day": "saturday"}},
        {"name": "book_appointment", "args": {"date": "2026-10-03", "time": "10:00"}}]


def test_an_attempt_named_and_its_cancel_turn(tmp_path: Path, server: FakeServer,
                                              run_dir: Path) -> None:
    folder = suite(tmp_path / "again", server)
    result = run_cli("import", str(run_dir), "--attempt", "cancel@fake/1", cwd=folder)
    assert result.exit_code == 0, result.output
    cancel = load(folder / "imported" / "cancel_fake_1.yaml")
    assert cancel["when"] == [{"say": "Reservame el sábado a las 11:30."},
                              {"cancel": "book_appointment"}]
    booked = {t["name"]: t for t in cancel["given"]["tools"]}["book_appointment"]
    assert booked["confirm"] is True
    assert "answers" not in booked  # it never ran: its answer is not known
    assert booked["error"] == "this tool never ran in the log (its calls waited for the person)"
    assert [c["calls"] for c in as_logged(cancel)] == [
        {"name": "book_appointment", "args": {"date": "2026-10-03", "time": "11:30"}}]


def test_an_attempt_the_run_does_not_have(tmp_path: Path, server: FakeServer,
                                          run_dir: Path) -> None:
    folder = suite(tmp_path / "again", server)
    result = run_cli("import", str(run_dir), "--attempt", "book@fake/7", cwd=folder)
    assert result.exit_code == 2
    assert result.stderr == (f"error: {run_dir} has no attempt book@fake/7; its attempts: "
                             "book@fake/1, book@fake/2, cancel@fake/1\n")
    assert not (folder / "imported").exists()
    elsewhere = run_cli("import", str(run_dir / "plan.json"), "--attempt", "book@fake/1",
                        cwd=folder)
    assert elsewhere.exit_code == 2
    assert elsewhere.stderr == ("error: --attempt names attempts of a run folder, and no PATH "
                                "is one (a folder with results.jsonl and plan.json)\n")
    bad = run_cli("import", str(run_dir), "--attempt", "book-fake-1", cwd=folder)
    assert bad.exit_code == 2
    assert ("Invalid value for '--attempt': 'book-fake-1' is not SCENARIO@TARGET/RUN (for "
            "example clinic.hours_today@local/3)") in bad.stderr


def test_the_imported_attempts_pass_against_a_model_that_repeats_the_run(
        tmp_path: Path, server: FakeServer, run_dir: Path) -> None:
    folder = suite(tmp_path / "again", server)
    assert run_cli("import", str(run_dir), cwd=folder).exit_code == 0
    assert run_cli("import", str(run_dir), "--attempt", "cancel@fake/1",
                   "--into", "imported/more", cwd=folder).exit_code == 0
    assert_replays(replay(folder, server, _script_of_run()), files=3)
