"""Baseline comparison: Newcombe's interval checked against the published values, and each
status of a scenario × target decided exactly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dsl.errors import RunDirError
from dsl.results.baseline import Side, compare, compare_row, load_summary, newcombe, pts
from dsl.store.summaryfile import Summary, SummaryRow, summary_json
from tests.results.report_builders import demo_run

# Newcombe (1998), "Interval estimation for the difference between independent
# proportions", Statistics in Medicine 17:873-890, Table II, method 10 (hybrid score).
NEWCOMBE_TABLE_II = [
    ((56, 70, 48, 80), 0.2000, 0.0524, 0.3339),
    ((9, 10, 3, 10), 0.6000, 0.1705, 0.8090),
    ((6, 7, 2, 7), 0.5714, 0.0582, 0.8062),
    ((5, 56, 0, 29), 0.0893, -0.0381, 0.1926),
    ((0, 10, 0, 20), 0.0, -0.1611, 0.2775),
    ((0, 10, 0, 10), 0.0, -0.2775, 0.2775),
    ((10, 10, 0, 20), 1.0, 0.6791, 1.0),
    ((10, 10, 0, 10), 1.0, 0.6075, 1.0),
]


@pytest.mark.parametrize(("counts", "delta", "low", "high"), NEWCOMBE_TABLE_II)
def test_newcombe_matches_the_published_table(counts: tuple[int, int, int, int], delta: float,
                                              low: float, high: float) -> None:
    d, interval = newcombe(*counts)
    assert round(d, 4) == delta
    assert round(interval.low, 4) == low
    assert round(interval.high, 4) == high


def test_newcombe_needs_decided_attempts() -> None:
    with pytest.raises(ValueError, match="at least one decided attempt"):
        newcombe(0, 0, 1, 2)


def row(passes: int, decided: int, verdict: str, *, scenario: str = "s",
        target: str = "t") -> SummaryRow:
    return SummaryRow(scenario=scenario, target=target, verdict=verdict, passes=passes,
                      decided=decided)


def test_regressed_when_it_passed_before_and_the_drop_is_real() -> None:
    c = compare_row(row(2, 10, "fail"), row(10, 10, "pass"))
    assert c.status == "regressed"
    assert c.delta == pytest.approx(-0.8)
    assert c.interval is not None
    # Wilson(2, 10) = [0.0567, 0.5098], Wilson(10, 10) = [0.7225, 1]:
    # −0.8 − √(0.1433² + 0²) and −0.8 + √(0.3098² + 0.2775²)
    assert round(c.interval.low, 4) == -0.9433
    assert round(c.interval.high, 4) == -0.3840
    assert c.interval.excludes_zero()
    assert c.note == "passed before, fails now: −80 pts (95% CI −94 to −38)"


def test_improved_when_it_failed_before_and_the_rise_is_real() -> None:
    c = compare_row(row(9, 10, "pass"), row(3, 10, "fail"))
    assert c.status == "improved"
    assert c.note == "failed before, passes now: +60 pts (95% CI +17 to +81)"


def test_a_flip_within_noise_is_inconclusive() -> None:
    c = compare_row(row(3, 5, "fail"), row(5, 5, "pass"))
    assert c.status == "inconclusive"
    assert c.interval is not None
    assert not c.interval.excludes_zero()
    assert c.note == ("passed before, fails now, but the difference may be chance: "
                      "−40 pts (95% CI −77 to +12)")


def test_the_same_verdict_is_unchanged_even_when_the_rate_moves() -> None:
    c = compare_row(row(8, 10, "pass"), row(10, 10, "pass"))
    assert c.status == "unchanged"
    assert c.note == "passed before and now; −20 pts (95% CI −51 to +11)"


def test_no_verdict_on_either_side_is_inconclusive() -> None:
    assert compare_row(row(1, 1, "inconclusive"), row(5, 5, "pass")).note == (
        "no verdict in this run; 0 pts (95% CI −79 to +43)")
    c = compare_row(row(5, 5, "pass"), row(0, 0, "inconclusive"))
    assert c.status == "inconclusive"
    assert c.delta is None
    assert c.interval is None
    assert c.note == "no verdict in the baseline; no difference can be computed"
    both = compare_row(row(0, 0, "inconclusive"), row(0, 0, "inconclusive"))
    assert both.note == "no verdict in both runs; no difference can be computed"


def test_new_and_removed_rows() -> None:
    now = Summary(scenarios=(row(5, 5, "pass", scenario="a"),
                             row(5, 5, "pass", scenario="b")))
    before = Summary(scenarios=(row(5, 5, "pass", scenario="a"),
                                row(1, 5, "fail", scenario="c")),
                     run_id="r0", started_at="2026-01-01T00:00:00+00:00")
    cmp = compare(now, before)
    assert [c.status for c in cmp.changes] == ["unchanged", "new", "removed"]
    assert cmp.changes[1].note == "not in the baseline"
    assert cmp.changes[2].note == "not in this run"
    assert (cmp.changes[2].before, cmp.changes[2].now) == (Side("fail", 1, 5), None)
    assert cmp.removed == (("c", "t"),)
    assert cmp.baseline_run_id == "r0"
    assert cmp.counts() == {"regressed": 0, "improved": 0, "inconclusive": 0, "new": 1,
                            "removed": 1, "unchanged": 1}
    assert cmp.get("b", "t") is cmp.changes[1]
    assert cmp.get("zzz", "t") is None
    assert cmp.counts()["regressed"] == 0


@pytest.mark.parametrize(("x", "text"), [(0.123, "+12"), (-0.05, "−5"), (0.004, "0"),
                                         (-0.004, "0"), (1.0, "+100")])
def test_points_are_signed(x: float, text: str) -> None:
    assert pts(x) == text


def test_load_summary_from_a_folder_a_file_or_stored_results(tmp_path: Path) -> None:
    run = demo_run(tmp_path / "run")
    from_dir = load_summary(run)
    assert summary_json(from_dir) == json.loads((run / "summary.json").read_text("utf-8"))
    assert load_summary(run / "summary.json") == from_dir
    (run / "summary.json").unlink()
    recomputed = load_summary(run)  # no summary.json: summarized from results.jsonl
    assert [r.verdict for r in recomputed.scenarios] == [r.verdict for r in from_dir.scenarios]


def test_load_summary_says_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(RunDirError, match="does not exist; give a run folder or its summary"):
        load_summary(tmp_path / "nope")
    bad = tmp_path / "other.json"
    bad.write_text('{"schema_version": 1, "rows": []}', "utf-8")
    with pytest.raises(RunDirError, match="is not a run summary"):
        load_summary(bad)
    with pytest.raises(RunDirError, match=r"plan.json does not exist; is .* a run folder"):
        load_summary(tmp_path)
