"""CI outputs, word for word: junit.xml (parsed back), summary.md, GitHub annotations."""

from __future__ import annotations

import copy
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from dsl.errors import gh_data, gh_property
from dsl.results.baseline import compare
from dsl.results.cioutputs import (
    emit_github,
    github_annotations,
    junit_xml,
    md_code,
    summary_markdown,
    write_ci_outputs,
    xml_text,
)
from dsl.results.words import outcome_text
from dsl.store import read_json
from dsl.store.summaryfile import FailingCheck, SummaryRow, summary_of
from tests.results.report_builders import demo_run

S = summary_of  # the summary.json these tests change, read as the stages take it

FAIL_MESSAGE = ('3 of 5 attempts passed (60%, 95% CI 23–88%); min_pass is 4 of 5. '
                'Failing checks: asks_to_confirm: "book_appointment" (failed 2 of 5).')
ERRORS_MESSAGE = ("No verdict: no attempt passed or failed; min_pass is 4 of 5. "
                  "5 ended in endpoint errors (timeout ×5).")
NOT_RUN_MESSAGE = "No verdict: no attempt passed or failed; min_pass is 2 of 3. 3 not run."


@pytest.fixture
def summary(tmp_path: Path) -> dict[str, Any]:
    return dict(read_json(demo_run(tmp_path / "run") / "summary.json"))


def test_junit_has_one_testcase_per_scenario_and_target(summary: dict[str, Any],
                                                        tmp_path: Path) -> None:
    write_ci_outputs(tmp_path, S(summary))
    root = ET.parse(tmp_path / "junit.xml").getroot()
    assert root.tag == "testsuites"
    assert root.attrib == {"name": "scenarist", "tests": "6", "failures": "1", "errors": "2",
                           "skipped": "0", "time": "12.500"}
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == ["fake", "other"]
    fake = suites[0]
    assert fake.attrib == {"name": "fake", "tests": "3", "failures": "1", "errors": "0",
                           "skipped": "0", "time": "15.600",
                           "timestamp": "2026-11-30T10:00:00+00:00"}
    assert {p.get("name"): p.get("value") for p in fake.iter("property")} == {
        "kind": "openai", "model": "fake-model", "base_url": "http://127.0.0.1:9/v1",
        "run_id": "20261130-100000-abcd"}
    cases = [(c.get("classname"), c.get("name")) for s in suites for c in s.iter("testcase")]
    assert sorted(cases) == sorted(
        (t, s) for t in ("fake", "other")
        for s in ("clinic.book_cleaning", "clinic.hours_today", "shop.refund"))


def test_junit_failure_lists_failing_checks_and_pass_rate_against_min_pass(
        summary: dict[str, Any]) -> None:
    root = junit_xml(S(summary)).getroot()
    case = root.find("testsuite[@name='fake']/testcase[@name='clinic.book_cleaning']")
    assert case is not None
    assert case.attrib == {"name": "clinic.book_cleaning", "classname": "fake",
                           "file": "scenarios/clinic.book_cleaning.yaml", "line": "1",
                           "time": "6.000"}
    failure = case.find("failure")
    assert failure is not None
    assert failure.get("type") == "fail"
    assert failure.get("message") == FAIL_MESSAGE
    assert failure.text == (
        "scenarios/clinic.book_cleaning.yaml:1: clinic.book_cleaning on fake\n"
        "A patient books a cleaning.\n"
        f"{FAIL_MESSAGE}\n"
        "Checks:\n"
        '  100%  asks_to_confirm: "book_appointment"  (5 of 5 passed)\n'
        '   60%  contains: "15:00"  (3 of 5 passed)')
    passing = root.find("testsuite[@name='fake']/testcase[@name='clinic.hours_today']")
    assert passing is not None
    assert list(passing) == []


def test_junit_error_for_a_scenario_without_verdict(summary: dict[str, Any]) -> None:
    root = junit_xml(S(summary)).getroot()
    errors = {c.get("name"): c.find("error")
              for c in root.findall("testsuite[@name='other']/testcase")}
    assert errors["clinic.hours_today"] is None
    book, refund = errors["clinic.book_cleaning"], errors["shop.refund"]
    assert book is not None
    assert refund is not None
    assert (book.get("type"), book.get("message")) == ("inconclusive", ERRORS_MESSAGE)
    assert refund.get("message") == NOT_RUN_MESSAGE


def test_junit_escapes_hostile_text_and_characters_xml_cannot_hold(
        summary: dict[str, Any], tmp_path: Path) -> None:
    evil = copy.deepcopy(summary)
    row = evil["scenarios"][0]
    row["scenario"] = 'a"b<c>&]]></testcase><x y="'
    row["description"] = "bell\x07 nul\x00 esc\x1b tab\t ok"
    row["failing_checks"] = [{"label": 'contains: "</failure><script>"', "count": 2}]
    write_ci_outputs(tmp_path, S(evil))
    raw = (tmp_path / "junit.xml").read_text("utf-8")
    assert "<script>" not in raw
    assert "\x00" not in raw
    assert "\x07" not in raw
    case = ET.parse(tmp_path / "junit.xml").getroot().find("testsuite/testcase")
    assert case is not None
    assert case.get("name") == 'a"b<c>&]]></testcase><x y="'
    failure = case.find("failure")
    assert failure is not None
    assert 'Failing checks: contains: "</failure><script>" (failed 2 of 5).' in str(
        failure.get("message"))
    assert "bell\\x07 nul\\x00 esc\\x1b tab\t ok" in str(failure.text)


