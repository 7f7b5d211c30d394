"""``lint_text``: an unsaved text linted as the file it will be — the same diagnostics as
``lint_paths`` on that file once saved, whether or not it exists yet."""

from __future__ import annotations

import os
from pathlib import Path

from dsl.compiler.lint import lint_paths, lint_text
from tests.conftest import suite_yaml, write

TEXT = ("given:\n  at: 2026-09-29T10:00:00-03:00\n  tools: [list_business_hour]\n"
        "when: hola\nthen:\n  - contians: x\n")


def test_the_same_diagnostics_as_the_saved_file(tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    write(tmp_path / "sub" / "saved.yaml", "id: other\n")
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        unsaved = lint_text(tmp_path / "sub" / "new.yaml", TEXT)
        over = lint_text(tmp_path / "sub" / "saved.yaml", TEXT)
        (tmp_path / "sub" / "new.yaml").write_text(TEXT)
        saved = lint_paths([Path("sub/new.yaml")])
    finally:
        os.chdir(old)
    assert [(d.span.line, d.span.col, d.code) for d in unsaved.diagnostics] == [
        (3, 11, "E201"), (6, 5, "S101")]
    assert unsaved.diagnostics == saved.diagnostics
    # the text is linted in place of the file's own (the suite's W403s come as for lint)
    mine = [d for d in over.diagnostics if d.span.file == "sub/saved.yaml"]
    assert [(d.span.line, d.code) for d in mine] == [(3, "E201"), (6, "S101")]
    assert (tmp_path / "sub" / "saved.yaml").read_text() == "id: other\n"
