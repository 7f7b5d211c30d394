"""docs/guide.md is a path that works: every YAML example in it is linted, the suite it ends
with passes against the recorded example agent, and every command it shows prints what it
says, when followed step by step through the real command line. And docs/scenarios.md, the
reference, shows scenarios Scenarist accepts: every complete one lints clean against the
example suite — conversations, history, the simulated user and tools that answer by
argument included.

What the guide asks the reader to do in words (edit a check, then put it back) is done
here by ``before``; the parts of an output that differ from run to run (the run
folder's name, the duration) are replaced on both sides before comparing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from dsl._buildtools.docsgen import update_guide
from dsl._buildtools.guide import GUIDE, guide_suite, yaml_blocks
from dsl.compiler.lint import lint_paths
from dsl.init import EXAMPLE
from dsl.source.load import load_text
from tests.conftest import REPO

TEXT = GUIDE.read_text("utf-8")


def test_the_table_of_intervals_is_computed() -> None:
    assert update_guide(TEXT) == TEXT, "docs/guide.md is out of date: python -m dsl._buildtools.docsgen"
    assert "9 of 10 passes → 60%–98%" in TEXT


def test_every_yaml_block_is_a_file_of_the_path() -> None:
    blocks = yaml_blocks(TEXT)
    assert [(b.kind, b.path) for b in blocks] == [
        ("file", "pharmacy/refill_no_refills_left.yaml"),
        ("file", "pharmacy/refill_with_refills_left.yaml"),
        ("add to", "pharmacy/scenarist.yaml"),
        ("file", "pharmacy/opening_hours_today.yaml"),
        ("example", ""),  # 11. Many cases: beside the suite the example agent was recorded on
    ]
    # the example it shows is the one init writes
    assert blocks[0].text == EXAMPLE.read_text("utf-8")
    assert TEXT.count("```yaml") == len(blocks)


def test_the_suite_the_guide_ends_with_lints_clean(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    files = guide_suite(Path("pharmacy"))
    assert [f.name for f in files] == ["refill_no_refills_left.yaml",
                                       "refill_with_refills_left.yaml",
                                       "opening_hours_today.yaml"]
    result = lint_paths([Path("pharmacy")], strict=True)
    assert result.diagnostics == []
    assert result.files == 3


def data_files(text: str) -> dict[str, str]:
    """A doc's data files: each ```csv PATH block."""
    return dict(re.findall(r"```csv (\S+)\n(.*?)```", text, re.S))


CASES_FILE = "pharmacy/refill_each_medicine.yaml"