def test_xml_text_keeps_what_xml_can_hold() -> None:
    assert xml_text("é ñ 中 🎉 \t\n\r") == "é ñ 中 🎉 \t\n\r"
    assert xml_text("\x00\x08\x0b\x1f\ud800\ufffe") == "\\x00\\x08\\x0b\\x1f\\ud800\\ufffe"


SUMMARY_MD = """\
## Scenarist: 3 of 6 did not pass

**✅ 3 passed · ❌ 1 failed · ⚠️ 2 without a verdict** (scenario × target) · 83% of 23 \
attempts passed · 1 unsure · 5 endpoint errors

Targets: `fake` (`fake-model`), `other` (`other-model`) · run `20261130-100000-abcd` · \
6,900 tokens · 12.5 s

| Verdict | Scenario | Target | Passed | Pass rate (95% CI) | Failing checks |
|:--|:--|:--|--:|:--|:--|
| ❌ fail | `clinic.book_cleaning` | `fake` | 3/5 (min 4) | 60% (23–88%) | \
`asks_to_confirm: "book_appointment"` ×2 (pass rate 100%, 95% CI 57–100%) |
| ⚠️ no verdict | `clinic.book_cleaning` | `other` | 0/0 (min 4) | – | 5 endpoint errors |
| ⚠️ no verdict | `shop.refund` | `other` | 0/0 (min 2) | – |  |
| ✅ pass | `clinic.hours_today` | `fake` | 5/5 (min 4) | 100% (57–100%) |  |
| ✅ pass | `clinic.hours_today` | `other` | 5/5 (min 4) | 100% (57–100%) |  |
| ✅ pass | `shop.refund` | `fake` | 2/3 (min 2) | 67% (21–94%) |  |
"""


def test_summary_markdown_word_for_word(summary: dict[str, Any], tmp_path: Path) -> None:
    assert summary_markdown(S(summary)) == SUMMARY_MD
    write_ci_outputs(tmp_path, S(summary))
    assert (tmp_path / "summary.md").read_text("utf-8") == SUMMARY_MD


def test_summary_markdown_against_a_baseline(summary: dict[str, Any]) -> None:
    before = copy.deepcopy(summary)
    for r in before["scenarios"]:  # everything passed 5 of 5 before
        r.update(passes=5, decided=5, verdict="pass")
    before["run_id"] = "base-1"
    before["scenarios"].append({**before["scenarios"][0], "scenario": "gone"})
    md = summary_markdown(S(summary), compare(S(summary), S(before)))
    lines = md.splitlines()
    at = lines.index("Against `base-1`: 3 unchanged · 3 inconclusive · 1 removed")
    assert lines[at + 2:at + 5] == [
        "| Verdict | Scenario | Target | Passed | Pass rate (95% CI) | Change | Failing checks |",
        "|:--|:--|:--|--:|:--|:--|:--|",
        # 3 of 5 against 5 of 5: the flip may be chance
        "| ❌ fail | `clinic.book_cleaning` | `fake` | 3/5 (min 4) | 60% (23–88%) | "
        "inconclusive −40 pts | `asks_to_confirm: \"book_appointment\"` ×2 (pass rate 100%, "
        "95% CI 57–100%) |",
    ]
    assert "| ✅ pass | `shop.refund` | `fake` | 2/3 (min 2) | 67% (21–94%) | unchanged " \
           "−33 pts |  |" in lines
    before["scenarios"][0].update(passes=30, decided=30)  # against 30 of 30 it is real
    md = summary_markdown(S(summary), compare(S(summary), S(before)))
    assert "Against `base-1`: 1 regressed · 3 unchanged · 2 inconclusive · 1 removed" in md
    assert ("| ❌ fail | `clinic.book_cleaning` | `fake` | 3/5 (min 4) | 60% (23–88%) | "
            "🔻 regressed −40 pts | `asks_to_confirm: \"book_appointment\"` ×2 (pass rate "
            "100%, 95% CI 57–100%) |") in md


def test_summary_markdown_when_everything_passed_and_many_rows(
        summary: dict[str, Any]) -> None:
    many = copy.deepcopy(summary)
    one = next(r for r in many["scenarios"] if r["verdict"] == "pass")
    many["scenarios"] = [{**one, "scenario": f"s{i:03d}"} for i in range(130)]
    many["totals"].update(scenarios=130, passed=130, failed=0, inconclusive=0, unsure=0,
                          errors=0)
    md = summary_markdown(S(many))
    assert md.startswith("## Scenarist: all 130 passed\n\n**✅ 130 passed · ❌ 0 failed** ")
    assert md.count("| ✅ pass |") == 100
    assert md.endswith("\n… and 30 more (all passed); the full list is in report.html.\n")
    assert len(md) < 65_536


