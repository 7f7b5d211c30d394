"""The refill desk, end to end in a real headless Chromium, by accessible names alone and
with no key pressed in a YAML tab — as a pharmacy's refill-desk lead would do it on a
suite ``scenarist init`` made: a target found with Find models, a world table built in
Suite settings (Add table, Add column, Add row, cells), a table tool with its argument,
Where and Set, five scenarios through the form (a world check chosen by table, row and
column), Try with the world's change shown, Run with its verdict in Run result, and the
report. The screenshots land in tests/artifacts/studio/ (docs/img/ with
SCENARIST_DOCS_SCREENSHOTS=1)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect

from tests.conftest import REPO, FakeServer

from .test_studio_browser import shot

pytestmark = pytest.mark.browser

REFILL: dict[str, Any] = {
    "models": ["desk-model", "other-model"],
    "rules": [
        {"match": "RX-1001", "per_turn": True, "replies": [
            {"tool_calls": [{"name": "request_refill", "arguments": {"rx": "RX-1001"}}]},
            {"text": "Done: RX-1001 is refilled, one refill is left."}]},
        {"match": "RX-2002", "per_turn": True, "replies": [
            {"tool_calls": [{"name": "find_prescription", "arguments": {"rx": "RX-2002"}}]},
            {"text": "RX-2002 has no refills left: please ask your doctor."}]},
    ],
    "default": [{"text": "How can I help with your prescription?"}],
}


def init_suite(folder: Path) -> Path:
    done = subprocess.run([sys.executable, "-m", "dsl", "init", str(folder)],
                          capture_output=True, text=True, env={"PYTHONPATH": str(REPO),
                                                               "PATH": "/usr/bin"})
    assert done.returncode == 0, done.stderr
    return folder


def fill_and_leave(page: Any, locator: Any, text: str) -> None:
    locator.fill(text)
    locator.press("Tab")


def test_the_refill_desk_with_no_yaml_typed(browser: Any, studio_on: Any, server: FakeServer,
                                            tmp_path: Path) -> None:
    server.script(REFILL)
    suite = init_suite(tmp_path / "refills")
    studio = studio_on(suite)
    ctx = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(studio.url)

    # Suite settings: a target, found with Find models
    page.get_by_role("button", name="Suite settings").click()
    expect(page.get_by_role("heading", name="Targets")).to_be_visible()
    page.get_by_role("button", name="Add target").click()
    name = page.get_by_role("textbox", name="Target name").last
    expect(name).to_be_focused()
    fill_and_leave(page, name, "desk")
    expect(page.get_by_role("group", name="Target desk")).to_be_visible()
    desk = page.get_by_role("group", name="Target desk")
    expect(desk.get_by_role("combobox", name="Kind")).to_have_value("openai")
    fill_and_leave(page, desk.get_by_role("textbox", name="Base URL"), server.url)
    desk.get_by_role("button", name="Find models").click()
    expect(desk.get_by_role("listbox")).to_be_visible()
    desk.get_by_role("option", name="desk-model").click()
    expect(desk.get_by_role("textbox", name="Model")).to_have_value("desk-model")
    expect(desk.get_by_text("Target desk: the endpoint answers; it serves 2 model(s).")
           ).to_be_visible()
    expect(desk.get_by_role("textbox", name="API key variable")).to_have_value("")

    # Defaults
    fill_and_leave(page, page.get_by_role("spinbutton", name="Runs"), "3")
    fill_and_leave(page, page.get_by_role("spinbutton", name="Min pass"), "2")
    fill_and_leave(page, page.get_by_role("spinbutton", name="Concurrency"), "2")
    page.get_by_role("combobox", name="Default target").select_option("desk")

    # World: a table of prescriptions, as a grid
    page.get_by_role("button", name="Add table").click()
    page.get_by_role("textbox", name="Table name").fill("prescriptions")
    page.get_by_role("button", name="Add table").click()
    grid = page.get_by_role("grid", name="prescriptions")
    expect(grid).to_be_visible()
    for column in ("medicine", "refills_left"):
        page.get_by_role("button", name="Add column").click()
        page.get_by_role("textbox", name="Column name").fill(column)
        page.get_by_role("textbox", name="Column name").press("Enter")
        expect(grid.get_by_role("columnheader", name=column)).to_be_visible()
    cells = grid.get_by_role("textbox")
    for i, value in enumerate(["RX-1001", "losartan 50 mg", "2"]):
        fill_and_leave(page, cells.nth(i), value)
    page.get_by_role("button", name="Add row").click()
    expect(grid.get_by_role("row")).to_have_count(3)
    for i, value in enumerate(["RX-2002", "metformin 850 mg", "0"]):
        fill_and_leave(page, grid.get_by_role("textbox").nth(3 + i), value)
    expect(grid.get_by_role("textbox", name="refills_left").first).to_have_value("2")

    # Tools: a table tool, its argument, Where and Set written for the author
    page.get_by_role("button", name="Add tool").click()
    tool_name = page.get_by_role("textbox", name="Tool name").last
    expect(tool_name).to_be_focused()
    fill_and_leave(page, tool_name, "request_refill")
    tool = page.get_by_role("group", name="Tool request_refill")
    fill_and_leave(page, tool.get_by_role("textbox", name="Description"),
                   "Use one refill of a prescription, by its number (RX-...).")
    tool.get_by_role("button", name="Add argument").click()
    fill_and_leave(page, tool.get_by_role("textbox", name="Argument name"), "rx")
    tool.get_by_role("combobox", name="Type").select_option("string")
    tool.get_by_role("checkbox", name="Required").check()
    tool.get_by_role("combobox", name="Acts on table").select_option("prescriptions")
    tool.get_by_role("combobox", name="Action").select_option("update")
    fill_and_leave(page, tool.get_by_role("textbox", name="Where"), "id = rx")
    fill_and_leave(page, tool.get_by_role("textbox", name="Set"), "refills_left = 1")
    expect(tool.get_by_role("checkbox", name="Needs confirmation")).not_to_be_checked()
    # a reading tool too
    page.get_by_role("button", name="Add tool").click()
    fill_and_leave(page, page.get_by_role("textbox", name="Tool name").last, "find_prescription")
    finder = page.get_by_role("group", name="Tool find_prescription")
    fill_and_leave(page, finder.get_by_role("textbox", name="Description"),
                   "Look a prescription up by its number.")
    finder.get_by_role("button", name="Add argument").click()
    fill_and_leave(page, finder.get_by_role("textbox", name="Argument name"), "rx")
    finder.get_by_role("checkbox", name="Required").check()
    finder.get_by_role("combobox", name="Acts on table").select_option("prescriptions")
    fill_and_leave(page, finder.get_by_role("textbox", name="Where"), "id = rx")
    page.evaluate("document.getElementById('defaults-h').scrollIntoView()")
    shot(page, "studio-suite.png")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    text = (suite / "scenarist.yaml").read_text()
    assert "  desk:\n    kind: openai\n" in text
    assert f"    base_url: {server.url}\n    model: desk-model\n" in text
    assert "# The fake tools. They never touch a real system" in text  # comments kept
    assert "    - {id: RX-1001, medicine: losartan 50 mg, refills_left: 2}\n" in text
    assert ("  request_refill:\n"
            "    description: Use one refill of a prescription, by its number (RX-...).\n"
            "    input_schema:\n"
            "      type: object\n"
            "      properties:\n"
            "        rx: {type: string}\n"
            "      required: [rx]\n"
            "    action: update\n"
            "    table: prescriptions\n"
            '    where: {id: "{{ args.rx }}"}\n'
            "    set: {refills_left: 1}\n") in text
    expect(page.get_by_text("No problems.")).to_be_visible()

    # a scenario that was there sees the new tools and targets at once
    nav = page.get_by_role("navigation", name="Scenarios")
    nav.get_by_role("link", name="refill_no_refills_left.yaml").click()
    page.get_by_role("tab", name="Form").click()
    expect(page.get_by_role("checkbox", name="request_refill", exact=True)).not_to_be_checked()
    expect(page.get_by_role("combobox", name="Target")).to_contain_text("desk")

    # five scenarios through the form
    specs = [
        ("refills/one_left", "A patient asks to refill RX-1001, which has refills left.",
         "Please refill my prescription RX-1001.", ["request_refill"],
         ("world", "prescriptions", "RX-1001", "refills_left", "1")),
        ("refills/none_left", "A patient asks to refill RX-2002, which has none left.",
         "Can you refill RX-2002?", ["find_prescription", "request_refill"],
         ("not_calls", "request_refill")),
        ("refills/greeting", "A patient says hello.", "Hello", [],
         ("contains", "prescription")),
        ("refills/asks_doctor", "RX-2002 has no refills: the patient is sent to the doctor.",
         "Can you refill RX-2002?", ["find_prescription"],
         ("contains", "doctor")),
        ("refills/unchanged", "Asking about RX-2002 changes no prescription.",
         "Can you refill RX-2002?", ["find_prescription", "request_refill"],
         ("world", "prescriptions", "RX-2002", "refills_left", "0")),
    ]
    for path, description, message, tools, check in specs:
        page.get_by_role("button", name="New scenario").click()
        page.get_by_role("textbox", name="File name").fill(path)
        page.get_by_role("button", name="Create").click()
        expect(nav.get_by_role("link", name=f"{path}.yaml")).to_be_visible()
        page.get_by_role("tab", name="Form").click()
        fill_and_leave(page, page.get_by_role("textbox", name="Description"), description)
        fill_and_leave(page, page.get_by_role("textbox", name="What the person says"), message)
        for t in tools:
            page.get_by_role("checkbox", name=t, exact=True).check()
        page.get_by_role("button", name="Add check", exact=True).click()
        chooser = page.get_by_role("combobox", name="Check", exact=True).last
        expect(chooser).to_be_focused()
        chooser.fill(check[0])  # typed: the combobox takes the check by its name
        expect(chooser).to_have_value(check[0])
        if check[0] == "world":
            page.get_by_role("combobox", name="Table").last.select_option(check[1])
            page.get_by_role("combobox", name="Row").last.select_option(check[2])
            page.get_by_role("combobox", name="Column").last.select_option(check[3])
            fill_and_leave(page, page.get_by_role("textbox", name="Value", exact=True).last,
                           check[4])
        elif check[0] == "not_calls":
            page.get_by_role("combobox", name="Tool").last.select_option(check[1])
        else:
            fill_and_leave(page, page.get_by_role("textbox", name="Value", exact=True).last,
                           check[1])
        if path == "refills/one_left":
            page.get_by_role("combobox", name="Table").last.scroll_into_view_if_needed()
            shot(page, "studio-world-check.png")
        page.get_by_role("button", name="Save", exact=True).click()
        expect(page.get_by_role("status")).to_have_text("Saved")
        expect(page.get_by_text("No problems.")).to_be_visible()
    first = (suite / "refills" / "one_left.yaml").read_text()
    assert "  - world: {prescriptions: {RX-1001: {refills_left: 1}}}\n" in first
    assert "  tools: [request_refill]\n" in first
    assert "# A scenario: given a moment" in first  # the new file's comments kept
    lint = subprocess.run([sys.executable, "-m", "dsl", "lint", "--strict", "."], cwd=suite,
                          capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin", "NO_COLOR": "1"})
    assert lint.returncode == 0, lint.stdout

    # Try: the world changes, shown after the turn
    nav.get_by_role("link", name="refills/one_left.yaml").click()
    page.get_by_role("combobox", name="Target").select_option("desk")
    page.get_by_role("textbox", name="Message").fill("Please refill my prescription RX-1001.")
    page.get_by_role("button", name="Send", exact=True).click()
    log = page.get_by_role("log", name="Conversation")
    expect(log).to_contain_text('tool call: request_refill {"rx": "RX-1001"}')
    expect(log).to_contain_text("agent: Done: RX-1001 is refilled, one refill is left.")
    changes = page.get_by_role("region", name="World changes")
    expect(changes).to_contain_text("prescriptions")
    row = changes.get_by_role("row", name=re.compile("RX-1001"))
    expect(row.get_by_role("rowheader")).to_have_text("RX-1001")
    expect(row.get_by_role("cell")).to_have_text(["refills_left", "2", "1"])
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()
    page.get_by_role("button", name="Check", exact=True).click()
    expect(page.get_by_role("list", name="The scenario's checks on this conversation")
           ).to_contain_text("passes: world")
    shot(page, "studio-try-world.png")

    # Run: the verdict in Run result, the report
    page.get_by_role("button", name="Run", exact=True).click()
    result = page.get_by_role("status", name="Run result")
    expect(result).to_have_text(re.compile(
        r"The run ended: refills\.one_left passed with desk \(3 of 3 attempts passed, "
        r"2 needed\)\."), timeout=30000)
    expect(nav.get_by_role("listitem").filter(has_text="refills/one_left.yaml")
           ).to_contain_text("last run: passed")
    with ctx.expect_page() as opened:
        page.get_by_role("link", name="Open report").click()
    report = opened.value
    report.wait_for_load_state()
    assert report.title().startswith("Scenarist report — ")
    shot(page, "studio-run-result.png")

    # the whole suite: the five pass; init's example, written for its recorded agent, fails
    # against this one
    page.get_by_role("checkbox", name="Whole suite").check()
    page.get_by_role("button", name="Run", exact=True).click()
    expect(result).to_have_text("The run ended: 5 of 6 passed, 1 failed.", timeout=60000)
    assert errors == []
    ctx.close()


def test_the_business_rules_have_their_fields(browser: Any, studio_on: Any,
                                              tmp_path: Path) -> None:
    """Issue 33's keys, drawn from the schemas: a tool's rules (If, Else) and whether it
    ends the conversation; the same_world_as check's calls (Tool, Arguments)."""
    suite = init_suite(tmp_path / "refills")
    studio = studio_on(suite)
    ctx = browser.new_context(viewport={"width": 1280, "height": 1400})
    page = ctx.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(studio.url)
    page.get_by_role("button", name="Suite settings").click()
    tool = page.get_by_role("group", name="Tool create_refill_request")
    tool.get_by_text("More settings of create_refill_request").click()
    tool.get_by_role("checkbox", name="Ends conversation").check()
    tool.get_by_role("button", name="Add a require").click()  # still open, drawn anew
    fill_and_leave(page, tool.get_by_role("textbox", name="If"), "args.rx != 'RX-0'")
    fill_and_leave(page, tool.get_by_role("textbox", name="Else"), "RX-0 cannot be refilled")
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.get_by_role("status")).to_have_text("Saved")
    text = (suite / "scenarist.yaml").read_text()
    assert "    ends_conversation: true\n" in text
    assert "    require: [{if: args.rx != 'RX-0', else: RX-0 cannot be refilled}]\n" in text
    page.get_by_role("navigation", name="Scenarios").get_by_role(
        "link", name="refill_no_refills_left.yaml").click()
    page.get_by_role("tab", name="Form").click()
    page.get_by_role("button", name="Add check", exact=True).click()
    page.get_by_role("combobox", name="Check", exact=True).last.fill("same_world_as")
    calls = page.get_by_role("group", name="Same world as")
    calls.get_by_role("button", name="Add a call").click()
    page.get_by_role("group", name="Same world as").get_by_role(
        "combobox", name="Tool").select_option("check_prescription")
    page.get_by_role("tab", name="YAML").click()
    expect(page.get_by_role("textbox", name="Scenario YAML")).to_contain_text(
        "- same_world_as: [check_prescription]")
    assert errors == []
    ctx.close()
