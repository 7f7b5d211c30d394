"""Every dependency says why it is there (issue 31 item 8): its one-line reason sits in
pyproject.toml above it (or beside it), and every library Scenarist runs with is named in
docs/architecture.md's table of libraries with what it does for Scenarist."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PYPROJECT = REPO / "pyproject.toml"
ARCHITECTURE = REPO / "docs" / "architecture.md"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


def name_of(requirement: str) -> str:
    """``psycopg[binary]>=3.1; ...`` -> ``psycopg``."""
    found = _NAME.match(requirement)
    assert found, requirement
    return found.group(0)


def unexplained(text: str) -> list[str]:
    """The requirements of the TOML arrays in ``text`` with no reason: neither a comment
    on their line nor a comment just above them. Where a comment stands above several
    requirements in a row, it must name each of them."""
    out: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped.startswith('"') or "#" in stripped:
            continue
        j = i - 1
        while j >= 0 and lines[j].strip().startswith('"') and "#" not in lines[j]:
            j -= 1
        comment: list[str] = []
        while j >= 0 and lines[j].strip().startswith("#"):
            comment.insert(0, lines[j].strip())
            j -= 1
        name = name_of(stripped.strip('",'))
        if not comment:
            out.append(name)
        elif i - j - len(comment) > 1 and name.lower() not in " ".join(comment).lower():
            out.append(name)  # one comment for a row of them: it names each
    return out


def _array_text(text: str, key: str) -> str:
    found = re.search(rf"^{re.escape(key)} = \[\n(.*?)^\]", text, re.S | re.M)
    assert found, key
    return found.group(1)


def test_every_dependency_says_why_it_is_there() -> None:
    text = PYPROJECT.read_text(encoding="utf-8")
    assert unexplained(_array_text(text, "dependencies")) == []
    assert unexplained(_array_text(text, "test")) == []
    extras = tomllib.loads(text)["project"]["optional-dependencies"]
    for extra in extras:
        if extra == "test":
            continue
        at = re.search(rf"^{re.escape(extra)} = \[", text, re.M)
        assert at, extra
        above = text[:at.start()].rstrip("\n").splitlines()[-1]
        assert above.startswith("#"), f"the extra {extra!r} has no reason above it"


def test_every_library_scenarist_runs_with_is_in_the_architecture_table() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    runtime = [*project["dependencies"]]
    for extra, requirements in project["optional-dependencies"].items():
        if extra != "test":
            runtime += requirements
    table = ARCHITECTURE.read_text(encoding="utf-8").split("## The libraries", 1)[1]
    table = table.split("\n## ", 1)[0]
    missing = [n for n in map(name_of, runtime) if f"`{n}`" not in table]
    assert missing == []


def test_the_reason_finder_finds_a_requirement_without_one() -> None:
    text = ('  # why a\n  "a>=1",\n  "b>=2",\n  # both c and d\n  "c",\n  "d",\n'
            '  "e",  # inline\n')
    assert unexplained(text) == ["b"]
    assert unexplained('  "x>=1",\n') == ["x"]
