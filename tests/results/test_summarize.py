"""Summaries: Wilson intervals, percentiles, verdicts and exit codes."""

from __future__ import annotations

from typing import Any

import pytest

from dsl.results.summarize import exit_code, percentile, summarize_records, wilson
from dsl.store import AttemptRecord, record_from_json
from dsl.store.planfile import plan_from_json
from dsl.store.summaryfile import summary_json


@pytest.mark.parametrize(("k", "n", "low", "high"), [
    (2, 2, 0.342, 1.0),
    (5, 10, 0.2366, 0.7634),
    (0, 10, 0.0, 0.2775),
    (10, 10, 0.7225, 1.0),
    (9, 10, 0.5958, 0.9821),
])
def test_wilson_reference_values(k: int, n: int, low: float, high: float) -> None:
    lo, hi = wilson(k, n)
    assert lo == pytest.approx(low, abs=5e-4)
    assert hi == pytest.approx(high, abs=5e-4)


def test_wilson_with_no_attempts_says_nothing() -> None:
    assert wilson(0, 0) == (0.0, 1.0)


def test_percentile() -> None:
    assert percentile([], 50) is None
    assert percentile([3.0, 1.0, 2.0], 50) == 2.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 95) == pytest.approx(3.85)


def rec(status: str, run: int, latency: float = 100.0, **kw: Any) -> AttemptRecord:
    checks = kw.pop("checks", [{"check": "contains", "label": 'contains: "x"',
                                "status": "pass" if status == "pass" else "fail"}])
    return record_from_json({
            "schema_version": 1, "scenario": "s", "target": "t", "run": run, "status": status,
            "latency_ms": latency if status != "error" else None,
            "tokens": {"prompt": 10, "completion": 5, "total": 15}, "steps": 2,
            "checks": checks if status != "error" else [],
            "error": {"kind": "timeout"} if status == "error" else None,
            "calls": kw.pop("calls", []), **kw})


PLAN = plan_from_json({
    "suite": "scenarist.yaml", "targets": [{"name": "t", "kind": "openai"}],
    "scenarios": [{"id": "s", "file": "s.yaml", "line": 1, "runs": 5, "min_pass": 3,
                   "expected_tools": ["search", "book"],
                   "checks": [{"check": "contains", "label": 'contains: "x"'}]}]})


def test_summary_counts_errors_apart_and_rates_over_decided_attempts() -> None:
    records = [rec("pass", 1, 100, calls=[{"name": "search"}, {"name": "book"}]),
               rec("pass", 2, 200, calls=[{"name": "search"}]),
               rec("fail", 3, 300, calls=[{"name": "search"}, {"name": "other"}]),
               rec("error", 4), rec("pass", 5, 400)]
    s = summarize_records(PLAN, records)
    (row,) = summary_json(s)["scenarios"]
    assert (row["runs"], row["decided"], row["passes"], row["fails"], row["errors"]) == \
        (5, 4, 3, 1, 1)
    assert row["pass_rate"] == 0.75
    # full precision: rounding is for display (statsmodels' figures: tests/results/test_stats.py)
    assert (round(row["ci_low"], 4), round(row["ci_high"], 4)) == (0.3006, 0.9544)
    assert row["ci_low"] != round(row["ci_low"], 4)
    assert row["verdict"] == "pass"
    assert row["latency_ms"] == {"mean": 250.0, "p50": 250.0, "p95": 385.0}
    assert row["tokens"] == {"prompt": 50, "completion": 25, "total": 75}
    assert row["checks"][0]["pass_rate"] == 0.75
    assert row["failing_checks"] == [{"label": 'contains: "x"', "count": 1}]
    assert row["error_kinds"] == {"timeout": 1}
    # tool calls, each attempt once, expected {search, book}: {search, book} is right (TP);
    # {search} and {search, other} miss book: the wrong tools (FP); {} called none (FN)
    assert row["tool_calls"] == {"tp": 1, "fp": 2, "fn": 1, "tn": 0, "precision": 1 / 3,
                                 "recall": 0.5, "f1": 0.4}
    assert exit_code(s) == 0


def test_exit_codes() -> None:
    failing = summarize_records(PLAN, [rec("fail", i) for i in range(1, 4)])
    assert failing.scenarios[0].verdict == "fail"
    assert exit_code(failing) == 1
    errors = summarize_records(PLAN, [rec("error", i) for i in range(1, 6)])
    assert errors.scenarios[0].verdict == "inconclusive"
    assert exit_code(errors) == 3
