"""How many runs a rule needs (issue 25, item 4): ``scenarist plan --power P_GOOD:P_BAD``
against an exact binomial computation (scipy) to 1e-9, the smallest gate found by brute
force with scipy, bad values refused with exit 2, the runs per side a change needs before
diff's Newcombe interval sees it, and docs/statistics.md's tables made from the code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binom

from dsl._buildtools.docsgen import GATES, TRUE_RATES, update_statistics
from dsl.results.stats import newcombe, pass_chance, runs_to_see, smallest_gate
from tests.conftest import run_cli, suite_yaml, write

ROOT = Path(__file__).resolve().parents[2]


def scipy_gate(p_good: float, p_bad: float) -> tuple[int, int] | None:
    for n in range(1, 101):
        for m in range(n + 1):
            if binom.sf(m - 1, n, p_good) >= 0.95 and binom.sf(m - 1, n, p_bad) <= 0.05:
                return n, m
    return None


@pytest.mark.parametrize(("runs", "need"), [(1, 1), (3, 3), (5, 4), (10, 8), (20, 16),
                                            (41, 34), (100, 95), (7, 0)])
@pytest.mark.parametrize("p", [0.0, 0.05, 0.5, 0.7, 0.9, 0.99, 1.0])
def test_pass_chance_is_the_binomial_tail(runs: int, need: int, p: float) -> None:
    assert pass_chance(runs, need, p) == pytest.approx(binom.sf(need - 1, runs, p), abs=1e-9)


@pytest.mark.parametrize(("good", "bad"), [(0.9, 0.7), (0.95, 0.8), (0.8, 0.6), (0.9, 0.8),
                                           (0.99, 0.5), (0.6, 0.4), (1.0, 0.0)])
def test_the_smallest_gate_matches_a_brute_force_search(good: float, bad: float) -> None:
    assert smallest_gate(good, bad) == scipy_gate(good, bad)


def _plan_suite(tmp_path: Path) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    for name, gate in (("five", "runs: 5\nmin_pass: 4\n"), ("ten", "runs: 10\nmin_pass: 8\n")):
        write(tmp_path / f"{name}.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\n"
                                         "when: hola\nthen:\n  - non_empty\n" + gate)


def test_plan_power_json_gives_each_scenario_its_chances_and_the_suggested_gate(
        tmp_path: Path) -> None:
    _plan_suite(tmp_path)
    r = run_cli("plan", ".", "--power", "0.9:0.7", "--json", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    planned = {s["id"]: s for s in json.loads(r.output)["scenarios"]}
    assert set(planned) == {"five", "ten"}
    for s in planned.values():
        power = s["power"]
        assert set(power) == {"p_good", "p_bad", "pass_chance_good", "pass_chance_bad",
                              "suggested_runs", "suggested_min_pass"}
        assert (power["p_good"], power["p_bad"]) == (0.9, 0.7)
        n, m = s["runs"], s["min_pass"]
        assert abs(power["pass_chance_good"] - binom.sf(m - 1, n, 0.9)) < 1e-9
        assert abs(power["pass_chance_bad"] - binom.sf(m - 1, n, 0.7)) < 1e-9
        assert (power["suggested_runs"], power["suggested_min_pass"]) == scipy_gate(0.9, 0.7)
    assert planned["five"]["power"]["suggested_runs"] == 41
    # 100 runs are not enough to tell 90% from 80%
    r = run_cli("plan", ".", "--power", "0.9:0.8", "--json", cwd=tmp_path)
    power = json.loads(r.output)["scenarios"][0]["power"]
    assert (power["suggested_runs"], power["suggested_min_pass"]) == (None, None)


def test_plan_power_in_words(tmp_path: Path) -> None:
    _plan_suite(tmp_path)
    r = run_cli("plan", ".", "--power", "0.9:0.7", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    at = lines.index("How often each gate passes an agent whose true pass rate is 90%, and one "
                     "whose rate is 70% (exact binomial):")
    assert lines[at + 1:] == [
        "scenario  gate      passes 90%   passes 70%",
        "five      4/5            91.9%        52.8%  ✗",
        "ten       8/10           93.0%        38.3%  ✗",
        "✗: this gate does not pass the 90% agent and fail the 70% one 95% of the time each.",
        "To pass a 90% agent and fail a 70% one, each at least 95% of the time: runs: 41 with "
        "min_pass: 34 (the fewest runs that can)."]
    r = run_cli("plan", ".", "--power", "0.9:0.8", cwd=tmp_path)
    assert r.output.splitlines()[-1] == (
        "To pass a 90% agent and fail a 80% one, each at least 95% of the time: 100 runs are "
        "not enough; compare rates further apart, or accept more risk.")


@pytest.mark.parametrize("value", ["0.7:0.9", "0.9", "0.9:0.7:0.5", "1.2:0.7", "a:b",
                                   "0.9:-0.1", "0.8:0.8", ""])
def test_bad_power_values_exit_2_saying_what_it_takes(tmp_path: Path, value: str) -> None:
    _plan_suite(tmp_path)
    r = run_cli("plan", ".", "--power", value, cwd=tmp_path)
    assert r.exit_code == 2
    assert ("--power takes two pass rates between 0 and 1, P_GOOD:P_BAD, the first above the "
            "second") in " ".join(r.output.split())


@pytest.mark.parametrize(("before", "now"), [(0.9, 0.7), (1.0, 0.6), (0.8, 0.6), (0.95, 0.85)])
def test_runs_to_see_is_the_first_count_whose_newcombe_interval_leaves_out_zero(
        before: float, now: float) -> None:
    n = runs_to_see(before, now)
    assert n is not None
    _, interval = newcombe(round(now * n), n, round(before * n), n)
    assert interval.excludes_zero()
    for fewer in range(1, n):
        k_now, k_before = round(now * fewer), round(before * fewer)
        assert k_now == k_before or not newcombe(k_now, fewer, k_before, fewer)[1].excludes_zero()
    assert runs_to_see(0.5, 0.5) is None


def test_the_statistics_page_tables_are_made_from_the_code() -> None:
    text = (ROOT / "docs" / "statistics.md").read_text("utf-8")
    assert update_statistics(text) == text, (
        "docs/statistics.md is out of date: python -m dsl._buildtools.docsgen")
    for runs, need in GATES:
        row = next(line for line in text.splitlines() if line.startswith(f"| {need} of {runs} |"))
        cells = [c.strip() for c in row.strip("|").split("|")][1:]
        assert cells == [f"{binom.sf(need - 1, runs, p) * 100:.1f}%" for p in TRUE_RATES]
    assert {(3, 3), (5, 4), (10, 8), (20, 16)} <= set(GATES)
