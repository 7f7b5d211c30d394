"""End to end: scenarios with expect checks run through the real agent loop against the
scripted OpenAI-compatible server (tests/fakeserver.py) on 127.0.0.1."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsl.cli import main

HERE = Path(__file__).parent
SERVER = HERE.parent / "fakeserver.py"


def reply(name: str, **arguments: str) -> dict[str, object]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


SCRIPT = {"rules": [
    {"match": "limpieza", "replies": [
        reply("search_slots", date="2026-10-06", treatment="cleaning"),
        reply("book_appointment", date="2026-10-06", time="15:00", treatment="cleaning"),
        {"text": "Listo: martes 6 de octubre a las 15:00 con la Dra. Pérez."},
    ]},
    {"match": "domingo", "replies": [
        reply("book_appointment", date="2026-10-04", time="16:30"),
        {"text": "Reservado el domingo 4 a las 16:30."},
    ]},
]}


@pytest.fixture
def server(tmp_path: Path) -> Iterator[int]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(SCRIPT), "utf-8")
    proc = subprocess.Popen([sys.executable, str(SERVER), "--port", "0", "--script",
                             str(script)], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline().split()
        assert first[0] == "PORT", first
        yield int(first[1])
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_expect_checks_in_a_real_run(server: int, tmp_path: Path,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    suite = tmp_path / "suite"
    shutil.copytree(HERE / "suite", suite)
    config = suite / "scenarist.yaml"
    config.write_text(config.read_text("utf-8").replace(
        "http://127.0.0.1:9/v1", f"http://127.0.0.1:{server}/v1"), "utf-8")
    sunday = (suite / "booking.yaml").read_text("utf-8").replace(
        "clinic.booking", "clinic.sunday").replace(
        "una limpieza el martes que viene", "el domingo")
    (suite / "sunday.yaml").write_text(sunday, "utf-8")
    monkeypatch.chdir(suite)
    result = CliRunner().invoke(main, ["run", ".", "--out", "runs", "--quiet"])
    assert result.exit_code == 1, result.output  # the Sunday booking fails
    (results,) = (suite / "runs").glob("*/results.jsonl")
    records = {r["scenario"]: r for r in map(json.loads, results.read_text("utf-8").splitlines())}
    good = records["clinic.booking"]
    assert good["status"] == "pass"
    assert [c["status"] for c in good["checks"]] == ["pass"] * 6
    bad = {c["label"]: (c["status"], c["reason"]) for c in records["clinic.sunday"]["checks"]}
    assert bad["expect: books_a_weekday"] == (
        "fail", "books_a_weekday: expected weekday(date(call('book_appointment').args.date)) "
                "< 5 to be true; it was false (weekday(...) = 6; "
                "call('book_appointment').args.date = \"2026-10-04\")")
    assert bad["expect: searched_first"] == (
        "fail", "searched_first: expected first(calls).name == 'search_slots' to be true; it "
                "was false (first(calls).name = \"book_appointment\")")
    assert bad["expect: books the first free slot"] == (
        "fail", "books the first free slot: expected call('book_appointment').args.time == "
                "call('search_slots').output.slots[0] to be true; it was false "
                "(call('book_appointment').args.time = \"16:30\"; "
                "call('search_slots').output.slots[0] = null)")
    assert bad["expect: count(calls) <= 3 and '15:00' in answer"] == (
        "fail", "expected count(calls) <= 3 and '15:00' in answer to be true; it was false: "
                "'15:00' in answer is false (answer = \"Reservado el domingo 4 a las 16:30.\")")
