"""Every ``-k`` example in the docs selects what the docs say it selects: each one is found
in README.md and docs/*.md (a ``$ scenarist ... -k P`` line, or inline code with ``-k P``),
and ``scenarist plan SUITE -k P`` runs it against the suite it speaks of — the example
suite (scenarios/), or the one docs/guide.md builds. An example added to the docs fails
here until this file says what it selects."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

from dsl._buildtools.guide import GUIDE, guide_suite, yaml_blocks
from tests.conftest import REPO, run_cli

DOCS = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
COMMAND = re.compile(r"^\$ scenarist [^\n]*?-k (?P<p>'[^']*'|\S+)", re.M)
INLINE = re.compile(r"`[^`\n]*?-k (?P<p>'[^']*'|[^`\s]+)[^`\n]*`")

CLINIC = ["clinic.book_cleaning", "clinic.cancel_appointment", "clinic.change_hours", "clinic.change_hours_confirmed",
          "clinic.greeting", "clinic.hours_in_languages[es]",
          "clinic.hours_in_languages[en]", "clinic.hours_in_languages[pt]",
          "clinic.hours_in_languages[fr]", "clinic.hours_today", "clinic.patient_lookup"]
REFILLS = ["refill_each_medicine[metformin]", "refill_each_medicine[atorvastatin]",
           "refill_each_medicine[levothyroxine]"]

# pattern: (the suite it speaks of, what it selects, in the plan's order)
EXPECTED: dict[str, tuple[str, list[str]]] = {
    "clinic.*": ("example", CLINIC),
    "hours_in_languages": ("example", [i for i in CLINIC if "hours_in_languages" in i]),
    "hours[es]": ("example", ["clinic.hours_in_languages[es]"]),
    "clinic.*[es]": ("example", ["clinic.hours_in_languages[es]"]),
    "[es]": ("example", ["clinic.hours_in_languages[es]"]),
    "refill": ("guide", [*REFILLS, "refill_no_refills_left", "refill_with_refills_left"]),
    "refill_each": ("guide", REFILLS),
}


def examples() -> dict[str, list[str]]:
    """Each -k pattern the docs show, and where."""
    found: dict[str, list[str]] = {}
    for doc in DOCS:
        text = doc.read_text("utf-8")
        for m in [*COMMAND.finditer(text), *INLINE.finditer(text)]:
            (pattern,) = shlex.split(m["p"])
            if pattern != "PATTERN":
                found.setdefault(pattern, []).append(doc.name)
    return found


def test_every_k_example_in_the_docs_is_tested_here() -> None:
    found = examples()
    assert set(found) == set(EXPECTED), found
    assert "scenarios.md" in found["clinic.*[es]"]
    assert "cli.md" in found["hours[es]"]


@pytest.fixture(scope="module")
def guide(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The suite docs/guide.md ends with, its cases of step 11 included."""
    root = tmp_path_factory.mktemp("guide")
    suite = root / "pharmacy"
    guide_suite(suite)
    text = GUIDE.read_text("utf-8")
    for name, data in re.findall(r"```csv (\S+)\n(.*?)```", text, re.S):
        (root / name).write_text(data, "utf-8")
    (cases,) = [b for b in yaml_blocks(text) if b.kind == "example"]
    (suite / "refill_each_medicine.yaml").write_text(cases.text, "utf-8")
    return suite


@pytest.mark.parametrize("pattern", sorted(EXPECTED))
def test_each_k_example_selects_what_the_docs_say(pattern: str, guide: Path) -> None:
    where, ids = EXPECTED[pattern]
    suite = REPO / "scenarios" if where == "example" else guide
    out = run_cli("plan", str(suite), "-k", pattern, "--json", cwd=suite.parent)
    assert out.exit_code == 0, out.output
    assert [s["id"] for s in json.loads(out.output)["scenarios"]] == ids
