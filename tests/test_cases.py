"""Data-driven cases: every file in tests/cases/valid compiles without a diagnostic; every
file (or folder) in tests/cases/invalid produces exactly the diagnostics in its
``.expected`` file, word for word, as ``scenarist lint`` prints them.

To (re)write the expected files after a deliberate change: ``UPDATE_CASES=1 pytest
tests/test_cases.py`` — then read the diff before committing it.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dsl.compile import compile_paths
from dsl.errors import best_per_place, render

CASES = Path(__file__).parent / "cases"
VALID = sorted((CASES / "valid").glob("*.yaml"))
INVALID = sorted(p for p in (CASES / "invalid").iterdir()
                 if p.suffix == ".yaml" or p.is_dir())


def lint_text(path: Path) -> str:
    compiled = compile_paths([path.relative_to(CASES)], require_suite=False)
    sources = {name: doc.lines for name, doc in compiled.documents.items()}
    return "".join(render(d, sources.get(d.span.file)) + "\n"
                   for d in best_per_place(compiled.diagnostics))


@pytest.fixture(autouse=True)
def _in_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_case_compiles_cleanly(path: Path) -> None:
    compiled = compile_paths([path.relative_to(CASES)], require_suite=False)
    assert compiled.diagnostics == []
    assert len(compiled.scenarios) == 1


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_case_reports_exactly(path: Path) -> None:
    expected_file = path.with_suffix(".expected") if path.is_file() else \
        path.parent / (path.name + ".expected")
    got = lint_text(path)
    if os.environ.get("UPDATE_CASES"):
        expected_file.write_text(got, "utf-8")
    assert got, "an invalid case must produce at least one diagnostic"
    assert "Traceback" not in got
    assert " error " in got, "every invalid case is an error, not only a warning"
    assert got == expected_file.read_text("utf-8")
