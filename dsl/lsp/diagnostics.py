"""Diagnostics: ``scenarist lint`` of the file as it is in the editor, as LSP diagnostics.

The same lint (:func:`dsl.compiler.lint.lint_text`: the same discovery, suite and checks as
``scenarist lint FILE``), on the unsaved texts; each diagnostic keeps lint's code (and a
link to its section of docs/lint.md), its words (the hint beside them, in
``relatedInformation``), its severity, and its ``line:col`` as the start of its range —
which ends where the YAML token there ends.

A scenario's lint (or the suite's) also finds the mistakes of the cases and world files it
names (a CSV row, a JSONL line): they are published on those files too.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from lsprotocol import types as lsp

from ..compiler.lint import LintResult, lint_paths, lint_text
from ..errors import Diagnostic, docs_anchor
from .files import TABLE_SUFFIXES, FileInfo, Files
from .place import Encoding, to_units, token_end

DOCS_URL = "https://scenarist.dev/docs/lint.md"  # initializationOptions.docsUrl replaces it
SOURCE = "scenarist"


def check(files: Files, info: FileInfo) -> dict[Path, list[Diagnostic]]:
    """Lint's diagnostics for the file ``info`` names, by the file they are in: its own,
    and those of the tables it reads. A file under no suite gets none."""
    if info.suite_file is None:
        return {info.path: []}
    unsaved = files.unsaved()
    if info.kind == "table":  # the scenarios (and the suite) that read it say what is wrong
        result = lint_paths([info.suite_file.parent], jobs=1, unsaved=unsaved)
        return {info.path: _in_file(result, info.path)}
    text = files.text(info.path)
    if text is None:
        return {info.path: []}
    result = lint_text(info.path, text, unsaved=unsaved)
    out: dict[Path, list[Diagnostic]] = {info.path: []}
    for file, found in _by_file(result).items():
        if file == info.path or file.suffix.lower() in TABLE_SUFFIXES:
            out.setdefault(file, []).extend(found)
    return out


def _in_file(result: LintResult, path: Path) -> list[Diagnostic]:
    return _by_file(result).get(path, [])


def _by_file(result: LintResult) -> dict[Path, list[Diagnostic]]:
    out: dict[Path, list[Diagnostic]] = {}
    resolved: dict[str, Path] = {}
    for d in result.diagnostics:
        name = d.span.file
        if name.startswith("<"):
            continue
        if name not in resolved:
            resolved[name] = Path(name).absolute().resolve()
        out.setdefault(resolved[name], []).append(d)
    return out


def to_lsp(found: Iterable[Diagnostic], uri: str, text: str | None,
           encoding: Encoding = "utf-16", docs_url: str = DOCS_URL) -> list[lsp.Diagnostic]:
    """Lint's diagnostics in one file (``uri``, holding ``text``) as the editor shows
    them."""
    lines = (text or "").split("\n")
    return [_one(d, lines, uri, encoding, docs_url) for d in found]


def _one(d: Diagnostic, lines: list[str], uri: str, encoding: Encoding,
         docs_url: str) -> lsp.Diagnostic:
    line = min(max(d.span.line - 1, 0), max(len(lines) - 1, 0))
    text = lines[line] if lines else ""
    col = min(max(d.span.col - 1, 0), len(text))
    end = token_end(text, col)
    where = lsp.Range(lsp.Position(line, to_units(text, col, encoding)),
                      lsp.Position(line, to_units(text, end, encoding)))
    related = [lsp.DiagnosticRelatedInformation(lsp.Location(uri, where), f"hint: {d.hint}")
               ] if d.hint else None
    return lsp.Diagnostic(
        range=where,
        message=d.message,
        severity=(lsp.DiagnosticSeverity.Error if d.severity == "error"
                  else lsp.DiagnosticSeverity.Warning),
        code=d.code,
        code_description=lsp.CodeDescription(href=f"{docs_url}#{docs_anchor(d.code)}"),
        source=SOURCE,
        related_information=related,
        data={"name": d.name, "hint": d.hint},
    )
