"""dsl/compiler/world.py: ``apply`` is the inverse of ``changes`` — the world a recheck
rebuilds from the start and a record's changes is the one the run ended with, row for row
and in order — whatever the table tools did (change rows in place, set an id another row
has, delete, create, delete and create again with the same id), with ``NaN`` values, and
when results.jsonl keeps the ids redacted."""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from dsl.compiler.redact import build
from dsl.compiler.world import apply, changes
from dsl.model import WorldRun

IDS = st.sampled_from(["PAT-100001", "PAT-100002", "PAT-100003", "PAT-100004"])
ROW = st.fixed_dictionaries({"id": IDS, "status": st.sampled_from(["active", "blocked"])},
                            optional={"owner": st.sampled_from(["ana", "bob"])})
OPS = st.lists(st.one_of(
    st.tuples(st.just("update"), st.integers(0, 9), ROW),
    st.tuples(st.just("delete"), st.integers(0, 9), ROW),
    st.tuples(st.just("create"), st.integers(0, 9), ROW)), max_size=6)


def played(start: list[dict[str, Any]], ops: list[tuple[str, int, dict[str, Any]]]
           ) -> list[dict[str, Any]]:
    """What table tools can do: change a row where it is, delete it, add one at the end."""
    rows = [dict(r) for r in start]
    for op, at, row in ops:
        if op == "create":
            rows.append(dict(row))
        elif rows and op == "update":
            rows[at % len(rows)] = {**rows[at % len(rows)], **row}
        elif rows:
            del rows[at % len(rows)]
    return rows


REDACTOR = build(set(), {"card": r"PAT-\d{6}"})


def redacted(made: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes as results.jsonl keeps them."""
    return REDACTOR.value(made)  # type: ignore[no-any-return]


@settings(max_examples=300, deadline=None)
@given(st.lists(ROW, max_size=4, unique_by=lambda r: r["id"]), OPS)
def test_apply_rebuilds_the_end_exactly(start: list[dict[str, Any]],
                                        ops: list[tuple[str, int, dict[str, Any]]]) -> None:
    end = played(start, ops)
    run = WorldRun({"cards": tuple(start)}, {"cards": tuple(end)})
    assert list(apply(run.before, changes(run)).after["cards"]) == end


@settings(max_examples=300, deadline=None)
@given(st.lists(ROW, min_size=1, max_size=4, unique_by=lambda r: r["id"]), OPS)
def test_apply_rebuilds_the_ids_results_keep_redacted(
        start: list[dict[str, Any]], ops: list[tuple[str, int, dict[str, Any]]]) -> None:
    end = played(start, ops)
    run = WorldRun({"cards": tuple(start)}, {"cards": tuple(end)})
    rebuilt = list(apply(run.before, redacted(changes(run, REDACTOR.value))).after["cards"])
    # an id the world had at the start is known again; a new one stays redacted
    had = {r["id"] for r in start}
    assert rebuilt == [{**r, "id": r["id"] if r["id"] in had else "[REDACTED:card]"}
                       for r in end]


def test_a_nan_is_no_change_and_a_deleted_row_created_again_is_another_row() -> None:
    nan = float("nan")
    start = ({"id": "A-1", "balance": nan, "owner": "ana"}, {"id": "A-2", "balance": 1.5})
    same = WorldRun({"t": start}, {"t": tuple(dict(r) for r in start)})
    assert changes(same) == []
    copied = WorldRun({"t": start}, {"t": ({"id": "A-1", "balance": float("nan"),
                                            "owner": "ana"}, start[1])})
    assert changes(copied) == []
    again = WorldRun({"t": start}, {"t": (start[1], {"id": "A-1", "status": "new"})})
    assert changes(again) == [
        {"table": "t", "id": "A-1", "removed": {"id": "A-1", "balance": nan, "owner": "ana"}},
        {"table": "t", "id": "A-1", "added": {"id": "A-1", "status": "new"}}]
    rebuilt = apply(again.before, changes(again)).after["t"]
    assert rebuilt == ({"id": "A-2", "balance": 1.5}, {"id": "A-1", "status": "new"})
    assert not any(math.isnan(v) for r in rebuilt for v in r.values()
                   if isinstance(v, float))


def test_two_rows_with_one_id_are_placed_by_index() -> None:
    start = ({"id": "C-1", "owner": "ana"}, {"id": "C-2", "owner": "bob"})
    end = ({"id": "C-1", "owner": "ana"}, {"id": "C-1", "owner": "bob"})
    run = WorldRun({"cards": start}, {"cards": end})
    assert changes(run) == [
        {"table": "cards", "id": "C-2", "removed": {"id": "C-2", "owner": "bob"},
         "index": 1},
        {"table": "cards", "id": "C-1", "added": {"id": "C-1", "owner": "bob"}, "index": 1}]
    assert apply(run.before, changes(run)).after["cards"] == end
