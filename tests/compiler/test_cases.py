"""Data-driven cases, compared word for word with what ``scenarist lint`` prints.

* ``cases/valid/*.yaml`` compile without a single diagnostic, warnings included.
* ``cases/invalid/*`` (a file, or a folder with its own scenarist.yaml) produce exactly the
  diagnostics in the ``.expected`` beside them; each is an error, located, and none is a
  traceback.
* ``cases/warnings/*`` are legal but likely wrong: only warnings, exactly as expected, and
  errors under ``--strict``.
* Inputs too big, too hostile or too binary to keep in git (a 20 MB file, an alias bomb,
  NUL bytes, ...) are written at test time by :data:`GENERATED` and checked against their
  ``cases/invalid/<name>.expected`` the same way.

To (re)write the expected files after a deliberate change: ``UPDATE_CASES=1 pytest
tests/compiler/test_cases.py`` — then read the diff before committing it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from dsl.compiler.lint import lint_paths
from dsl.errors import render
from dsl.source.load import MAX_FILE_BYTES, MAX_STRING_CHARS

CASES = Path(__file__).parents[1] / "cases"
VALID = sorted((CASES / "valid").glob("*.yaml"))
INVALID = sorted(p for p in (CASES / "invalid").iterdir()
                 if p.suffix == ".yaml" or p.is_dir())
WARNINGS = sorted(p for p in (CASES / "warnings").iterdir()
                  if p.suffix == ".yaml" or p.is_dir())


def lint_text(path: Path, *, strict: bool = False) -> str:
    """The diagnostics as ``scenarist lint`` prints them, without the summary line."""
    result = lint_paths([path], strict=strict)
    return "".join(render(d, result.source_lines(d.span.file)) + "\n"
                   for d in result.diagnostics)


def expected_file(path: Path) -> Path:
    return path.with_suffix(".expected") if path.suffix == ".yaml" else \
        path.parent / (path.name + ".expected")


def check_expected(got: str, expected: Path) -> None:
    if os.environ.get("UPDATE_CASES"):
        expected.write_text(got, "utf-8")
    assert got == expected.read_text("utf-8")


@pytest.fixture(autouse=True)
def _in_cases(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(CASES)


@pytest.mark.parametrize("path", VALID, ids=lambda p: p.name)
def test_valid_case_compiles_cleanly(path: Path) -> None:
    result = lint_paths([path.relative_to(CASES)])
    assert result.diagnostics == []
    assert result.files == 1


def assert_errors_only_located(got: str) -> None:
    assert got, "an invalid case must produce at least one diagnostic"
    assert "Traceback" not in got
    heads = [line for line in got.splitlines() if not line.startswith(" ")]
    assert all(" error " in h for h in heads), "every invalid case is an error, not a warning"
    assert all(h.startswith("invalid/") for h in heads), "every diagnostic has a file:line:col"


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.name)
def test_invalid_case_reports_exactly(path: Path) -> None:
    got = lint_text(path.relative_to(CASES))
    check_expected(got, expected_file(path))
    assert_errors_only_located(got)


@pytest.mark.parametrize("path", WARNINGS, ids=lambda p: p.name)
def test_warning_case_reports_exactly(path: Path) -> None:
    got = lint_text(path.relative_to(CASES))
    check_expected(got, expected_file(path))
    heads = [line for line in got.splitlines() if not line.startswith(" ")]
    assert heads, "a warning case must warn"
    assert all(" warning W4" in h for h in heads), "a warning case has only warnings"
    strict = lint_text(path.relative_to(CASES), strict=True)
    assert strict == got.replace(": warning W4", ": error W4")


# ---------------------------------------------------------------- generated inputs


def _bomb() -> bytes:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i, name in enumerate("bcdefghi"):
        prev = "abcdefghi"[i]
        lines.append(f"{name}: &{name} [" + ",".join([f"*{prev}"] * 9) + "]")
    return ("\n".join(lines) + "\n").encode()


def _big_file() -> bytes:  # 20 MB, over the file size limit
    return b"when: '" + b"x" * 20_000_000 + b"'\n"


def _long_string() -> bytes:  # a 10 MB string in a file under the size limit
    return (b"given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hola\nthen:\n  - contains: '"
            + b"x" * 10_000_000 + b"'\n")


def _binary() -> bytes:  # the start of a PNG image
    return b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x10\x00\x00\x00\x10\x08\x06"


def _latin1() -> bytes:
    return "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: ¿Atienden el sábado?\nthen:\n" \
           "  - non_empty\n".encode("latin-1")


def _deep() -> bytes:
    return b"given: " + b"[" * 20_000 + b"]" * 20_000 + b"\n"


def _control_char() -> bytes:
    return b"given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: \"hola\x1b[31m\"\nthen:\n  - non_empty\n"


GENERATED: dict[str, Callable[[], bytes]] = {
    "gen_alias_bomb": _bomb,
    "gen_big_file": _big_file,
    "gen_long_string": _long_string,
    "gen_binary": _binary,
    "gen_latin1": _latin1,
    "gen_deep_nesting": _deep,
    "gen_control_char": _control_char,
}


def test_generated_cases_and_expected_files_match() -> None:
    on_disk = {p.stem for p in (CASES / "invalid").glob("gen_*.expected")}
    assert on_disk == set(GENERATED)


@pytest.mark.parametrize("name", sorted(GENERATED))
def test_generated_case_reports_exactly_and_fast(name: str, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "invalid").mkdir()
    (tmp_path / "invalid" / f"{name}.yaml").write_bytes(GENERATED[name]())
    monkeypatch.chdir(tmp_path)
    t0 = time.perf_counter()
    got = lint_text(Path("invalid") / f"{name}.yaml")
    assert time.perf_counter() - t0 < 5.0, "hostile input is rejected fast"
    check_expected(got, CASES / "invalid" / f"{name}.expected")
    assert_errors_only_located(got)


def test_limits_are_the_ones_the_generated_cases_cross() -> None:
    assert len(_big_file()) > MAX_FILE_BYTES
    assert len(_long_string()) < MAX_FILE_BYTES
    assert MAX_STRING_CHARS < 10_000_000
