"""A report a team can share (issue 25, item 9), in a real headless Chromium: "Expand all"
opens every scenario and every attempt's conversation (and closes them again); printing
shows every attempt's conversation and nothing that only works on a screen; each attempt
has its own link, ``report.html#SCENARIO@TARGET/RUN``, that opens the report at it,
expanded — past the first page of attempts too; CI, pass@k/pass^k and F1 explain
themselves in plain words on hover and on keyboard focus."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from dsl.results.report import TERMS
from tests.results.report_builders import (
    call,
    demo_run,
    failing,
    passing,
    regenerate,
    scenario,
    write_run,
)

pytestmark = pytest.mark.browser


def open_report(new_page: Any, path: Path, hash_: str = "") -> tuple[Any, Any]:
    page, watch = new_page()
    page.goto(path.as_uri() + hash_)
    return page, watch


def assert_clean(watch: Any, page: Any) -> None:
    assert watch.errors == []
    assert watch.console == []
    assert watch.foreign_requests(page.url.split("#")[0]) == []


def many_attempts(tmp_path: Path) -> Path:
    """One scenario tried 150 times (the report draws 100 attempts a page), with tool-call
    F1, and a second one."""
    hours = scenario("clinic.hours_today", checks=['calls: "list_business_hours"'], runs=150,
                     min_pass=100, expected_tools=["list_business_hours"])
    other = scenario("clinic.other", runs=2, min_pass=1)
    recs = [passing("clinic.hours_today", run, labels=['calls: "list_business_hours"'],
                    calls=[call("list_business_hours", {}, '{"monday": "09:00-18:00"}')],
                    answer=f"Answer number {run}.")
            if run != 140 else
            failing("clinic.hours_today", run, failed=['calls: "list_business_hours"'],
                    answer="The one that failed: run 140.")
            for run in range(1, 151)]
    recs += [passing("clinic.other", 1), passing("clinic.other", 2)]
    return regenerate(write_run(tmp_path / "run", [hours, other], recs))[0]


def test_expand_all_opens_every_conversation_and_closes_them(new_page: Any,
                                                              demo_report: Path) -> None:
    page, watch = open_report(new_page, demo_report)
    button = page.locator("#expand-all")
    assert button.inner_text() == "Expand all"
    assert button.get_attribute("aria-pressed") == "false"
    button.click()
    assert button.inner_text() == "Collapse all"
    assert button.get_attribute("aria-pressed") == "true"
    rows = page.locator("tbody.sc")
    assert rows.count() == 6
    for i in range(rows.count()):
        assert rows.nth(i).locator("button.toggle").get_attribute("aria-expanded") == "true"
    attempts = page.locator("details.attempt")
    assert attempts.count() == 23  # every attempt of the run
    assert page.locator("details.attempt[open]").count() == 23
    assert page.locator("details.attempt .transcript").count() == 23
    assert page.locator("details.attempt .transcript").nth(0).is_visible()
    page.get_by_role("button", name="Collapse all").click()
    assert page.locator("details.attempt[open]").count() == 0
    assert page.locator("tbody.sc.open").count() == 0
    assert_clean(watch, page)


def test_the_print_view_shows_every_attempts_conversation(new_page: Any,
                                                          tmp_path: Path) -> None:
    report = many_attempts(tmp_path)
    page, watch = open_report(new_page, report)
    page.locator("#f-verdict").select_option("fail")  # a filter on the screen...
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")  # what printing does
    page.emulate_media(media="print")
    transcripts = page.locator("details.attempt .transcript")
    assert transcripts.count() == 152  # ... and still every attempt is printed
    for i in (0, 99, 100, 149, 151):  # past the first page of each scenario too
        assert transcripts.nth(i).is_visible()
    assert page.get_by_text("Answer number 150.").is_visible()
    assert not page.locator("#filters").is_visible()
    assert not page.get_by_role("button", name="Collapse all").is_visible()
    assert page.locator("button.more-attempts").count() == 0
    assert_clean(watch, page)


def test_an_attempts_link_opens_the_report_at_it_expanded(new_page: Any,
                                                          tmp_path: Path) -> None:
    report = many_attempts(tmp_path)
    page, watch = open_report(new_page, report, "#clinic.hours_today@fake/140")
    attempt = page.locator('details[id="clinic.hours_today@fake/140"]')
    assert attempt.get_attribute("open") is not None
    assert attempt.locator(".m-answer .text").inner_text() == "The one that failed: run 140."
    assert attempt.is_visible()
    assert page.evaluate("""() => {
        const r = document.getElementById('clinic.hours_today@fake/140').getBoundingClientRect();
        return r.top >= 0 && r.top < window.innerHeight; }""")
    assert page.locator("details.attempt[open]").count() == 1  # only that one
    assert page.locator('tbody.sc[data-scenario="clinic.hours_today"] button.toggle'
                        ).get_attribute("aria-expanded") == "true"
    # each attempt's own link button puts its address in the address bar and opens it
    other = page.locator('details[id="clinic.hours_today@fake/3"]')
    assert other.get_attribute("open") is None
    other.get_by_role("button", name="Link to run 3").click()
    assert page.url.endswith("#clinic.hours_today@fake/3")
    # (opened by the page's hashchange handler: waited for, not raced)
    page.wait_for_function("""() => document.getElementById('clinic.hours_today@fake/3')
                                .hasAttribute('open')""", timeout=30_000)
    assert other.locator(".m-answer .text").inner_text() == "Answer number 3."
    # a link opened in a new page finds it too
    again, watch2 = open_report(new_page, report, "#clinic.other@fake/2")
    assert again.locator('details[id="clinic.other@fake/2"] .transcript').is_visible()
    assert_clean(watch, page)
    assert_clean(watch2, again)


def test_a_link_to_a_case_and_to_a_missing_attempt(new_page: Any, tmp_path: Path) -> None:
    case = scenario("hours[es]", runs=2, min_pass=1)
    run = write_run(tmp_path / "run", [case], [passing("hours[es]", 1, answer="Uno."),
                                                passing("hours[es]", 2, answer="Dos.")])
    report = regenerate(run)[0]
    page, watch = open_report(new_page, report, "#hours[es]@fake/2")
    assert page.locator('details[id="hours[es]@fake/2"] .m-answer .text').inner_text() == "Dos."
    page2, watch2 = open_report(new_page, report, "#hours[es]@fake/9")  # no such run
    assert page2.locator("details.attempt[open]").count() == 0
    assert_clean(watch, page)
    assert_clean(watch2, page2)


def test_ci_pass_k_and_f1_explain_themselves_on_hover_and_on_focus(new_page: Any,
                                                                   tmp_path: Path) -> None:
    report = many_attempts(tmp_path)
    page, watch = open_report(new_page, report)
    page.locator('tbody.sc[data-scenario="clinic.hours_today"] button.toggle').click()
    for word, what in (("95% interval", "ci"), ("pass@k · pass^k", "pass_k"), ("F1", "f1")):
        term = page.locator("tr.detail .term", has_text=word).first
        tip_id = term.get_attribute("aria-describedby")
        tip = page.locator(f'[id="{tip_id}"]')
        assert tip.get_attribute("role") == "tooltip"
        assert tip.text_content() == TERMS[what]
        assert not tip.is_visible()
        term.hover()
        assert tip.is_visible()
        page.mouse.move(0, 0)
        assert not tip.is_visible()
        term.focus()  # the keyboard: the word takes the focus
        assert page.evaluate("document.activeElement.getAttribute('aria-describedby')") == tip_id
        assert tip.is_visible()
        page.keyboard.press("Escape")
        assert not tip.is_visible()
        page.evaluate("document.activeElement.blur()")
    # the table's header: the sort button carries the CI's explanation
    head = page.get_by_role("button", name="Pass rate (95% CI)")
    tip = page.locator('[id="tip-head-ci"]')
    assert head.get_attribute("aria-describedby") == "tip-head-ci"
    head.focus()
    assert tip.is_visible()
    assert tip.text_content() == TERMS["ci"]
    # the words are plain: what it is, and what to do about it
    assert "more runs" in TERMS["ci"].lower()
    assert "at least one of k" in TERMS["pass_k"]
    assert "all k" in TERMS["pass_k"]
    assert "precision" in TERMS["f1"].lower()
    assert "recall" in TERMS["f1"].lower()
    assert_clean(watch, page)


def test_tab_reaches_each_explained_word(new_page: Any, tmp_path: Path) -> None:
    report = regenerate(demo_run(tmp_path / "run"))[0]
    page, _ = open_report(new_page, report)
    page.locator('tbody.sc[data-scenario="clinic.hours_today"][data-target="fake"] '
                 "button.toggle").click()
    seen = set()
    for _ in range(60):
        page.keyboard.press("Tab")
        described = page.evaluate(
            "document.activeElement.classList.contains('term') ? "
            "document.activeElement.getAttribute('aria-describedby') : null")
        if described:
            assert page.locator(f'[id="{described}"]').is_visible()
            seen.add(described.rsplit("-", 1)[0])
    assert {"tip-ci", "tip-passk", "tip-checks-ci"} <= seen
