"""The example suite runs offline from its recorded cassette and lints clean; the README's
Quickstart and .ci/run agree."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from dsl.cli import main

from .conftest import REPO


def test_example_suite_replays_offline(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    r = CliRunner().invoke(main, ["run", str(REPO / "scenarios"), "--out", str(tmp_path)])
    assert r.exit_code == 1, r.output  # the recorded small model fails some scenarios
    (run_dir,) = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    verdicts = {row["scenario"]: (row["verdict"], row["passes"], row["runs"])
                for row in summary["scenarios"]}
    assert verdicts == {
        "clinic.hours_today": ("fail", 1, 5),
        "clinic.book_cleaning": ("fail", 0, 5),
        "clinic.change_hours": ("pass", 4, 5),
        "clinic.greeting": ("fail", 0, 5),
    }
    assert summary["totals"]["errors"] == 0
    assert summary["targets"][0]["model"] == "qwen2.5-coder-0.5b"
    assert (run_dir / "report.html").stat().st_size > 10_000


def test_example_suite_lints_clean() -> None:
    r = CliRunner().invoke(main, ["lint", str(REPO / "scenarios")])
    assert r.exit_code == 0, r.output
    assert r.output == "4 file(s): 0 error(s), 0 warning(s)\n"


def quickstart_commands() -> list[str]:
    readme = (REPO / "README.md").read_text()
    section = readme.split("## Quickstart", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```sh\n(.*?)\n```", section, re.S)


def test_readme_quickstart_is_two_commands_and_ci_runs_the_test_command_verbatim() -> None:
    commands = quickstart_commands()
    assert len(commands) == 2
    assert all("\n" not in c for c in commands)
    assert "scenarist run scenarios" in commands[0]
    assert commands[1] in (REPO / ".ci" / "run").read_text().splitlines()
