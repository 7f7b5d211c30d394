"""docs/import.md shows what the import does: its two example logs (docs/import/) imported
in a suite print what the page says, and write exactly the files it shows; and the checks
the page writes in their place lint clean. (Its messages are tested word for word in
test_bad_input.py and test_openai.py.)"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from tests.conftest import REPO, run_cli

PAGE = (REPO / "docs" / "import.md").read_text("utf-8")
BLOCKS = re.findall(r"```(\w+)\n(.*?)```", PAGE, re.S)


def _suite(tmp_path: Path) -> Path:
    assert run_cli("init", "clinic", cwd=tmp_path).exit_code == 0
    folder = tmp_path / "clinic"
    (folder / "logs").mkdir()
    for name in ("gateway.jsonl", "traces.json"):
        shutil.copy(REPO / "docs" / "import" / name, folder / "logs" / name)
    return folder


def test_the_examples_write_the_files_the_page_shows(tmp_path: Path) -> None:
    folder = _suite(tmp_path)
    shown = [text for lang, text in BLOCKS if lang == "yaml" and text.startswith("# Imported")]
    consoles = [text for lang, text in BLOCKS if lang == "console"
                and text.startswith("$ scenarist import logs/")]
    assert len(shown) == len(consoles) == 2
    for console, expected in zip(consoles, shown, strict=True):
        command, *printed = console.strip().splitlines()
        result = run_cli(*command.removeprefix("$ scenarist ").split(), cwd=folder)
        assert result.exit_code == 0, result.output
        assert result.stdout.splitlines() == printed
        path = folder / printed[0].split()[0]
        assert path.read_text("utf-8") == expected


def test_the_corrected_checks_lint_clean(tmp_path: Path) -> None:
    folder = _suite(tmp_path)
    assert run_cli("import", "logs/gateway.jsonl", "logs/traces.json", cwd=folder).exit_code == 0
    corrections = [text for lang, text in BLOCKS if lang == "yaml"
                   and not text.startswith("# Imported")]
    assert len(corrections) == 2
    booking = folder / "imported" / "hola_quiero_un_turno_para_el.yaml"
    text = booking.read_text("utf-8")
    booking.write_text(text[:text.index("then:")] + corrections[0], "utf-8")
    renewal = folder / "imported" / "me_renuevan_la_receta_de_ibuprofeno.yaml"
    renewal.write_text(renewal.read_text("utf-8") + corrections[1], "utf-8")
    result = run_cli("lint", "--strict", "imported", cwd=folder)
    assert result.exit_code == 0, result.output
