"""The server's diagnostics are ``scenarist lint --format json``'s for that file — same
codes, words, places and severities — on every example scenario (scenarios/) and on
every bad file of the lint cases (tests/cases/invalid/), suites included."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from dsl.compiler.discover import discover
from dsl.lsp.diagnostics import check, to_lsp
from dsl.lsp.files import Files
from tests.conftest import REPO, run_cli
from tests.lsp.client import Client


def files_under(folder: Path) -> list[Path]:
    """The scenario files lint finds under ``folder``, and the suites' own files."""
    found = discover([folder])
    out: list[Path] = []
    for group in found.groups:
        if group.suite_file is not None and group.suite_file.is_relative_to(folder):
            out.append(group.suite_file)
        out.extend(f.path for f in group.files)
    return sorted(set(out))


EXAMPLES = sorted({*files_under(REPO / "scenarios"), *files_under(REPO / "scenarios" / "agents")})
INVALID = files_under(REPO / "tests" / "cases" / "invalid")


def lint_of(path: Path) -> dict[Path, list[tuple[object, ...]]]:
    """``scenarist lint --format json FILE``, by the file each diagnostic is in."""
    result = run_cli("lint", "--format", "json", str(path.relative_to(REPO)), cwd=REPO)
    out: dict[Path, list[tuple[object, ...]]] = {}
    for d in json.loads(result.output)["diagnostics"]:
        if d["file"] is not None:
            out.setdefault((REPO / d["file"]).resolve(), []).append(
                (d["line"], d["col"], d["code"], d["severity"], d["message"]))
    return out


def shown(d: lsp.Diagnostic) -> tuple[object, ...]:
    return (d.range.start.line + 1, d.range.start.character + 1, d.code,
            "error" if d.severity == lsp.DiagnosticSeverity.Error else "warning", d.message)


@pytest.fixture(scope="module")
def client() -> Iterator[Client]:
    c = Client(REPO)
    try:
        yield c
    finally:
        c.kill()


def test_the_cases_are_there() -> None:
    assert len(EXAMPLES) >= 10
    assert len(INVALID) >= 80
    assert any(p.name == "scenarist.yaml" for p in INVALID)


@pytest.mark.parametrize("path", EXAMPLES + INVALID,
                         ids=[str(p.relative_to(REPO)) for p in EXAMPLES + INVALID])
def test_the_server_says_what_lint_says(client: Client, path: Path) -> None:
    expected = lint_of(path)
    # the mistakes lint finds in the cases and world files the scenario reads
    tables = [p for p in expected if p.suffix in (".csv", ".jsonl")]
    seen = {p: client.count(p) for p in tables}
    client.open(path)
    try:
        found = client.diagnostics(path)
        on_tables = {p: client.diagnostics(p, after=seen[p]) for p in tables}
    finally:
        client.close_document(path)
    assert [shown(d) for d in found] == expected.get(path, [])
    for table, diagnostics in on_tables.items():
        assert [shown(d) for d in diagnostics] == expected[table]


def test_the_published_words_are_the_lint_words_with_hint_and_link(tmp_path: Path) -> None:
    """One diagnostic converted in full (no process): a range from line:col to the end of
    the word, the hint beside the message, the code's section of docs/lint.md."""
    files = Files()
    path = REPO / "tests" / "cases" / "invalid" / "unknown_check.yaml"
    if not path.exists():
        pytest.skip("the case was renamed")  # pragma: no cover
    lint = check(files, files.info(path))[path][0]
    text = path.read_text("utf-8")
    (d,) = to_lsp([lint], path.as_uri(), text)
    line = text.split("\n")[lint.span.line - 1]
    word = line[lint.span.col - 1:].split(":")[0]
    assert d.range == lsp.Range(lsp.Position(lint.span.line - 1, lint.span.col - 1),
                                lsp.Position(lint.span.line - 1, lint.span.col - 1 + len(word)))
    assert d.message == lint.message
    assert d.related_information is not None
    assert d.related_information[0].message == f"hint: {lint.hint}"
    assert d.code_description is not None
    assert d.code_description.href == (
        f"https://scenarist.dev/docs/lint.md#{lint.code.lower()}-{lint.name}")
