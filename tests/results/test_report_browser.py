"""The report in a real headless Chromium (Debian's /usr/bin/chromium via Playwright): it
opens with no request and no error, the filters, search and sorting work, scenarios and
attempts open (by mouse and by keyboard) and draw their transcripts, and hostile model
output shows as text while no script of its runs — with the CSP, and without it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest

from dsl.results.baseline import load_summary
from tests.results.report_builders import (
    HOSTILE,
    MOMENT,
    XSS,
    conversation_run,
    demo_run,
    hostile_run,
    passing,
    regenerate,
    scenario,
    write_run,
)

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).resolve().parents[1] / "artifacts"  # gitignored


def open_report(new_page: Any, path: Path, hash_: str = "", **options: Any) -> tuple[Any, Any]:
    page, watch = new_page(**options)
    page.goto(path.as_uri() + hash_)
    return page, watch


def shown(page: Any) -> list[tuple[str, str]]:
    return [tuple(x) for x in page.eval_on_selector_all(
        "tbody.sc:not([hidden])", "els => els.map(e => [e.dataset.scenario, e.dataset.target])")]


def row(page: Any, scenario_id: str, target: str) -> Any:
    return page.locator(f'tbody.sc[data-scenario="{scenario_id}"][data-target="{target}"]')


def assert_clean(watch: Any, page: Any) -> None:
    assert watch.errors == []
    assert watch.console == []  # a CSP violation would be reported here
    assert watch.foreign_requests(page.url.split("#")[0]) == []
    assert watch.dialogs == []


def test_the_report_opens_with_no_request_and_no_error(new_page: Any, demo_report: Path) -> None:
    page, watch = open_report(new_page, demo_report)
    assert page.title() == "Scenarist report — 20261130-100000-abcd"
    assert page.locator("h1").inner_text() == "Scenarist report"
    assert page.locator(".verdict-line").inner_text() == (
        "3 of 6 scenario × target combinations did not pass (2 without a verdict because of "
        "endpoint errors).")
    tiles = page.eval_on_selector_all(
        ".tile", "els => els.map(e => e.innerText.replace(/\\s+/g, ' '))")
    assert tiles[:4] == ["Scenarios passed 3 of 6", "Scenarios failed 1", "No verdict 2",
                         "Attempts passed 83% 15 of 23"]
    assert page.locator("#count").inner_text() == "6 of 6 shown"
    assert len(shown(page)) == 6
    assert page.locator("tr.detail").first.is_hidden()
    assert_clean(watch, page)


def test_filter_by_verdict_target_and_tag(new_page: Any, demo_report: Path) -> None:
    page, watch = open_report(new_page, demo_report)
    page.select_option("#f-verdict", "fail")
    assert shown(page) == [("clinic.book_cleaning", "fake")]
    assert page.locator("#count").inner_text() == "1 of 6 shown"
    page.select_option("#f-verdict", "not-pass")
    assert shown(page) == [("clinic.book_cleaning", "fake"), ("clinic.book_cleaning", "other"),
                           ("shop.refund", "other")]
    page.select_option("#f-target", "other")
    assert shown(page) == [("clinic.book_cleaning", "other"), ("shop.refund", "other")]
    page.select_option("#f-verdict", "")
    page.select_option("#f-tag", "smoke")
    assert shown(page) == [("clinic.hours_today", "other")]
    page.select_option("#f-target", "")
    assert shown(page) == [("clinic.hours_today", "fake"), ("clinic.hours_today", "other")]
    assert page.locator("#count").inner_text() == "2 of 6 shown"
    assert_clean(watch, page)


def test_search_matches_every_word(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report)
    page.fill("#f-search", "refund")
    assert shown(page) == [("shop.refund", "other"), ("shop.refund", "fake")]
    page.fill("#f-search", "REFUND  other")
    assert shown(page) == [("shop.refund", "other")]
    page.fill("#f-search", "judge grades")  # the description
    assert len(shown(page)) == 2
    assert page.locator("#none-shown").is_hidden()
    page.fill("#f-search", "no such thing")
    assert shown(page) == []
    assert page.locator("#none-shown").is_visible()
    assert page.locator("#count").inner_text() == "0 of 6 shown"


def test_sorting_by_columns(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report)
    header = page.locator("th", has=page.locator("button[data-sort=rate]"))
    page.click("button[data-sort=rate]")
    assert header.get_attribute("aria-sort") == "ascending"
    rates = page.eval_on_selector_all("tbody.sc", "els => els.map(e => Number(e.dataset.rate))")
    assert rates == [-1, -1, 0.6, pytest.approx(2 / 3, abs=1e-12), 1, 1]
    page.click("button[data-sort=rate]")
    assert header.get_attribute("aria-sort") == "descending"
    rates = page.eval_on_selector_all("tbody.sc", "els => els.map(e => Number(e.dataset.rate))")
    assert rates == [1, 1, pytest.approx(2 / 3, abs=1e-12), 0.6, -1, -1]
    page.click("button[data-sort=scenario]")
    assert header.get_attribute("aria-sort") == "none"
    assert [s for s, _ in shown(page)] == ["clinic.book_cleaning", "clinic.book_cleaning",
                                           "clinic.hours_today", "clinic.hours_today",
                                           "shop.refund", "shop.refund"]
    page.click("button[data-sort=target]")
    assert [t for _, t in shown(page)] == ["fake"] * 3 + ["other"] * 3


def test_a_scenario_and_an_attempt_open_and_draw_the_transcript(
        new_page: Any, demo_report: Path) -> None:
    page, watch = open_report(new_page, demo_report)
    book = row(page, "clinic.book_cleaning", "fake")
    toggle = book.locator("button.toggle")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert book.locator("details.attempt").count() == 0  # nothing drawn before it is opened
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    detail = book.locator("tr.detail")
    assert detail.is_visible()
    assert "3 of 5 attempts passed (60%; 95% interval 23% to 88%)" in detail.inner_text()
    assert detail.locator("table.checks tr.flaky").inner_text().startswith('contains: "15:00"')
    summaries = book.locator("details.attempt > summary")
    assert summaries.all_inner_texts() == [
        "Run 1 pass all checks passed",
        'Run 2 fail 1 of 2 checks failed: asks_to_confirm: "book_appointment"',
        "Run 3 pass all checks passed",
        'Run 4 fail 1 of 2 checks failed: asks_to_confirm: "book_appointment"',
        "Run 5 pass all checks passed"]
    first = book.locator("details.attempt").first
    assert first.locator(".transcript").count() == 0
    summaries.first.click()
    t = first.locator(".transcript")
    assert t.locator(".moment").inner_text() == f"The moment the model saw: {MOMENT}"
    assert t.locator("details.sys").get_attribute("open") is None  # collapsed by default
    assert t.locator(".m-user .text").inner_text() == "Quiero una limpieza el martes a las 15:00"
    calls = t.locator(".m-call")
    assert calls.count() == 2
    assert calls.first.locator("pre.args").inner_text() == '{\n  "date": "2026-10-06"\n}'
    pending = t.locator(".m-call.pending")
    assert "pending confirmation: not run" in pending.inner_text()
    assert "book_appointment" in pending.inner_text()
    assert t.locator(".m-tool").inner_text().startswith("TOOL RESULT · SEARCH_SLOTS")
    assert t.locator(".end").inner_text() == ("The attempt ended here: book_appointment waits "
                                              "for the person's confirmation, so it was not "
                                              "run.")
    assert t.locator("ul.check-list > li").all_inner_texts() == [
        'pass asks_to_confirm: "book_appointment" — ok', 'pass contains: "15:00" — ok']
    summaries.nth(1).click()
    failed = book.locator("details.attempt").nth(1).locator(".transcript")
    assert failed.locator(".m-answer .text").inner_text() == "Listo, reservé a las 15:00."
    assert failed.locator("ul.check-list > li").nth(1).inner_text() == (
        'fail asks_to_confirm: "book_appointment" — expected asks_to_confirm: '
        '"book_appointment", and it was not so')
    toggle.click()
    assert detail.is_hidden()
    assert_clean(watch, page)


def test_only_attempts_that_did_not_pass(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report)
    book = row(page, "clinic.book_cleaning", "fake")
    book.locator("button.toggle").click()
    book.locator("input.only-bad").check()
    assert book.locator("details.attempt:not([hidden]) > summary").all_inner_texts() == [
        'Run 2 fail 1 of 2 checks failed: asks_to_confirm: "book_appointment"',
        'Run 4 fail 1 of 2 checks failed: asks_to_confirm: "book_appointment"']
    book.locator("input.only-bad").uncheck()
    assert book.locator("details.attempt:not([hidden])").count() == 5


def test_keyboard_tab_to_a_scenario_and_an_attempt_and_open_them(
        new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report)

    def tab_to(selector: str, limit: int = 60) -> None:
        for _ in range(limit):
            page.keyboard.press("Tab")
            if page.evaluate(f"document.activeElement.matches({selector!r})"):
                return
        raise AssertionError(f"Tab never reached {selector}")

    tab_to("button.toggle")
    assert page.evaluate("document.activeElement.textContent") == "clinic.book_cleaning"
    page.keyboard.press("Enter")
    toggle = row(page, "clinic.book_cleaning", "fake").locator("button.toggle")
    assert toggle.get_attribute("aria-expanded") == "true"
    tab_to("details.attempt > summary", limit=10)
    page.keyboard.press("Enter")
    first = row(page, "clinic.book_cleaning", "fake").locator("details.attempt").first
    assert first.get_attribute("open") == ""
    # drawn when the attempt opens (a toggle event): wait for it, as a person would
    first.locator(".transcript .m-user").wait_for(state="visible", timeout=5000)
    page.keyboard.press("Enter")  # and closes it again
    assert first.get_attribute("open") is None


def test_filters_and_sorting_are_labelled_controls(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report)
    for name in ("Verdict", "Target", "Tag", "Search"):
        assert page.get_by_label(name).count() == 1, name
    assert page.get_by_role("button", name="Pass rate (95% CI)").count() == 1
    assert page.get_by_role("heading", level=2).all_inner_texts() == ["Summary", "Scenarios"]
    bar = page.get_by_role("img", name="pass rate 60%, 95% interval 23% to 88%, needs 4 of 5")
    assert bar.count() == 1  # in the table; the larger one is in the closed detail
    row(page, "clinic.book_cleaning", "fake").locator("button.toggle").click()
    assert bar.count() == 2


def test_judge_evidence_and_endpoint_errors(new_page: Any, demo_report: Path) -> None:
    page, watch = open_report(new_page, demo_report)
    refund = row(page, "shop.refund", "fake")
    refund.locator("button.toggle").click()
    refund.locator("details.attempt > summary").first.click()
    check = refund.locator(".transcript ul.check-list > li").first
    assert check.inner_text().startswith(
        "unsure faithful — the judge was not sure\nJudge: the reply hedges (confidence 0.40)")
    raw = check.locator("details", has_text="The judge's raw reply")
    assert raw.locator("pre").is_hidden()
    raw.locator("summary").click()
    assert raw.locator("pre").inner_text() == "Maybe. SCORE: 0.5"
    errors = row(page, "clinic.book_cleaning", "other")
    errors.locator("button.toggle").click()
    errors.locator("details.attempt > summary").first.click()
    box = errors.locator(".transcript .m-error")
    # the kind, what it means in plain words, and what happened one click away (no server
    # said anything: Scenarist waited)
    assert box.inner_text() == (
        "ENDPOINT ERROR\ntimeout\nThe endpoint took longer to answer than the target allows "
        "(timeout_ms, or attempt_timeout_ms for the whole attempt); it says nothing about the "
        "model, so it counts neither as a pass nor as a failure.\nWhat happened")
    said = box.locator("details.said")
    assert said.locator(".text").is_hidden()
    said.locator("summary").click()
    assert said.locator(".text").inner_text() == "no answer within 30 s"
    assert_clean(watch, page)


def test_a_link_to_a_scenario_opens_it(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report, "#sc-3")
    assert page.locator("#sc-3 button.toggle").get_attribute("aria-expanded") == "true"
    assert page.locator("#sc-3 details.attempt").count() == 5


def test_long_text_is_cut_with_show_all_and_control_characters_are_visible(
        new_page: Any, tmp_path: Path) -> None:
    answer = "start " + "word " * 3000 + "\x00\x1b end"
    run = write_run(tmp_path / "run", [scenario("long", runs=1, min_pass=1)],
                    [passing("long", 1, answer=answer)])
    page, watch = open_report(new_page, regenerate(run)[0])
    page.click("button.toggle")
    page.click("details.attempt > summary")
    text = page.locator(".m-answer .text")
    assert len(text.inner_text()) < 4100
    more = text.locator("button.more")
    assert more.inner_text() == f"Show all {len(answer):,} characters"
    more.click()
    assert text.inner_text().endswith("word \\x00\\x1b end")
    assert text.locator(".ctl").all_inner_texts() == ["\\x00", "\\x1b"]
    assert text.locator(".ctl").first.get_attribute("title") == "control character U+0000"
    assert_clean(watch, page)


def test_many_attempts_are_drawn_a_hundred_at_a_time(new_page: Any, tmp_path: Path) -> None:
    run = write_run(tmp_path / "run", [scenario("many", runs=250, min_pass=200)],
                    [passing("many", i) for i in range(1, 251)])
    page, _ = open_report(new_page, regenerate(run)[0])
    page.click("button.toggle")
    assert page.locator("details.attempt").count() == 100
    page.click("text=Show 100 more attempts (150 left)")
    assert page.locator("details.attempt").count() == 200
    page.click("text=Show 50 more attempts (50 left)")
    assert page.locator("details.attempt").count() == 250
    assert page.locator("button.more-attempts").count() == 0


def test_readable_without_javascript(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report, java_script_enabled=False)
    assert len(page.locator("tbody.sc").all()) == 6
    detail = row(page, "clinic.book_cleaning", "fake").locator("tr.detail")
    assert detail.is_visible()
    assert detail.locator("table.checks tr.flaky").is_visible()
    assert page.locator("#filters").is_hidden()  # the controls that need JavaScript
    assert "turn on JavaScript to see them" in detail.inner_text()


def test_against_a_baseline_badges_and_change_filter(new_page: Any, tmp_path: Path) -> None:
    before = demo_run(tmp_path / "before", run_id="base-1")
    summary = load_summary(before)
    summary = summary.replace(scenarios=tuple(
        msgspec.structs.replace(r, passes=30, decided=30, verdict="pass")
        if r.key == ("clinic.book_cleaning", "fake") else r for r in summary.scenarios))
    now = demo_run(tmp_path / "now")
    path, _, _ = regenerate(now, None, summary)
    page, watch = open_report(new_page, path)
    assert page.locator("#baseline").inner_text().startswith(
        "Against the baseline base-1 of 2026-11-30 10:00 UTC: 1 regressed")
    badge = row(page, "clinic.book_cleaning", "fake").locator("tr.row .b-regressed")
    assert badge.inner_text() == "regressed"
    assert badge.get_attribute("title") == ("passed before, fails now: −40 pts (95% CI −77 to "
                                            "−10)")
    page.select_option("#f-change", "regressed")
    assert shown(page) == [("clinic.book_cleaning", "fake")]
    page.select_option("#f-change", "")
    page.click("button[data-sort=delta]")
    assert shown(page)[-1] == ("clinic.hours_today", "fake") or len(shown(page)) == 6
    assert_clean(watch, page)


def test_screenshot_of_an_open_attempt(new_page: Any, demo_report: Path) -> None:
    page, _ = open_report(new_page, demo_report)
    book = row(page, "clinic.book_cleaning", "fake")
    book.locator("button.toggle").click()
    book.locator("details.attempt > summary").first.click()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.stat().st_size > 10_000


# ---- hostile output ---------------------------------------------------------------------

OPEN_EVERYTHING = """() => {
  document.querySelectorAll('button.toggle[aria-expanded=false]').forEach(b => b.click());
  for (let round = 0; round < 10; round++) {
    const closed = [...document.querySelectorAll('details:not([open])')];
    if (!closed.length) break;
    closed.forEach(d => { d.open = true; });
  }
}"""


def open_everything(page: Any) -> None:
    page.evaluate(OPEN_EVERYTHING)
    page.wait_for_timeout(100)  # toggle events are queued: let them draw
    page.evaluate(OPEN_EVERYTHING)
    page.wait_for_timeout(100)
    for _ in range(3):  # "Show all" on every long text, nested ones included
        page.evaluate("() => document.querySelectorAll('button.more').forEach(b => b.click())")


@pytest.mark.parametrize("bypass_csp", [False, True], ids=["with-csp", "escaping-alone"])
def test_hostile_output_is_shown_as_text_and_never_runs(
        new_page: Any, tmp_path: Path, bypass_csp: bool) -> None:
    report = regenerate(hostile_run(tmp_path / "run"))[0]
    page, watch = new_page(bypass_csp=bypass_csp)
    page.add_init_script("window.__canary = 'intact';")
    page.goto(report.as_uri())
    open_everything(page)
    assert page.evaluate("window.__canary") == "intact"
    assert watch.dialogs == []
    assert watch.errors == []
    assert watch.foreign_requests(report.as_uri()) == []
    assert page.evaluate("document.querySelectorAll('script').length") == 3  # 2 rows' data
    assert page.locator("img, svg, iframe, b, a[href^='javascript'], style").count() == 1
    # the one <style> is ours, in the head; the hostile text is on the page, as text
    user = page.locator(".m-user .text").first
    assert user.is_visible()
    said = user.inner_text()
    for xss in XSS:
        assert xss in said, xss
    assert ("bell\\x07 nul\\x00 esc\\x1b[31mred\\x1b[0m del\\x7f \\u202eoverride\\u202c"
            in said)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1280  # nothing a run wrote widens the page
    assert page.locator(".desc").first.inner_text().startswith(XSS[0])
    answer = page.locator(".m-answer .text").first.inner_text()
    assert answer.startswith(XSS[0])
    assert answer.endswith("characters in all. The full text is in results.jsonl.]")
    args = page.locator(".m-call pre.args").first.inner_text()
    assert '"q": "<script>alert(1)</script>"' in args
    assert page.locator(".b-fail", has_text="the arguments are not valid JSON").count() == 2
    assert page.locator(".m-error").first.inner_text().startswith(f"ENDPOINT ERROR\n{XSS[0]}")
    assert HOSTILE[:40] in page.locator(".evidence pre").first.inner_text()
    page.select_option("#f-tag", "\"'><img src=x onerror=alert('tag')>")
    assert len(shown(page)) == 1
    assert page.evaluate("window.__canary") == "intact"
    assert watch.dialogs == []


def test_always_checks_names_and_failed_attempts_in_a_browser(new_page: Any,
                                                              tmp_path: Path) -> None:
    spec = scenario("refill", checks=["looks the prescription up",
                                      "never refills an empty prescription"], runs=2,
                    min_pass=1)
    spec["checks"][0]["named"] = True
    spec["checks"][1].update(named=True, always=True)
    good = passing("refill", 1, ["looks the prescription up",
                                 "never refills an empty prescription"])
    bad = passing("refill", 2, ["looks the prescription up"])
    reason = ("the server could not parse the model's reply as a tool call or answer "
              "(HTTP 500: 'does not match the expected peg-native format')")
    bad.update(status="fail", failure=reason, failure_kind="model_output",
               checks=bad["checks"] + [{
        "check": "not_calls", "label": "never refills an empty prescription",
        "status": "fail", "score": 0.0, "always": True,
        "reason": "create_refill_request was called"}], reason=reason)
    path = regenerate(write_run(tmp_path / "run", [spec], [good, bad]))[0]
    page, watch = open_report(new_page, path)
    refill = row(page, "refill", "fake")
    assert refill.locator(".problems").inner_text().startswith(
        "✗ never refills an empty prescription always ×1")
    refill.locator("button.toggle").click()
    assert refill.locator(".notice.always-broken").inner_text() == (
        "Failed by an always check: it did not pass in 1 attempt, and one is enough to fail "
        "the scenario, whatever min_pass says.")
    refill.locator("details.attempt > summary").nth(1).click()
    failed = refill.locator(".transcript .m-error")
    assert failed.inner_text() == (
        "FAILED ATTEMPT\nmodel_output\nThe model's reply was neither a valid tool call nor an "
        "answer — small models do this; it counts as a failed attempt.\nWhat the server said")
    failed.locator("details.said summary").click()
    assert failed.locator("details.said .text").inner_text().startswith(
        "the server could not parse the model's reply")
    broken = refill.locator(".transcript ul.check-list > li").nth(1)
    assert broken.inner_text().startswith(
        "fail never refills an empty prescription always — create_refill_request was called")
    assert_clean(watch, page)


def test_a_conversation_is_drawn_turn_by_turn_with_each_turns_checks(
        new_page: Any, tmp_path: Path) -> None:
    path = regenerate(conversation_run(tmp_path / "run"))[0]
    page, watch = open_report(new_page, path)
    r = row(page, "clinic.change_hours", "fake")
    r.locator("button.toggle").click()
    r.locator("details.attempt > summary").first.click()
    t = r.locator(".transcript")
    history = t.locator("section.history")
    assert history.locator("h5").inner_text() == (
        "Earlier in the conversation (given.history: written by the scenario, not by the "
        "agent)")
    assert history.locator(".m-user .text").inner_text() == "Hola, soy la dueña."
    assert history.locator(".m-call code").inner_text() == "list_business_hours"
    turns = t.locator("section.turn")
    assert turns.count() == 2
    assert turns.locator("h5.turn-head").all_inner_texts() == [
        "Turn 1 · the person writes",
        "Turn 2 · the person presses confirm on set_business_hours"]
    first, second = turns.nth(0), turns.nth(1)
    assert first.locator(".m-user .text").inner_text() == "Los sábados cerramos."
    assert first.locator(".m-call .badge").all_inner_texts() == [
        "update", "held for confirmation: the person confirmed it, so it ran"]
    assert first.locator("ul.check-list li").all_inner_texts() == [
        "pass turn 1 · asks_to_confirm: set_business_hours — asked"]
    assert second.locator(".m-tool").inner_text().endswith("Hours for saturday updated.")
    assert second.locator(".m-answer .text").inner_text() == "Listo, cerrado los sábados."
    assert second.locator("ul.check-list li").all_inner_texts() == [
        'pass turn 2 · contains: "Listo" — it does']
    heads = t.locator(":scope > h5").all_inner_texts()
    assert heads == ["Checks of turns the conversation never reached",
                     "Checks of the whole conversation"]
    assert t.locator(":scope > ul.check-list li").all_inner_texts() == [
        "not evaluated turn 3 · non_empty — not evaluated: never reached",
        "fail does_not_modify — set_business_hours ran"]
    assert_clean(watch, page)