@pytest.mark.parametrize(("text", "code"), [
    ("plain", "`plain`"),
    ("a|b", "`a\\|b`"),
    ("two\nlines\r\n", "`two lines `"),
    ("has `tick`", "`` has `tick` ``"),
    ("``x", "``` ``x ```"),
    ("<b>bold</b>", "`<b>bold</b>`"),
])
def test_md_code_is_one_table_cell(text: str, code: str) -> None:
    assert md_code(text) == code


def test_github_annotations_word_for_word(summary: dict[str, Any]) -> None:
    assert github_annotations(S(summary)) == [
        "::error file=scenarios/clinic.book_cleaning.yaml,line=1,title=Scenario "
        "clinic.book_cleaning failed on fake::3 of 5 attempts passed (60%25, 95%25 CI "
        "23–88%25); min_pass is 4 of 5. Failing checks: asks_to_confirm: \"book_appointment\" "
        "(failed 2 of 5).",
        "::warning file=scenarios/clinic.book_cleaning.yaml,line=1,title=Scenario "
        "clinic.book_cleaning has no verdict on other::" + ERRORS_MESSAGE,
        "::warning file=scenarios/shop.refund.yaml,line=1,title=Scenario shop.refund has no "
        "verdict on other::" + NOT_RUN_MESSAGE,
    ]


def test_github_annotations_escape_workflow_command_characters(
        summary: dict[str, Any]) -> None:
    evil = copy.deepcopy(summary)
    row = evil["scenarios"][0]
    row.update(file="dir,x/a:b%.yaml", scenario="s\n::error::fake",
               failing_checks=[{"label": "100%\r\n::warning::x", "count": 1}])
    line = github_annotations(S(evil))[0]
    assert line.startswith("::error file=dir%2Cx/a%3Ab%25.yaml,line=1,title=Scenario "
                           "s%0A%3A%3Aerror%3A%3Afake failed on fake::")
    assert line.endswith("Failing checks: 100%25%0D%0A::warning::x (failed 1 of 5).")
    assert "\n" not in line
    assert "\r" not in line


def test_gh_escaping_rules() -> None:
    assert gh_data("50% a\r\nb") == "50%25 a%0D%0Ab"
    assert gh_property("a:b,c%\n") == "a%3Ab%2Cc%25%0A"


def test_a_regression_says_so_in_its_annotation(summary: dict[str, Any]) -> None:
    before = copy.deepcopy(summary)
    before["scenarios"][0].update(passes=30, decided=30, verdict="pass")
    line = github_annotations(S(summary), compare(S(summary), S(before)))[0]
    assert line.endswith("(failed 2 of 5). Regressed against the baseline: passed before, "
                         "fails now: −40 pts (95%25 CI −77 to −10).")


def test_emit_github_prints_annotations_and_fills_the_step_summary(
        summary: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_ci_outputs(tmp_path, S(summary))
    step = tmp_path / "step-summary.md"
    step.write_text("earlier step\n", "utf-8")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(step))
    printed: list[str] = []
    emit_github(S(summary), tmp_path, None, printed.append)
    assert printed == github_annotations(S(summary))
    assert step.read_text("utf-8") == "earlier step\n" + SUMMARY_MD + "\n"
    monkeypatch.delenv("GITHUB_STEP_SUMMARY")
    emit_github(S(summary), tmp_path, None, printed.append)  # no step summary: only prints
    assert step.read_text("utf-8") == "earlier step\n" + SUMMARY_MD + "\n"


def test_an_unwritable_step_summary_is_a_warning(
        summary: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write_ci_outputs(tmp_path, S(summary))
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(tmp_path / "no" / "such" / "file.md"))
    printed: list[str] = []
    warned: list[str] = []
    emit_github(S(summary), tmp_path, None, printed.append, warned.append)
    assert len(printed) == 3
    assert warned == [f"warning: cannot append the summary to $GITHUB_STEP_SUMMARY "
                      f"({tmp_path}/no/such/file.md): No such file or directory"]


def test_outcome_text_mentions_unsure_errors_and_not_run() -> None:
    row = SummaryRow(scenario="s", target="t", verdict="fail", passes=6, decided=8, pass_rate=0.75, ci_low=0.4093,
                     ci_high=0.9285, min_pass=8, planned=10, unsure=1, errors=2,
                     error_kinds={"timeout": 1, "http-500": 1}, not_run=0,
                     failing_checks=(FailingCheck("faithful", 1),))
    assert outcome_text(row) == (
        "6 of 8 attempts passed (75%, 95% CI 41–93%); min_pass is 8 of 10. 1 unsure (the "
        "judge could not tell); 2 ended in endpoint errors (timeout, http-500). Failing "
        "checks: faithful (failed 1 of 8).")
