"""The terminal summary: failing scenarios first with their failing checks, --quiet, colour
only when wanted (NO_COLOR wins), and the change against a baseline."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from dsl.results.baseline import compare
from dsl.results.terminal import print_summary
from dsl.store import read_json
from dsl.store.summaryfile import summary_of
from tests.results.report_builders import demo_run

S = summary_of  # the summary.json these tests change, read as the stages take it

FULL = """\
FAIL  clinic.book_cleaning  fake     3/5   min 4    60% [23%–88%]
      ✗ asks_to_confirm: "book_appointment"  (failed 2 of 5)
????  clinic.book_cleaning  other    0/0   min 4      –  5 errors (timeout)
      ! timeout ×5: The endpoint took longer to answer than the target allows (timeout_ms, \
or attempt_timeout_ms for the whole attempt); it says nothing about the model, so it counts \
neither as a pass nor as a failure.
        what happened: no answer within 30 s
????  shop.refund           other    0/0   min 2      –  3 not run
PASS  clinic.hours_today    fake     5/5   min 4   100% [57%–100%]
PASS  clinic.hours_today    other    5/5   min 4   100% [57%–100%]
PASS  shop.refund           fake     2/3   min 2    67% [21%–94%]  1 unsure

3/6 passed · 1 failed · 2 inconclusive · 23 attempts · 1 unsure · 5 endpoint errors · \
6,900 tokens · judge: 1 question (0 cached), 0 tokens · 12.5s
"""


@pytest.fixture
def summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.delenv("NO_COLOR", raising=False)
    return dict(read_json(demo_run(tmp_path / "run") / "summary.json"))


def test_failing_first_with_their_checks(summary: dict[str, Any],
                                         capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(S(summary))
    assert capsys.readouterr().out == FULL


def test_quiet_leaves_out_the_passing(summary: dict[str, Any],
                                      capsys: pytest.CaptureFixture[str]) -> None:
    print_summary(S(summary), quiet=True)
    out = capsys.readouterr().out
    assert "PASS" not in out
    assert out == "".join(line + "\n" for line in FULL.splitlines()
                          if not line.startswith("PASS"))


def test_colour_when_forced_and_never_with_no_color(
        summary: dict[str, Any], capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    print_summary(S(summary))
    coloured = capsys.readouterr().out
    assert "\x1b[31m\x1b[1mFAIL\x1b[0m" in coloured
    assert "\x1b[32m\x1b[1mPASS\x1b[0m" in coloured
    monkeypatch.setenv("NO_COLOR", "1")
    print_summary(S(summary))
    assert capsys.readouterr().out == FULL


def test_changes_against_a_baseline(summary: dict[str, Any],
                                    capsys: pytest.CaptureFixture[str]) -> None:
    before = copy.deepcopy(summary)
    before["run_id"] = "base-1"
    before["scenarios"][0].update(passes=30, decided=30, verdict="pass")  # now: regressed
    before["scenarios"][5].update(passes=0, decided=3, verdict="fail")  # now: 2 of 3
    before["scenarios"].pop(4)
    print_summary(S(summary), quiet=True, comparison=compare(S(summary), S(before)))
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].endswith("60% [23%–88%]  ▼ regressed −40 pts")
    assert lines[-1] == "Against base-1: 1 regressed, 3 inconclusive, 1 new, 1 unchanged"
    print_summary(S(summary), comparison=compare(S(summary), S(before)))
    lines = capsys.readouterr().out.splitlines()
    assert lines[7] == ("PASS  clinic.hours_today    other    5/5   min 4   100% [57%–100%]"
                        "  new")
    assert lines[8] == ("PASS  shop.refund           fake     2/3   min 2    67% [21%–94%]"
                        "  1 unsure  ? flipped within noise +67 pts")
