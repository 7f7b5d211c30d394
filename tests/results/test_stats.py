"""Every statistic of dsl/results/stats.py against an independent implementation, to 1e-9:
Wilson and Newcombe against statsmodels, pass@k and pass^k against scipy's hypergeometric
distribution, F1 against scipy's harmonic mean (test-only dependencies)."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import hmean, hypergeom, norm
from statsmodels.stats.proportion import confint_proportions_2indep, proportion_confint

from dsl.results.stats import (
    PASS_K,
    PRF,
    Z95,
    newcombe,
    pass_at_k,
    pass_hat_k,
    pass_k_table,
    wilson,
)

TOL = 1e-9
COUNTS = [(k, n) for n in (1, 2, 3, 5, 7, 10, 20, 50, 100, 1000) for k in sorted({0, 1, n // 3,
                                                                                  n // 2, n - 1,
                                                                                  n})]


def test_z_is_the_normal_quantile() -> None:
    assert pytest.approx(norm.ppf(0.975), abs=1e-15) == Z95


@pytest.mark.parametrize(("k", "n"), COUNTS)
def test_wilson_matches_statsmodels(k: int, n: int) -> None:
    low, high = proportion_confint(k, n, alpha=0.05, method="wilson")
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(max(0.0, low), abs=TOL)
    assert hi == pytest.approx(min(1.0, high), abs=TOL)


def test_wilson_of_nothing_is_everything() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


PAIRS = [(a, b) for a, b in itertools.product(
    [(0, 5), (3, 5), (5, 5), (9, 10), (2, 10), (56, 70), (48, 80), (0, 1), (1, 1), (30, 30)],
    repeat=2)]


@pytest.mark.parametrize(("now", "before"), PAIRS)
def test_newcombe_matches_statsmodels(now: tuple[int, int], before: tuple[int, int]) -> None:
    (k1, n1), (k2, n2) = now, before
    low, high = confint_proportions_2indep(k1, n1, k2, n2, method="newcomb", compare="diff",
                                           alpha=0.05)
    d, interval = newcombe(k1, n1, k2, n2)
    assert d == pytest.approx(k1 / n1 - k2 / n2, abs=TOL)
    assert interval.low == pytest.approx(max(-1.0, low), abs=TOL)
    assert interval.high == pytest.approx(min(1.0, high), abs=TOL)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 60).flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n),
                                                      st.integers(1, n))))
def test_pass_at_k_and_pass_hat_k_match_the_hypergeometric_law(t: tuple[int, int, int]) -> None:
    n, c, k = t
    # Drawing k of the n attempts without replacement: how many of them passed is
    # hypergeometric (population n, c passes, k drawn).
    law = hypergeom(n, c, k)
    assert pass_at_k(n, c, k) == pytest.approx(1 - law.pmf(0), abs=TOL)
    assert pass_hat_k(n, c, k) == pytest.approx(law.pmf(k), abs=TOL)


def test_pass_at_k_is_chens_estimator() -> None:
    # Chen et al. (2021), the numerically stable form: 1 − Π_{i=n−c+1..n} (1 − k/i)
    for n, c, k in [(10, 3, 1), (10, 3, 5), (200, 17, 10), (5, 0, 3), (5, 5, 1), (5, 4, 2)]:
        stable = 1.0 if n - c < k else 1 - math.prod(1 - k / i for i in range(n - c + 1, n + 1))
        assert pass_at_k(n, c, k) == pytest.approx(stable, abs=TOL)


def test_pass_k_at_one_is_the_pass_rate() -> None:
    assert pass_at_k(10, 7, 1) == pytest.approx(0.7, abs=TOL)
    assert pass_hat_k(10, 7, 1) == pytest.approx(0.7, abs=TOL)


def test_pass_k_refuses_impossible_counts() -> None:
    with pytest.raises(ValueError, match="need 0 ≤ c ≤ n and 1 ≤ k ≤ n"):
        pass_at_k(3, 4, 1)
    with pytest.raises(ValueError, match="need 0 ≤ c ≤ n and 1 ≤ k ≤ n"):
        pass_hat_k(3, 1, 4)


def test_pass_k_table_reports_the_ks_that_fit() -> None:
    at, hat = pass_k_table(5, 3)
    assert list(at) == ["1", "3", "5"]
    assert list(hat) == ["1", "3", "5"]
    assert set(PASS_K) == {1, 3, 5, 10}
    assert at["5"] == 1.0
    assert hat["5"] == 0.0
    assert hat["3"] == pytest.approx(1 / 10, abs=TOL)  # C(3,3)/C(5,3)


@pytest.mark.parametrize(("tp", "fp", "fn"), [
    (1, 0, 0), (3, 1, 2), (17, 2, 3), (1, 2, 1), (5, 0, 5), (5, 5, 0), (100, 1, 0)])
def test_f1_is_the_harmonic_mean_of_precision_and_recall(tp: int, fp: int, fn: int) -> None:
    s = PRF(tp, fp, fn)
    assert s.precision == pytest.approx(tp / (tp + fp), abs=TOL)
    assert s.recall == pytest.approx(tp / (tp + fn), abs=TOL)
    assert s.f1 == pytest.approx(hmean([s.precision, s.recall]), abs=TOL)


def test_f1_edge_cases() -> None:
    assert (PRF(0, 0, 0).precision, PRF(0, 0, 0).recall, PRF(0, 0, 0).f1) == (1.0, 1.0, 1.0)
    only_missed = PRF(0, 0, 4)
    assert (only_missed.precision, only_missed.recall, only_missed.f1) == (1.0, 0.0, 0.0)
    only_wrong = PRF(0, 3, 0)
    assert (only_wrong.precision, only_wrong.recall, only_wrong.f1) == (0.0, 1.0, 0.0)
    assert PRF(0, 2, 2).f1 == 0.0
    assert PRF(1, 2, 3, 4) + PRF(1, 1, 1, 1) == PRF(2, 3, 4, 5)
    assert PRF(1, 1, 0, 7).as_json() == {"tp": 1, "fp": 1, "fn": 0, "tn": 7,
                                         "precision": 0.5, "recall": 1.0, "f1": 2 / 3}
