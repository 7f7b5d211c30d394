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


def _always_suite(tmp_path: Path, mixed: bool = False) -> None:
    write(tmp_path / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    other = "  - non_empty\n" if mixed else ""
    write(tmp_path / "rule.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hola\n"
                                  "then:\n  - not_contains: PIN\n    always: true\n" + other
                                  + "runs: 5\nmin_pass: 4\n")


def test_plan_power_takes_an_always_rule_into_account(tmp_path: Path) -> None:
    """Issue 32, item 13: a scenario whose only check is an always rule needs every attempt
    to pass — a 4-of-5 gate passes a 90% agent 59.0% of the time, not 91.9%, and a 70% one
    16.8%, not 52.8%; and no gate passes a 90% agent 95% of the time then (not 41/34)."""
    _always_suite(tmp_path)
    r = run_cli("plan", ".", "--power", "0.9:0.7", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    lines = r.output.splitlines()
    at = lines.index("How often each gate passes an agent whose true pass rate is 90%, and one "
                     "whose rate is 70% (exact binomial):")
    assert lines[at + 1:] == [
        "scenario  gate         passes 90%   passes 70%",
        "rule      4/5 always        59.0%        16.8%  ✗",
        "✗: this gate does not pass the 90% agent and fail the 70% one 95% of the time each.",
        "always: the scenario has a check marked always: true, and an attempt that breaks it "
        "fails the scenario whatever min_pass says. When every check is one, every attempt "
        "must pass; when some are, the chance lies between that and min_pass alone.",
        "With an always rule (rule), to pass a 90% agent and fail a 70% one, each at least 95% "
        "of the time: no number of runs can: the good agent is sure to pass only when every "
        "attempt passes, and a 90% agent passes even one attempt only 90.0% of the time; make "
        "the rule's own check pass more surely, or drop always: true from it."]
    r = run_cli("plan", ".", "--power", "0.9:0.7", "--json", cwd=tmp_path)
    (planned,) = json.loads(r.output)["scenarios"]
    assert planned["power"] == {
        "p_good": 0.9, "p_bad": 0.7, "pass_chance_good": pytest.approx(0.9 ** 5, abs=1e-12),
        "pass_chance_bad": pytest.approx(0.7 ** 5, abs=1e-12), "suggested_runs": None,
        "suggested_min_pass": None, "always": "every"}
    # rates where a gate can: every attempt of 3 passes a 99% agent 97.0% of the time,
    # and a 30% one 2.7%
    r = run_cli("plan", ".", "--power", "0.99:0.3", "--json", cwd=tmp_path)
    (planned,) = json.loads(r.output)["scenarios"]
    assert (planned["power"]["suggested_runs"], planned["power"]["suggested_min_pass"]) == (3, 3)
    r = run_cli("plan", ".", "--power", "0.99:0.3", cwd=tmp_path)
    assert r.output.splitlines()[-1] == (
        "With an always rule (rule), to pass a 99% agent and fail a 30% one, each at least 95% "
        "of the time: runs: 3 with min_pass: 3 (the fewest runs that can).")


def test_plan_power_with_an_always_rule_beside_other_checks_gives_the_range(
        tmp_path: Path) -> None:
    _always_suite(tmp_path, mixed=True)
    r = run_cli("plan", ".", "--power", "0.9:0.7", cwd=tmp_path)
    assert "rule      4/5 always   59.0–91.9%   16.8–52.8%  ✗" in r.output.splitlines()
    r = run_cli("plan", ".", "--power", "0.9:0.7", "--json", cwd=tmp_path)
    power = json.loads(r.output)["scenarios"][0]["power"]
    assert power["always"] == "some"
    assert power["pass_chance_good"] == pytest.approx(binom.pmf(5, 5, 0.9), abs=1e-9)
    assert power["pass_chance_good_most"] == pytest.approx(binom.sf(3, 5, 0.9), abs=1e-9)
    assert power["pass_chance_bad"] == pytest.approx(binom.sf(3, 5, 0.7), abs=1e-9)
    assert power["pass_chance_bad_least"] == pytest.approx(binom.pmf(5, 5, 0.7), abs=1e-9)


def scipy_always_gate(p_good: float, p_bad: float, every: bool) -> tuple[int, int] | None:
    """The fewest runs whose worst case passes the good agent (every attempt passes) and
    fails the bad one (min_pass alone, or every attempt when every check is a rule)."""
    for n in range(1, 101):
        if binom.pmf(n, n, p_good) < 0.95:
            continue
        for m in range(n + 1):
            bad = binom.pmf(n, n, p_bad) if every else binom.sf(m - 1, n, p_bad)
            if bad <= 0.05:
                return n, (n if every else m)
    return None


@pytest.mark.parametrize(("good", "bad"), [(0.9, 0.7), (0.99, 0.3), (0.999, 0.5),
                                           (0.995, 0.6), (1.0, 0.0), (0.97, 0.2)])
@pytest.mark.parametrize("every", [True, False])
def test_the_smallest_always_gate_matches_a_brute_force_search(good: float, bad: float,
                                                               every: bool) -> None:
    assert smallest_gate(good, bad, rule="every" if every else "some") == \
        scipy_always_gate(good, bad, every)
