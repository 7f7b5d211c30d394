"""The report's view model: rows, bars, check rates, the embedded attempts and their
transcripts, built from stored files only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from dsl.results.baseline import load_summary
from dsl.results.report import (
    INTERN_MIN,
    MAX_TEXT,
    _Strings,
    attempt,
    build_view,
    moment,
    transcript,
    visible,
)
from dsl.store import (
    iter_results,
    read_json,
    read_plan,
    read_run_info,
    read_summary,
    record_from_json,
)
from dsl.store.planfile import plan_from_json
from dsl.store.summaryfile import summary_json
from tests.results.report_builders import (
    MOMENT,
    SYSTEM,
    call,
    passing,
    record,
    regenerate,
    scenario,
    write_run,
)


def view_of(run: Path, **kw: Any) -> Any:
    return build_view(read_plan(run), list(iter_results(run)),
                      read_summary(run / "summary.json"), read_run_info(run), **kw)


# Where an event holds text (a string, or an index into the string table); see the blob's
# layout in dsl/results/report.py. Position 4 of a call is its pending flag.
TEXT_AT = {"s": (1, 2), "u": (1,), "a": (1,), "A": (1,), "t": (1, 2), "c": (1, 2, 3, 5),
           "e": (1,), "o": (1, 2)}


def txt(strings: _Strings, v: Any) -> Any:
    return strings.table[v] if isinstance(v, int) else v


def texts(strings: _Strings, events: list[list[Any]]) -> list[list[Any]]:
    """Events with their string-table references resolved."""
    return [[txt(strings, v) if i in TEXT_AT[ev[0]] else v for i, v in enumerate(ev)]
            for ev in events]


def test_rows_follow_the_summary_and_carry_bars_and_check_rates(demo_dir: Path) -> None:
    view = view_of(demo_dir)
    assert [(r.scenario, r.target, r.verdict) for r in view.rows] == [
        ("clinic.book_cleaning", "fake", "fail"),
        ("clinic.book_cleaning", "other", "inconclusive"),
        ("shop.refund", "other", "inconclusive"),
        ("clinic.hours_today", "fake", "pass"),
        ("clinic.hours_today", "other", "pass"),
        ("shop.refund", "fake", "pass"),
    ]
    book = view.rows[0]
    assert (book.passes, book.decided, book.min_pass, book.planned) == (3, 5, 4, 5)
    # 3 of 5: 60%, Wilson 23.07%..88.24%, min_pass 4 of 5 at 80%
    assert (book.bar.fill, book.bar.low, book.bar.high, book.bar.mark) == (60.0, 23.1, 88.2,
                                                                           80.0)
    assert book.bar.label == "pass rate 60%, 95% interval 23% to 88%, needs 4 of 5"
    assert [(c.label, c.pass_rate, c.flaky, c.never) for c in book.checks] == [
        ('asks_to_confirm: "book_appointment"', 1.0, False, False),
        ('contains: "15:00"', 0.6, True, False),
    ]
    assert [(f.label, f.count, f.always) for f in book.failing_checks] == [
        ('asks_to_confirm: "book_appointment"', 2, False)]
    assert book.tags == ("clinic", "booking")
    assert book.at == "2026-09-29T10:00:00-03:00"
    assert book.message == "Quiero una limpieza el martes a las 15:00"
    assert book.search == ("clinic.book_cleaning fake fake-model "
                           "scenarios/clinic.book_cleaning.yaml a patient books a cleaning. "
                           "clinic booking")
    errors = view.rows[1]
    assert [(p.kind, p.count, p.said, p.error) for p in errors.error_kinds] == [
        ("timeout", 5, "no answer within 30 s", True)]
    assert errors.error_kinds[0].explanation.startswith("The endpoint took longer to answer")
    assert errors.pass_rate is None
    assert (errors.bar.fill, errors.bar.low, errors.bar.high) == (0.0, 0.0, 100.0)
    assert view.tags == ("booking", "clinic", "shop", "smoke")
    assert view.targets == ("fake", "other")


def test_headline(demo_dir: Path) -> None:
    h = view_of(demo_dir).headline
    assert (h.scenarios, h.passed, h.failed, h.inconclusive) == (6, 3, 1, 2)
    assert (h.attempts, h.passes, h.unsure, h.errors, h.not_run) == (23, 15, 1, 5, 3)
    assert h.targets == (("fake", "fake-model"), ("other", "other-model"))
    assert (h.started, h.duration, h.run_id, h.suite) == (
        "2026-11-30 10:00 UTC", "12.5 s", "20261130-100000-abcd", "scenarist.yaml")
    assert h.tokens == 6900


def test_each_row_has_a_blob_of_its_attempts_in_run_order(demo_dir: Path) -> None:
    view = view_of(demo_dir)
    data = [json.loads(b) for b in view.blobs]
    assert len(data) == len(view.rows)
    for row, blob in zip(view.rows, data, strict=True):
        assert blob["version"] == 1
        assert [a[0] for a in blob["attempts"]] == list(range(1, row.runs + 1))
    assert [a[1] for a in data[0]["attempts"]] == ["pass", "fail", "pass", "fail", "pass"]
    # each row has its own string table: the system prompt is stored once in each
    assert [b["strings"].count(SYSTEM) for b in data] == [1, 0, 0, 1, 1, 1]


def test_a_pending_confirmation_ends_the_transcript(demo_dir: Path) -> None:
    rec = next(r for r in iter_results(demo_dir)
               if r.scenario == "clinic.book_cleaning" and r.run == 1)
    s = _Strings()
    assert texts(s, transcript(rec, s)) == [
        ["s", SYSTEM, MOMENT],
        ["u", "Quiero una limpieza el martes a las 15:00"],
        ["c", "search_slots", '{"date": "2026-10-06"}', "read"],
        ["t", "search_slots", '{"free": ["15:00"]}'],
        ["c", "book_appointment", '{"date": "2026-10-06", "time": "15:00"}', "create", 1],
        ["e", "The attempt ended here: book_appointment waits for the person's confirmation, "
              "so it was not run."],
    ]


def test_calls_the_loop_refused_keep_their_error_and_raw_arguments() -> None:
    bad = call("lookup", raw_args='{"q": "x"', output="error: not JSON", error="invalid-json")
    ghost = call("ghost", {}, "error: no such tool", error="unknown-tool", action="",
                 cid="g1")
    rec = record("s", 1, "fail", calls=[bad, ghost], answer="Sorry.")
    rec["messages"][2]["content"] = "Let me look."  # text beside the tool calls
    s = _Strings()
    assert texts(s, transcript(record_from_json(rec), s))[2:] == [
        ["a", "Let me look."],
        ["c", "lookup", '{"q": "x"', "read", 0, "invalid-json"],
        ["c", "ghost", "{}", "", 0, "unknown-tool"],
        ["t", "lookup", "error: not JSON"],
        ["t", "ghost", "error: no such tool"],
        ["A", "Sorry."],
    ]


def test_without_messages_the_calls_and_answer_are_shown() -> None:
    rec = record("s", 1, "pass", calls=[call("lookup", {"q": 1}, "found")], answer="Done.",
                 messages=[])
    s = _Strings()
    assert texts(s, transcript(record_from_json(rec), s)) == [
        ["c", "lookup", '{"q": 1}', "read"], ["t", "lookup", "found"], ["A", "Done."]]


def test_content_given_as_parts_and_unknown_roles() -> None:
    rec = record("s", 1, messages=[
        {"role": "user", "content": [{"type": "text", "text": "Hola "}, {"text": "mundo"}]},
        {"role": "developer", "content": "be brief"},
        {"role": "assistant", "content": None},
    ])
    s = _Strings()
    assert texts(s, transcript(record_from_json(rec), s)) == [
        ["u", "Hola mundo"], ["o", "developer", "be brief"], ["A", ""]]


def test_an_endpoint_error_and_its_checks(demo_dir: Path) -> None:
    err = next(r for r in iter_results(demo_dir) if r.status == "error")
    s = _Strings()
    a = attempt(err, s)
    assert [txt(s, a[2]), txt(s, a[3])] == ["timeout: no answer",
                                            "2026-11-30T10:00:01.000+00:00"]
    assert [a[0], a[1], *a[4:8]] == [1, "error", None, 1, 300, 0]
    assert [txt(s, a[8][0]), txt(s, a[8][1]), a[8][2]] == ["timeout", "no answer within 30 s",
                                                           None]
    assert a[9:] == [[], []]


def test_judge_evidence_is_carried_when_present(demo_dir: Path) -> None:
    rec = next(r for r in iter_results(demo_dir) if r.status == "unsure")
    s = _Strings()
    checks = attempt(rec, s)[10]
    label, status, reason, score, evidence = checks[0]
    assert (txt(s, label), status, txt(s, reason), score) == (
        "faithful", "unsure", "the judge was not sure", None)
    assert [txt(s, v) for v in evidence[:2]] == ["the reply hedges", "Maybe. SCORE: 0.5"]
    assert evidence[2] is None  # the prompt stays in results.jsonl, not in the report
    assert evidence[3] == 0.4
    plain = attempt(record_from_json(record("s", 1, checks=[("x", "pass", "ok")])), s)[10]
    assert plain == [["x", "pass", "ok", None, None]]


def test_fractional_scores_are_kept_and_whole_ones_dropped() -> None:
    rec = record("s", 1, checks=[("a", "pass", "ok"), ("b", "fail", "no")])
    rec["checks"][0]["score"] = 0.75
    s = _Strings()
    assert [c[3] for c in attempt(record_from_json(rec), s)[10]] == [0.75, None]


def test_the_string_table_stores_long_text_once_and_cuts_huge_text() -> None:
    s = _Strings()
    long = "x" * INTERN_MIN
    assert s("short") == "short"
    assert s(long) == 0
    assert s("y" * INTERN_MIN) == 1
    assert s(long) == 0
    assert s(None) == ""
    assert s({"a": 1}) == 2
    assert s.table[2] == '{"a": 1}'
    huge = "z" * (MAX_TEXT + 10)
    i = s(huge)
    assert isinstance(i, int)
    assert s.table[i] == "z" * MAX_TEXT + (
        f"\n\n[… cut here by the report: {MAX_TEXT + 10:,} characters in all. The full text "
        "is in results.jsonl.]")


@pytest.mark.parametrize(("text", "moment_text"), [
    (SYSTEM, MOMENT),
    ("Current date and time: Monday 5 October 2026, 09:30 (UTC+02:00)",
     "Monday 5 October 2026, 09:30 (UTC+02:00)"),
    ("No moment here.", ""),
])
def test_the_moment_the_model_saw(text: str, moment_text: str) -> None:
    assert moment(text) == moment_text


def test_visible_shows_control_characters_as_escapes() -> None:
    assert visible("a\x00b\x1b[0m\x7f\x85\u202ec\td\ne") == (
        "a\\x00b\\x1b[0m\\x7f\\x85\\u202ec\td\ne")
    assert visible("a\r\nb\rc") == "a\r\nb\\x0dc"


def test_records_of_scenarios_not_in_the_summary_are_left_out(tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [scenario("kept", runs=1, min_pass=1)],
                    [passing("kept", 1), passing("dropped", 1)])
    assert [len(json.loads(b)["attempts"]) for b in view_of(run).blobs] == [1]


def test_regenerate_writes_summary_and_report_from_stored_results_only(
        demo_dir: Path, tmp_path: Path) -> None:
    before = load_summary(demo_dir)
    (demo_dir / "summary.json").unlink()
    out = tmp_path / "elsewhere.html"
    path, summary, comparison = regenerate(demo_dir, out, before)
    assert path == out
    assert out.exists()
    assert not (demo_dir / "report.html").exists()
    assert read_json(demo_dir / "summary.json") == summary_json(summary)
    assert comparison is not None
    assert {c.status for c in comparison.changes} == {"unchanged", "inconclusive"}
    html = out.read_text("utf-8")
    assert 'id="baseline"' in html
    assert html.count('class="badge b-unchanged"') >= 1


def test_the_table_rows_and_the_blob_agree(demo_report: Path) -> None:
    html = demo_report.read_text("utf-8")
    bodies = re.findall(r'<tbody class="sc" id="sc-(\d+)" data-row="(\d+)" '
                        r'data-scenario="([^"]*)" data-target="([^"]*)"', html)
    assert [(int(a), int(b)) for a, b, _, _ in bodies] == [(i, i) for i in range(6)]
    assert bodies[0][2:] == ("clinic.book_cleaning", "fake")


def test_regenerate_defaults_to_the_run_folder(demo_dir: Path) -> None:
    assert regenerate(demo_dir)[0] == demo_dir / "report.html"
    html = (demo_dir / "report.html").read_text("utf-8")
    assert html.startswith("<!doctype html>")
    assert "<title>Scenarist report — 20261130-100000-abcd</title>" in html


def test_a_huge_run_keeps_at_most_the_cap_of_transcripts_failures_first(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import json as _json

    import dsl.results.report as report
    from dsl.results.report import build_view
    from dsl.results.summarize import summarize_records

    monkeypatch.setattr(report, "MAX_REPORT_ATTEMPTS", 4)
    monkeypatch.setattr(report, "MIN_PER_ROW", 2)
    spec = scenario("big", runs=30, min_pass=1)
    plan = plan_from_json({"scenarios": [spec], "targets": [{"name": "fake", "kind": "openai"}]})
    recs = [record_from_json(record("big", run, "fail" if run % 10 == 0 else "pass"))
            for run in range(1, 31)]
    view = build_view(plan, iter(recs), summarize_records(plan, recs))
    (blob,) = view.blobs
    data = _json.loads(blob)
    runs = [a[0] for a in data["attempts"]]
    assert runs == [1, 10, 20, 30]  # the 3 failures, then passes up to the quota of 4
    assert data["omitted"] == 26
