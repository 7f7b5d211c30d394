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
    """Every ```yaml block of the guide that is a whole scenario (given and when)."""
    out = []
    text = GUIDE.read_text("utf-8")
    for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", text, re.S), 1):
        data = load_text(block, "guide").data
        if isinstance(data, dict) and "given" in data and "when" in data:
            out.append((f"block {i}", block, data))
    return out


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
    monkeypatch.chdir(tmp_path)
    result = lint_paths([Path("example.yaml")])
    # (the suite's W403, tools this one example does not use, is about the suite)
    assert [f"{d.span} {d.code} {d.message}" for d in result.diagnostics
            if d.span.file == "example.yaml"] == []
