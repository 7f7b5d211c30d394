"""The studio in a real headless Chromium, as a person uses it with the keyboard and the
mouse: browse the suite, type a mistake and see it in Problems at its line, fix it, add a
check through the form and see it in the YAML with the comments kept, save, try the
conversation against the scripted server (with a confirmation), run with a progress bar
and open the report; make a new scenario. The screenshots land in tests/artifacts/studio/
(and in docs/img/ with SCENARIST_DOCS_SCREENSHOTS=1: docs/studio.md shows them)."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import REPO, FakeServer

from .conftest import SCRIPT, make_suite

pytestmark = pytest.mark.browser
SHOTS = REPO / "tests" / "artifacts" / "studio"


def shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / name))
    if os.environ.get("SCENARIST_DOCS_SCREENSHOTS") == "1":
        shutil.copyfile(SHOTS / name, REPO / "docs" / "img" / name)


def problems(page: Any) -> list[str]:
    return page.get_by_role("list", name="Problems").get_by_role("listitem").all_inner_texts()


def test_browse_edit_save_try_and_run(browser: Any, studio_on: Any, server: FakeServer,
                                      tmp_path: Path) -> None:
    server.script(SCRIPT)
    suite = make_suite(tmp_path / "clinic", server.url)
    studio = studio_on(suite)
    ctx = browser.new_context(viewport={"width": 1280, "height": 1200})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    requests: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.goto(studio.url)

    # browse: the suite's scenario files, named by their path in the suite
    nav = page.get_by_role("navigation", name="Scenarios")
    expect(nav.get_by_role("link")).to_have_text(["hours.yaml", "owner/close.yaml"])
    nav.get_by_role("link", name="hours.yaml", exact=True).click()
    editor = page.get_by_role("textbox", name="Scenario YAML")
    expect(editor).to_contain_text("# The clinic's hours")
    expect(page.get_by_text("No problems.")).to_be_visible()
    # the one-time code left the address bar; the page's own ticket took its place
    assert studio.token not in page.url
    assert page.url.startswith(f"{studio.base}/?s=")
    assert page.url.endswith("#hours.yaml")

    # a mistake typed at the end of the file: listed at its line, underlined
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type('  - contians: "18:00"')
    expect(page.get_by_role("list", name="Problems").get_by_role("listitem")).to_have_text(
        ["13:5 S101 unknown check 'contians'; did you mean 'contains'?"], timeout=2000)
    expect(page.locator(".cm-lintRange-error")).to_have_text("contians")
    shot(page, "studio-problems.png")
    # clicking the problem puts the cursor on its line
    page.keyboard.press("Control+Home")
    page.get_by_role("list", name="Problems").get_by_role("button").click()
    expect(page.locator(".cm-activeLine")).to_have_text('  - contians: "18:00"')
    # fixed: the list empties
    page.keyboard.press("End")
    for _ in range(len('contians: "18:00"')):
        page.keyboard.press("Shift+ArrowLeft")
    page.keyboard.type('not_contains: "cerrado"')
    expect(page.get_by_text("No problems.")).to_be_visible(timeout=2000)
    assert problems(page) == []

    # the form shows the scenario in plain words
    page.get_by_role("tab", name="Form").click()
    expect(page.get_by_role("textbox", name="Description")).to_have_value(
        "A receptionist asks until what time the clinic is open today.")
    expect(page.get_by_role("textbox", name="Moment")).to_have_value(
        "2026-09-29T10:00:00-03:00")
    expect(page.get_by_text("That is Tuesday 29 September 2026, 10:00 (UTC-03:00).")
           ).to_be_visible()
    expect(page.get_by_role("checkbox", name="list_business_hours", exact=True)).to_be_checked()
    expect(page.get_by_role("checkbox", name="set_business_hours", exact=True)).not_to_be_checked()
    checks = page.get_by_role("combobox", name="Check", exact=True)
    expect(checks).to_have_count(3)
    expect(checks.nth(2)).to_have_value("not_contains")
    # a tool and a check added through the form
    page.get_by_role("checkbox", name="set_business_hours", exact=True).check()
    page.get_by_role("button", name="Add check", exact=True).click()
    expect(checks).to_have_count(4)
    checks.nth(3).select_option("matches")
    page.get_by_role("textbox", name="Value", exact=True).last.fill("hasta las 18")
    page.get_by_role("checkbox", name="Always", exact=True).nth(3).check()
    page.evaluate("document.getElementById('file-name').scrollIntoView()")
    shot(page, "studio-form.png")
    page.get_by_role("tab", name="YAML").click()
    expect(page.locator(".cm-line").nth(13)).to_have_text('  - matches: "hasta las 18"')
    expect(page.locator(".cm-line").nth(14)).to_have_text("    always: true")
    expect(editor).to_contain_text("tools: [list_business_hours, set_business_hours]")
    expect(editor).to_contain_text("# it looks the hours up")

    # save: the file on disk, with every comment kept
    before = (suite / "hours.yaml").read_text("utf-8")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    after = (suite / "hours.yaml").read_text("utf-8")
    assert after != before
    assert [x for x in after.splitlines() if "#" in x] == [
        x for x in before.splitlines() if "#" in x]
    assert after.endswith('  - not_contains: "cerrado"\n'
                          '  - matches: "hasta las 18"\n'
                          '    always: true\n')

    # try: a held call confirmed on the page, then the scenario's checks
    nav.get_by_role("link", name="owner/close.yaml").click()
    expect(editor).to_contain_text("close_saturday")
    expect(page.get_by_role("combobox", name="Target")).to_have_value("fake")
    page.get_by_role("textbox", name="Message").fill("Los sábados cerramos.")
    page.get_by_role("button", name="Send", exact=True).click()
    log = page.get_by_role("log", name="Conversation")
    expect(log).to_contain_text('tool call: set_business_hours {"day": "saturday", '
                                '"hours": "closed"}')
    expect(log).to_contain_text("waits for the person to confirm")
    page.get_by_role("button", name="Confirm", exact=True).click()
    expect(log).to_contain_text("confirmed: set_business_hours ran")
    expect(log).to_contain_text("agent: Listo: los sábados cerrado.")
    page.get_by_role("button", name="Check", exact=True).click()
    expect(page.get_by_role("list", name="The scenario's checks on this conversation")
           ).to_have_text(["passes: it closes Saturday"])
    shot(page, "studio-try.png")

    # run: the progress bar moves, the verdict is said, the report opens
    nav.get_by_role("link", name="hours.yaml", exact=True).click()
    expect(editor).to_contain_text("# The clinic's hours")
    page.get_by_role("button", name="Run", exact=True).click()
    bar = page.get_by_role("progressbar")
    expect(bar).to_have_attribute("aria-valuenow", "3", timeout=20000)
    status = page.get_by_role("status")
    expect(status).to_have_text(re.compile(r"The run ended: hours passed with fake "
                                           r"\(3 of 3 attempts passed, 2 needed\)\."))
    expect(nav.get_by_role("listitem").first).to_contain_text("last run: passed")
    page.get_by_role("link", name="Open report").scroll_into_view_if_needed()
    shot(page, "studio-run.png")
    with ctx.expect_page() as opened:
        page.get_by_role("link", name="Open report").click()
    report = opened.value
    report.wait_for_load_state()
    assert report.title().startswith("Scenarist report — ")
    runs = list((suite / "runs").iterdir())
    assert len(runs) == 1
    assert (runs[0] / "report.html").is_file()
    assert (suite / ".scenarist" / "history.db").is_file()

    # a new scenario: commented, and it lints clean
    page.get_by_role("button", name="New scenario").click()
    page.get_by_role("textbox", name="File name").fill("front desk/greeting")
    page.get_by_role("button", name="Create").click()
    expect(nav.get_by_role("link", name="front desk/greeting.yaml")).to_be_visible()
    expect(editor).to_contain_text("# A scenario: given a moment")
    expect(page.get_by_text("No problems.")).to_be_visible()
    assert (suite / "front desk" / "greeting.yaml").is_file()
    # completion from Scenarist's own words: checks under then, with their explanation
    editor.click()
    page.keyboard.press("Control+End")
    page.keyboard.type("  - not_c")
    page.keyboard.press("Control+Space")
    options = page.get_by_role("listbox").get_by_role("option")
    expect(options).to_have_text([re.compile("^not_calls"), re.compile("^not_contains")])
    page.keyboard.press("ArrowDown")
    page.keyboard.press("Tab")
    expect(page.locator(".cm-activeLine")).to_have_text("  - not_contains: ")
    expect(page.get_by_role("list", name="Problems").get_by_role("listitem")).to_have_text(
        ["11:18 S103 the check 'not_contains' must be text, a list or a mapping (key: value "
         "lines), not empty (null)"])
    # and a check's parameters, inside its mapping
    page.keyboard.type('{text: "abierto", ig')
    page.keyboard.press("Control+Space")
    expect(options).to_have_text([re.compile("^ignore_case")])
    page.keyboard.press("Tab")
    page.keyboard.type("true}")
    expect(page.locator(".cm-activeLine")).to_have_text(
        '  - not_contains: {text: "abierto", ignore_case: true}')
    expect(page.get_by_text("No problems.")).to_be_visible()
    # hover: what a check is
    page.locator(".cm-line", has_text="- non_empty").hover(position={"x": 60, "y": 6})
    expect(page.locator(".cm-tooltip-hover")).to_contain_text(
        "check non_emptyThe answer has some text (not only spaces).")

    assert errors == []
    assert all(u.startswith(studio.base) for u in requests)  # nothing from elsewhere
    ctx.close()
    code, said = studio.stop()
    assert code == 0
    assert "Studio stopped." in said
