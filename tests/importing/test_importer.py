"""import_conversations, the one entry of the import (the command line's and the studio's):
bytes handed over as well as paths, where the files go by default, and what it returns."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsl.importing import ImportRefused, Upload, default_folder, import_conversations
from tests.conftest import run_cli, write
from tests.importing.test_scenario import call, gateway_log

TRANSCRIPT = [
    {"role": "user", "content": "¿Abren el sábado?"},
    {"role": "assistant", "content": None, "tool_calls": [call("a", "hours", {})]},
    {"role": "tool", "tool_call_id": "a", "content": "sábado 09-13"},
    {"role": "assistant", "content": "Sí, de 9 a 13."},
]


def test_uploaded_bytes_are_imported_as_a_file_is(tmp_path: Path) -> None:
    log = gateway_log(tmp_path / "log.jsonl", [TRANSCRIPT])
    broken = b'{"request": {"messages": [' + b"\n"
    result = import_conversations(
        [Upload("production.jsonl", log.read_bytes()), Upload("cut.jsonl", broken)],
        tmp_path / "out")
    (written,) = result.written
    assert (written.path.name, written.turns, written.calls) == ("abren_el_sabado.yaml", 1, 1)
    assert "Imported from production.jsonl (lines 1–2)" in written.path.read_text("utf-8")
    assert [str(p) for p in result.problems] == [
        "cut.jsonl:1: the line is cut off: its JSON stops in the middle, at column 26; "
        "skipped"]
    with pytest.raises(ImportRefused, match=r"abren_el_sabado\.yaml already exists"):
        import_conversations([Upload("production.jsonl", log.read_bytes())], tmp_path / "out")


def test_files_go_into_the_suite_of_the_current_folder(tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml", json.dumps({"targets": {"m": {
        "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m"}}}))
    (tmp_path / "clinic" / "deep").mkdir(parents=True)
    log = gateway_log(tmp_path / "log.jsonl", [TRANSCRIPT])
    result = run_cli("import", str(log), cwd=tmp_path / "clinic" / "deep")
    assert result.exit_code == 0, result.output
    assert (tmp_path / "imported" / "abren_el_sabado.yaml").is_file()
    assert result.stdout.splitlines()[-1] == f"1 scenario imported into {tmp_path}/imported/"
    assert default_folder(tmp_path / "clinic") == tmp_path / "imported"
    lonely = tmp_path.parent / f"{tmp_path.name}-nosuite"
    lonely.mkdir()
    assert default_folder(lonely) == lonely / "imported"