def test_the_cases_of_step_11_are_a_csv_and_one_scenario_that_reads_every_column(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    guide_suite(Path("pharmacy"))
    files = data_files(TEXT)
    assert list(files) == ["pharmacy/refills.csv"]
    Path("pharmacy/refills.csv").write_text(files["pharmacy/refills.csv"], "utf-8")
    (example,) = [b for b in yaml_blocks(TEXT) if b.kind == "example"]
    Path(CASES_FILE).write_text(example.text, "utf-8")
    result = lint_paths([Path("pharmacy")], strict=True)
    assert result.diagnostics == []  # W407 would name a column nothing reads
    assert result.files == 4
    # the table shown above the CSV is the CSV
    table = re.search(r"\| id \| rx \| medicine \| question \|\n\| --- .*?\n((?:\|.*\n)+)",
                      TEXT)
    assert table is not None
    shown = [[c.strip() for c in row.strip("|").split("|")]
             for row in table.group(1).splitlines()]
    import csv
    import io
    assert shown == list(csv.reader(io.StringIO(files["pharmacy/refills.csv"])))[1:]


def console_blocks(text: str) -> list[list[tuple[str, str]]]:
    """Each ```console block as (command, what it prints) pairs."""
    out = []
    for m in re.finditer(r"```console\n(.*?)```", text, re.S):
        pairs: list[tuple[str, list[str]]] = []
        for line in m.group(1).splitlines():
            if line.startswith("$ "):
                pairs.append((line[2:], []))
            else:
                pairs[-1][1].append(line)
        out.append([(cmd, "\n".join(lines)) for cmd, lines in pairs])
    return out


def same(text: str) -> str:
    text = re.sub(r"runs/\d{8}-\d{6}-\d{6}-[0-9a-f]{4}/", "runs/RUN/", text)
    return re.sub(r" · \d+\.\ds$", " · N.Ns", text, flags=re.M).rstrip("\n")


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text("utf-8")
    assert text.count(old) == 1, old
    path.write_text(text.replace(old, new), "utf-8")


EXAMPLE_FILE = "pharmacy/refill_no_refills_left.yaml"
LAST_CHECK = "  - contains: {text: doctor, ignore_case: true}   # it sends the patient to their doctor\n"
MOMENT = "  at: 2026-10-06T09:30:00-03:00    #"


def test_following_the_guide_prints_what_it_shows(tmp_path: Path) -> None:
    files = {b.path: b.text for b in yaml_blocks(TEXT)}
    steps = console_blocks(TEXT)
    assert len(steps) == 9
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    env.pop("FORCE_COLOR", None)
    example = tmp_path / EXAMPLE_FILE

    def before(step: int) -> None:
        """What the guide asks for in words before the commands of block ``step``."""
        if step == 3:  # 6. See a check fail
            edit(example, LAST_CHECK, "  - contains: pharmacist\n")
        elif step == 4:  # put it back; 7. A mistake, and what lint says
            edit(example, "  - contains: pharmacist\n", "  - contians: doctor\n")
            edit(example, MOMENT, "  at: 2026-10-06T09:30:00    #")
        elif step == 5:  # fix both; 8. A second scenario
            example.write_text(EXAMPLE.read_text("utf-8"), "utf-8")
            name = "pharmacy/refill_with_refills_left.yaml"
            (tmp_path / name).write_text(files[name], "utf-8")
        elif step == 6:  # 9. A third scenario
            suite = tmp_path / "pharmacy" / "scenarist.yaml"
            suite.write_text(suite.read_text("utf-8") + files["pharmacy/scenarist.yaml"],
                             "utf-8")
            name = "pharmacy/opening_hours_today.yaml"
            (tmp_path / name).write_text(files[name], "utf-8")
        elif step == 7:  # 11. Many cases from a spreadsheet
            for name, text in data_files(TEXT).items():
                (tmp_path / name).write_text(text, "utf-8")
            (cases,) = [b for b in yaml_blocks(TEXT) if b.kind == "example"]
            (tmp_path / CASES_FILE).write_text(cases.text, "utf-8")

    for step, pairs in enumerate(steps):
        before(step)
        for command, shown in pairs:
            assert command.startswith("scenarist ")
            p = subprocess.run([sys.executable, "-m", "dsl", *command.split()[1:]],
                               cwd=tmp_path, env=env, capture_output=True, text=True,
                               timeout=120)
            said = (p.stdout + p.stderr).replace(f"{tmp_path}/", "…/")
            assert same(said) == same(shown), (step, command)


# ---- docs/scenarios.md, the reference: every complete scenario in it lints clean ----------

REFERENCE = REPO / "docs" / "scenarios.md"


def reference_scenarios() -> list[tuple[str, str, Any]]:
    """Every ```yaml block of the reference that is a whole scenario (given and when), but
    those of a suite of their own (below a ``# scenarist.yaml`` block)."""
    out = []
    text = REFERENCE.read_text("utf-8")
    for i, block in enumerate(re.findall(r"```yaml\n(.*?)```", text, re.S), 1):
        data = load_text(block, "scenarios").data
        if isinstance(data, dict) and "given" in data and "when" in data \
                and not block.startswith("# "):
            out.append((f"block {i}", block, data))
    return out


PNG = bytes.fromhex("89504e470d0a1a0a0000000d49484452000000010000000108020000009077"
                    "53de0000000c4944415478da63f8ffff3f0005fe02fe0def46b80000000049454e44"
                    "ae426082")


def attached_files(data: Any, root: Path) -> None:
    """The files a scenario of the reference attaches: a small picture, a line of text."""
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


def test_the_reference_shows_every_form_of_when_and_of_a_tool() -> None:
    found = [data for _, _, data in reference_scenarios()]
    whens = {type(d["when"]).__name__ for d in found}
    assert whens == {"str", "list", "dict"}  # one message, turns, a simulated user
    turns = [t for d in found if isinstance(d["when"], list) for t in d["when"]]
    assert {k for t in turns if isinstance(t, dict) for k in t} >= {"say", "confirm",
                                                                    "cancel", "then"}
    assert any("history" in d["given"] for d in found)
    tools = [t for d in found for t in d["given"].get("tools", []) if isinstance(t, dict)]
    assert any("answers" in t for t in tools)


@pytest.mark.parametrize(("name", "block"), [(n, b) for n, b, _ in reference_scenarios()])
def test_each_scenario_of_the_reference_lints_clean(name: str, block: str, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copy(REPO / "scenarios" / "scenarist.yaml", tmp_path / "scenarist.yaml")
    (tmp_path / "example.yaml").write_text(block, "utf-8")
    for file, content in data_files(REFERENCE.read_text("utf-8")).items():
        (tmp_path / file).write_text(content, "utf-8")
    attached_files(load_text(block, "scenarios").data, tmp_path)
    monkeypatch.chdir(tmp_path)
    result = lint_paths([Path("example.yaml")])
    # (the suite's W403, tools this one example does not use, is about the suite)
    assert [f"{d.span} {d.code} {d.message}" for d in result.diagnostics
            if d.span.file == "example.yaml"] == []


def test_the_references_data_file_is_the_example_suites() -> None:
    files = data_files(REFERENCE.read_text("utf-8"))
    assert files == {"hours_in_languages.csv": (REPO / "scenarios" / "clinic" /
                                                "hours_in_languages.csv").read_text("utf-8")}


def test_the_references_suite_with_anchors_the_library_and_named_checks_lints_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The ``# scenarist.yaml`` block and the ``# PATH.yaml`` blocks after it: a suite of
    their own, linted whole (its unused tools and named checks included)."""
    text = REFERENCE.read_text("utf-8")
    blocks = re.findall(r"```yaml\n(# (\S+\.yaml)\n.*?)```", text, re.S)
    assert [name for _, name in blocks][:1] == ["scenarist.yaml"]
    for block, name in blocks:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(block, "utf-8")
    monkeypatch.chdir(tmp_path)
    result = lint_paths([Path(".")], strict=True)
    assert result.files == len(blocks) - 1
    assert [f"{d.span} {d.code} {d.message}" for d in result.diagnostics] == []
    data = load_text(blocks[1][0], "scenarios").data
    assert data["given"]["at"] == "2026-09-29T10:00:00-03:00"  # merged from x-given
    assert data["when"][0]["then"] == data["when"][1]["then"]  # the alias
