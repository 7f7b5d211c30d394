"""Nothing is lost, in a real headless Chromium: leaving or reloading with unsaved edits
asks first; the Scenarios list marks files with unsaved edits; Revert; Run with unsaved
edits offers Save and run or Run the saved file; a save over a file changed on disk shows
What changed on disk before Overwrite or Reload; another tab learns that a file changed;
the status line and Run result speak of the file open — and, keyboard only, a whole flow
from opening a scenario to reading the run's verdict."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import FakeServer

from .conftest import SCRIPT, make_suite

pytestmark = pytest.mark.browser


def open_page(browser: Any, studio: Any) -> tuple[Any, Any, list[str]]:
    ctx = browser.new_context(viewport={"width": 1280, "height": 1200})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(studio.url)
    return ctx, page, errors


def test_unsaved_edits_are_marked_kept_asked_about_and_reverted(
        browser: Any, studio_on: Any, server: FakeServer, tmp_path: Path) -> None:
    server.script(SCRIPT)
    suite = make_suite(tmp_path / "clinic", server.url)
    studio = studio_on(suite)
    ctx, page, errors = open_page(browser, studio)
    nav = page.get_by_role("navigation", name="Scenarios")
    nav.get_by_role("link", name="hours.yaml", exact=True).click()
    page.get_by_role("tab", name="Form").click()
    description = page.get_by_role("textbox", name="Description")
    description.fill("A receptionist asks, changed.")
    description.press("Tab")
    expect(nav.get_by_role("listitem").first).to_contain_text("hours.yaml (unsaved changes)")
    expect(nav.get_by_role("link", name="hours.yaml", exact=True)).to_have_text("hours.yaml")
    # another file and back: the edit is still there
    nav.get_by_role("link", name="owner/close.yaml").click()
    expect(page.get_by_role("textbox", name="Description")).to_have_value(
        "The owner closes on Saturdays and confirms the change.")
    nav.get_by_role("link", name="hours.yaml", exact=True).click()
    expect(description).to_have_value("A receptionist asks, changed.")
    # reloading asks first (and staying keeps the edit)
    with page.expect_event("dialog") as asked:
        page.evaluate("setTimeout(() => location.reload(), 0)")
    assert asked.value.type == "beforeunload"
    asked.value.dismiss()
    expect(description).to_have_value("A receptionist asks, changed.")
    # Run with unsaved edits: Run the saved file leaves the file as it was
    before = (suite / "hours.yaml").read_text()
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("button", name="Run the saved file").click()
    result = page.get_by_role("status", name="Run result")
    expect(result).to_have_text(re.compile(r"The run ended: hours passed"), timeout=30000)
    assert (suite / "hours.yaml").read_text() == before
    # Save and run saves first
    page.get_by_role("button", name="Run", exact=True).click()
    page.get_by_role("button", name="Save and run").click()
    expect(nav.get_by_role("listitem").first).not_to_contain_text("unsaved")
    assert "description: A receptionist asks, changed.\n" in (suite / "hours.yaml").read_text()
    deadline = time.monotonic() + 60  # the second run's folder, with its report
    while len(list((suite / "runs").glob("*/report.html"))) < 2:
        assert time.monotonic() < deadline, "the second run never ended"
        time.sleep(0.1)
    expect(result).to_have_text(re.compile(r"The run ended: hours passed"), timeout=30000)
    # Revert returns to the saved file
    description.fill("Something else.")
    description.press("Tab")
    expect(page.get_by_text("unsaved changes", exact=True)).to_be_visible()
    page.get_by_role("button", name="Revert").click()
    expect(description).to_have_value("A receptionist asks, changed.")
    expect(page.get_by_text("unsaved changes", exact=True)).to_be_hidden()
    # nothing unsaved: leaving asks nothing
    dialogs: list[str] = []
    page.on("dialog", lambda d: (dialogs.append(d.type), d.dismiss()))
    page.reload()
    expect(page.get_by_role("navigation", name="Scenarios")).to_be_visible()
    assert dialogs == []
    assert errors == []
    ctx.close()


def test_a_save_over_a_changed_file_shows_what_changed_and_other_tabs_learn(
        browser: Any, studio_on: Any, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "clinic", "http://127.0.0.1:9/v1")
    studio = studio_on(suite)
    ctx, page, errors = open_page(browser, studio)
    nav = page.get_by_role("navigation", name="Scenarios")
    nav.get_by_role("link", name="hours.yaml", exact=True).click()
    page.get_by_role("tab", name="Form").click()
    page.get_by_role("textbox", name="Description").fill("Mine.")
    page.get_by_role("textbox", name="Description").press("Tab")
    path = suite / "hours.yaml"
    path.write_text(path.read_text().replace("runs: 3", "runs: 7  # a colleague's"))
    page.get_by_role("button", name="Save", exact=True).click()
    changed = page.get_by_role("region", name="What changed on disk")
    expect(changed).to_contain_text("-runs: 3")
    expect(changed).to_contain_text("+runs: 7  # a colleague's")
    expect(page.get_by_role("status")).to_have_text(
        "Not saved: 'hours.yaml' changed on disk since you opened it")
    assert "Mine." not in path.read_text()
    page.get_by_role("button", name="Reload").click()
    expect(page.get_by_role("spinbutton", name="Runs")).to_have_value("7")
    expect(changed).to_be_hidden()

    # a second tab on the same file learns when the first saves
    other = ctx.new_page()
    other.goto(page.url)
    expect(other.get_by_role("textbox", name="Scenario YAML")).to_contain_text("runs: 7")
    page.get_by_role("textbox", name="Description").fill("Saved in the first tab.")
    page.get_by_role("textbox", name="Description").press("Tab")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    expect(other.get_by_role("textbox", name="Scenario YAML")).to_contain_text(
        "Saved in the first tab.")
    expect(other.get_by_role("status")).to_have_text(
        "hours.yaml was changed in another tab: reloaded")
    # ... and, when it has edits of its own, says so instead of dropping them
    other.get_by_role("tab", name="Form").click()
    other.get_by_role("textbox", name="Description").fill("The second tab's.")
    other.get_by_role("textbox", name="Description").press("Tab")
    page.get_by_role("textbox", name="Description").fill("The first tab's again.")
    page.get_by_role("textbox", name="Description").press("Tab")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(other.get_by_role("region", name="What changed on disk")).to_contain_text(
        "+description: The first tab's again.")
    expect(other.get_by_role("textbox", name="Description")).to_have_value("The second tab's.")

    # "Saved" is never said about another file; a run's banner stays with its scenario
    nav.get_by_role("link", name="owner/close.yaml").click()
    expect(page.get_by_role("status")).to_have_count(0)
    assert errors == []
    ctx.close()


def tab_to(page: Any, name: str, role: str | None = None, limit: int = 200) -> None:
    """Press Tab until the focus is on the control named ``name`` (keyboard only)."""
    for _ in range(limit):
        page.keyboard.press("Tab")
        here = page.evaluate("""() => {
            const n = document.activeElement;
            if (!n) return ["", ""];
            let label = n.getAttribute("aria-label") || "";
            if (!label && n.id) {
              const l = document.querySelector(`label[for="${CSS.escape(n.id)}"]`);
              if (l) label = l.textContent;
            }
            if (!label && n.getAttribute("aria-labelledby")) {
              label = n.getAttribute("aria-labelledby").split(" ")
                .map((i) => (document.getElementById(i) || {}).textContent || "").join(" ");
            }
            return [label || n.textContent.trim(), n.getAttribute("role") || n.tagName];
        }""")
        if here[0] == name and (role is None or here[1] == role):
            return
    raise AssertionError(f"Tab never reached {name!r}")


def test_a_whole_flow_with_the_keyboard_alone(browser: Any, studio_on: Any, server: FakeServer,
                                              tmp_path: Path) -> None:
    server.script(SCRIPT)
    suite = make_suite(tmp_path / "clinic", server.url)
    studio = studio_on(suite)
    ctx, page, errors = open_page(browser, studio)
    kb = page.keyboard
    tab_to(page, "hours.yaml")
    kb.press("Enter")
    expect(page.get_by_role("textbox", name="Scenario YAML")).to_contain_text("# The clinic's")
    tab_to(page, "YAML", "tab")
    kb.press("ArrowRight")
    expect(page.get_by_role("tab", name="Form")).to_be_focused()
    tab_to(page, "Add check")
    kb.press("Enter")
    chooser = page.get_by_role("combobox", name="Check", exact=True).last
    expect(chooser).to_be_focused()  # focus moves to what was just added
    kb.type("not_con")
    expect(chooser).to_have_value("not_contains")
    expect(page.get_by_text("Typed “not_con”: 1 check(s) hold it; Enter takes not_contains.")
           ).to_be_visible()
    kb.press("Enter")
    expect(page.locator("#form[aria-busy]")).to_have_count(0)  # drawn anew, focus kept
    expect(chooser).to_be_focused()
    value = page.get_by_role("textbox", name="Value", exact=True).last
    expect(value).to_have_value("")
    tab_to(page, "Value")
    expect(value).to_be_focused()
    kb.type("cerrado")
    kb.press("Control+s")
    expect(page.get_by_role("status")).to_have_text("Saved")
    assert '  - not_contains: "cerrado"\n' in (suite / "hours.yaml").read_text()
    # remove it again: the focus stays in place
    tab_to(page, "Remove check 3")
    kb.press("Enter")
    expect(page.get_by_role("button", name="Add check", exact=True)).to_be_focused()
    kb.press("Control+s")
    expect(page.get_by_role("status")).to_have_text("Saved")
    # try, then run, then read the verdict
    tab_to(page, "Message")
    kb.type("¿Hasta qué hora atendemos hoy?")
    kb.press("Enter")
    expect(page.get_by_role("log", name="Conversation")).to_contain_text(
        "agent: Hoy atendemos hasta las 18:00.")
    tab_to(page, "Run")
    kb.press("Enter")
    expect(page.get_by_role("status", name="Run result")).to_have_text(
        re.compile(r"The run ended: hours passed with fake"), timeout=30000)
    assert errors == []
    ctx.close()


def test_import_conversations_adds_scenarios_to_the_list(browser: Any, studio_on: Any,
                                                         tmp_path: Path) -> None:
    """Import conversations (issue 34, item 6): a gateway log chosen in the page becomes
    scenarios in the suite's imported/ folder, listed at once; what could not be read is
    said in a list of its own, at its line."""
    from tests.importing.test_importer import TRANSCRIPT
    from tests.importing.test_scenario import gateway_log

    suite = make_suite(tmp_path / "clinic", "http://127.0.0.1:9/v1")
    log = gateway_log(tmp_path / "production.jsonl", [TRANSCRIPT])
    broken = tmp_path / "cut.jsonl"
    broken.write_bytes(b'{"request": {"messages": [\n')
    studio = studio_on(suite)
    ctx, page, errors = open_page(browser, studio)
    nav = page.get_by_role("navigation", name="Scenarios")
    with page.expect_file_chooser() as chooser:
        nav.get_by_role("button", name="Import conversations").click()
    chooser.value.set_files([str(log), str(broken)])
    expect(page.get_by_role("status")).to_have_text(
        "Imported 1 scenario(s): imported/abren_el_sabado.yaml")
    expect(nav.get_by_role("link", name="imported/abren_el_sabado.yaml")).to_be_visible()
    expect(page.get_by_role("list", name="What the import left out")).to_have_text([
        "cut.jsonl:1: the line is cut off: its JSON stops in the middle, at column 26; "
        "skipped"])
    assert (suite / "imported" / "abren_el_sabado.yaml").is_file()
    # the same file again: refused whole, nothing replaced
    page.get_by_label("Import conversations").set_input_files(str(log))
    expect(page.get_by_role("status")).to_contain_text(
        "Not imported: imported/abren_el_sabado.yaml already exists")
    assert errors == []
    ctx.close()
