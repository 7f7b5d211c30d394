"""docs/lint.md: every diagnostic code is documented with a wrong and a fixed example, the
generated part is up to date, and each example does what the page says."""

from __future__ import annotations

from pathlib import Path

import pytest

from dsl._buildtools.codedocs import (
    EXAMPLE_SUITE,
    EXAMPLES,
    USES_ALL_TOOLS,
    codes_markdown,
    update_lint_doc,
)
from dsl.compiler.lint import lint_paths
from dsl.errors import CODES
from tests.conftest import REPO

LINT_MD = REPO / "docs" / "lint.md"


def test_every_code_has_an_example_and_every_example_a_code() -> None:
    assert set(EXAMPLES) == set(CODES)


def test_lint_md_is_up_to_date() -> None:
    text = LINT_MD.read_text("utf-8")
    assert update_lint_doc(text) == text, "docs/lint.md is out of date: python -m dsl._buildtools.docsgen"
    assert codes_markdown() in text


def _lint(where: str, text: str, scenario: str, folder: Path,
          monkeypatch: pytest.MonkeyPatch,
          files: tuple[tuple[str, str], ...] = ()) -> list[str]:
    folder.mkdir()
    monkeypatch.chdir(folder)
    for name, content in files:  # a cases file, an attachment
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(content, "utf-8")
    if where == "suite":
        Path("scenarist.yaml").write_text(text, "utf-8")
        Path("scenario.yaml").write_text(scenario, "utf-8")
        result = lint_paths([Path(".")])
    else:
        Path("scenarist.yaml").write_text(EXAMPLE_SUITE, "utf-8")
        Path("uses_all.yaml").write_text(USES_ALL_TOOLS, "utf-8")
        Path("example.yaml").write_text(text, "utf-8")
        result = lint_paths([Path("example.yaml")])
    return [f"{d.code} {d.message}" for d in result.diagnostics]


CHECKED = sorted(c for c, e in EXAMPLES.items() if e.where in ("scenario", "suite"))


@pytest.mark.parametrize("code", CHECKED)
def test_wrong_example_reports_its_code_and_fixed_example_is_clean(
        code: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ex = EXAMPLES[code]
    bad = _lint(ex.where, ex.bad, ex.scenario, tmp_path / "bad", monkeypatch, ex.files)
    assert any(line.startswith(code + " ") for line in bad), bad
    fixed_files = ex.files if ex.fixed_files is None else ex.fixed_files
    assert _lint(ex.where, ex.fixed, ex.scenario, tmp_path / "fixed", monkeypatch,
                 fixed_files) == []
