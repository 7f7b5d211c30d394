"""The example suite runs offline from its recorded cassette and lints clean; the README's
Quickstart and .ci/run agree."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from dsl.cli import main
from tests.conftest import REPO


def run_examples(tmp_path: Path, *extra: str) -> dict[str, Any]:
    r = CliRunner().invoke(main, ["run", str(REPO / "scenarios"), "--out", str(tmp_path),
                                  *extra])
    assert r.exit_code == 1, r.output  # the recorded small model fails some scenarios
    (run_dir,) = tmp_path.iterdir()
    assert (run_dir / "report.html").stat().st_size > 10_000
    summary: dict[str, Any] = json.loads((run_dir / "summary.json").read_text())
    return summary


def test_example_suite_replays_offline_with_and_without_early_stop(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    full = run_examples(tmp_path / "full", "--no-early-stop")
    verdicts = {row["scenario"]: (row["verdict"], row["passes"], row["runs"])
                for row in full["scenarios"]}
    assert verdicts == {
        "clinic.hours_today": ("fail", 0, 5),
        "clinic.book_cleaning": ("fail", 0, 5),
        "clinic.change_hours": ("pass", 4, 5),
        "clinic.change_hours_confirmed": ("pass", 3, 5),
        "clinic.patient_lookup": ("pass", 4, 5),
        "clinic.greeting": ("fail", 0, 5),
        # one scenario, four rows of hours_in_languages.csv
        "clinic.hours_in_languages[es]": ("fail", 2, 5),
        "clinic.hours_in_languages[en]": ("pass", 3, 5),
        "clinic.hours_in_languages[pt]": ("fail", 1, 5),
        "clinic.hours_in_languages[fr]": ("pass", 3, 5),
        # a world with state: the right appointment cancelled, the others left booked
        "clinic.cancel_appointment": ("pass", 4, 5),
    }
    assert full["totals"]["errors"] == 0
    assert full["targets"][0]["model"] == "qwen2.5-coder-0.5b"

    early = run_examples(tmp_path / "early", "-j", "1")  # one at a time: deterministic
    assert {r["scenario"]: r["verdict"] for r in early["scenarios"]} == \
        {k: v[0] for k, v in verdicts.items()}
    assert {r["scenario"]: (r["runs"], r["saved"]) for r in early["scenarios"]} == {
        "clinic.hours_today": (2, 3), "clinic.book_cleaning": (3, 2),
        "clinic.change_hours": (5, 0), "clinic.change_hours_confirmed": (5, 0),
        "clinic.patient_lookup": (4, 1), "clinic.greeting": (2, 3),
        "clinic.hours_in_languages[es]": (4, 1), "clinic.hours_in_languages[en]": (5, 0),
        "clinic.hours_in_languages[pt]": (4, 1), "clinic.hours_in_languages[fr]": (5, 0),
        "clinic.cancel_appointment": (4, 1)}
    assert early["early_stop"]["runs"] == 12
    assert early["totals"]["attempts"] == 43


def test_the_example_conversations_replay_turn_by_turn(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What the real model did in the recorded conversations (README, "The example
    suite"): the owner's change held, then confirmed and run; an existing patient found,
    a missing one told 'no record for these arguments'."""
    monkeypatch.setenv("NO_COLOR", "1")
    run_examples(tmp_path, "--no-early-stop")
    (run_dir,) = tmp_path.iterdir()
    recs = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    change = {r["run"]: r for r in recs if r["scenario"] == "clinic.change_hours_confirmed"}
    passed = [r for r in change.values() if r["status"] == "pass"]
    assert len(passed) == 3
    for r in passed:
        assert [t["kind"] for t in r["turns"]] == ["say", "confirm"]
        (call,) = r["calls"]
        assert (call["name"], call["args"]["day"], call["decision"]) == (
            "set_business_hours", "saturday", "confirmed")
        assert call["output"] == "Hours for saturday updated."
    lookup = [r for r in recs if r["scenario"] == "clinic.patient_lookup"
              and r["status"] == "pass"]
    assert len(lookup) == 4
    for r in lookup:
        found, missing = r["calls"]
        assert "error" not in found
        assert "Ana Gómez" in found["output"]
        assert missing["error"] == "no-record"
        assert missing["output"] == \
            'error: no record for these arguments: {"patient_id": "P-9999"}'


def test_example_suite_lints_clean() -> None:
    r = CliRunner().invoke(main, ["lint", str(REPO / "scenarios")])
    assert r.exit_code == 0, r.output
    assert r.output == "8 file(s): 0 error(s), 0 warning(s)\n"


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


def test_the_retail_example_replays_offline_and_lints_clean(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """scenarios/retail (tau-bench's retail tasks, a suite of its own) replays offline from
    its recorded cassette, as its README says: the small model passes the transfer, and its
    conversation ends where the transfer was made."""
    monkeypatch.setenv("NO_COLOR", "1")
    retail = REPO / "scenarios" / "retail"
    lint = CliRunner().invoke(main, ["lint", "--strict", str(retail)])
    assert lint.exit_code == 0, lint.output
    r = CliRunner().invoke(main, ["run", str(retail), "--out", str(tmp_path),
                                  "--no-early-stop"])
    assert r.exit_code == 1, r.output
    (run_dir,) = tmp_path.iterdir()
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["totals"]["errors"] == 0
    assert {row["scenario"]: (row["verdict"], row["passes"]) for row in summary["scenarios"]} \
        == {"retail.cancel_pending_order": ("fail", 0), "retail.modify_address": ("fail", 0),
            "retail.modify_items": ("fail", 0), "retail.return_items": ("fail", 0),
            "retail.exchange_items": ("fail", 0), "retail.lookup_tshirts": ("fail", 0),
            "retail.transfer_to_human": ("pass", 2)}
    recs = [json.loads(x) for x in (run_dir / "results.jsonl").read_text().splitlines()]
    transfers = [x for x in recs if x["scenario"] == "retail.transfer_to_human"
                 and x["status"] == "pass"]
    assert [(x["ended_by"], len(x["turns"])) for x in transfers] == \
        [("transfer_to_human_agents", 3)] * 2
    kinds = {c.get("error") for x in recs for c in x["calls"]}
    assert {"invalid-args", "no-row"} <= kinds
