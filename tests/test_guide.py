"""docs/guide.md's complete scenarios lint clean against the example suite, so what the
guide teaches people who do not program is what Scenarist accepts — every section of it,
conversations, history, the simulated user and tools that answer by argument included."""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from dsl.lint import lint_paths
from dsl.load import load_text

from .conftest import REPO

GUIDE = REPO / "docs" / "guide.md"


def scenarios() -> list[tuple[str, str, Any]]:
    """Every ```yaml block of the guide that is a whole scenario (given and when), but
    those of a suite of their own (below a ``# scenarist.yaml`` block)."""
    out = []
    text = GUIDE.read_text("utf-8")
    for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", text, re.S), 1):
        data = load_text(block, "guide").data
        if isinstance(data, dict) and "given" in data and "when" in data \
                and not block.startswith("# "):
            out.append((f"block {i}", block, data))
    return out


def data_files() -> dict[str, str]:
    """The guide's data files: each ```csv NAME block."""
    text = GUIDE.read_text("utf-8")
    return dict(re.findall(r"```csv (\S+)\n(.*?)```", text, re.S))


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
                    "53de0000000c4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44"
                    "ae426082")


def attached_files(data: Any, root: Path) -> None:
    """The files a scenario of the guide attaches: a small picture, a line of text."""
    found = list(data["given"].get("attachments") or ())
    if isinstance(data["when"], list):
        found += [a for t in data["when"] if isinstance(t, dict)
                  for a in t.get("attachments") or ()]
    for a in found:
        path = root / a["path"]
        path.parent.mkdir(parents=True, exist_ok=True)
        if a["kind"] == "image":
            path.write_bytes(PNG)
        else:
            path.write_text("Visita del 2 de marzo: limpieza, sin novedades.\n", "utf-8")


def test_the_guide_shows_every_form_of_when_and_of_a_tool() -> None:
    found = [data for _, _, data in scenarios()]
    whens = {type(d["when"]).__name__ for d in found}
    assert whens == {"str", "list", "dict"}  # one message, turns, a simulated user
    turns = [t for d in found if isinstance(d["when"], list) for t in d["when"]]
    assert {k for t in turns if isinstance(t, dict) for k in t} >= {"say", "confirm",
                                                                    "cancel", "then"}
    assert any("history" in d["given"] for d in found)
    tools = [t for d in found for t in d["given"].get("tools", []) if isinstance(t, dict)]
    assert any("answers" in t for t in tools)


@pytest.mark.parametrize(("name", "block"), [(n, b) for n, b, _ in scenarios()])
def test_each_scenario_of_the_guide_lints_clean(name: str, block: str, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(REPO / "scenarios" / "scenarist.yaml", tmp_path / "scenarist.yaml")
    (tmp_path / "example.yaml").write_text(block, "utf-8")
    for name, content in data_files().items():
        (tmp_path / name).write_text(content, "utf-8")
    attached_files(load_text(block, "guide").data, tmp_path)
    monkeypatch.chdir(tmp_path)
    result = lint_paths([Path("example.yaml")])
    # (the suite's W403, tools this one example does not use, is about the suite)
    assert [f"{d.span} {d.code} {d.message}" for d in result.diagnostics
            if d.span.file == "example.yaml"] == []


def test_the_guides_data_file_is_the_example_suites() -> None:
    files = data_files()
    assert files == {"hours_in_languages.csv": (REPO / "scenarios" / "clinic" /
                                                "hours_in_languages.csv").read_text("utf-8")}


def test_the_guides_suite_with_anchors_the_library_and_named_checks_lints_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``# scenarist.yaml`` block and the ``# PATH.yaml`` blocks after it: a suite of
    their own, linted whole (its unused tools and named checks included)."""
    text = GUIDE.read_text("utf-8")
    blocks = re.findall(r"```yaml\n(# (\S+\.yaml)\n.*?)```", text, re.S)
    assert [name for _, name in blocks][:1] == ["scenarist.yaml"]
    for block, name in blocks:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(block, "utf-8")
    monkeypatch.chdir(tmp_path)
    result = lint_paths([Path(".")])
    assert result.files == len(blocks) - 1
    assert [f"{d.span} {d.code} {d.message}" for d in result.diagnostics] == []
    data = load_text(blocks[1][0], "guide").data
    assert data["given"]["at"] == "2026-09-29T10:00:00-03:00"  # merged from x-given
    assert data["when"][0]["then"] == data["when"][1]["then"]  # the alias