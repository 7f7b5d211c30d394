"""The browser-skip rule (find_browser.py): without a browser the browser tests are skipped
with one line that says how to install one; with SCENARIST_REQUIRE_BROWSER set (as .ci/run
sets it) a missing browser fails them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.results.find_browser import HOW, Verdict, find_browser, skipped_line

HERE = Path(__file__).parent
ROOT = HERE.parents[1]

NOTHING = {"which": lambda name: None, "is_file": lambda path: False}


def test_the_rule_alone() -> None:
    assert find_browser({}, has_playwright=True, which=lambda n: None,
                        is_file=lambda p: p == "/usr/bin/chromium") == Verdict("/usr/bin/chromium")
    on_path = find_browser({}, has_playwright=True, is_file=lambda p: False,
                           which=lambda n: "/opt/bin/chromium-browser"
                           if n == "chromium-browser" else None)
    assert on_path == Verdict("/opt/bin/chromium-browser")
    # the one named is the only one looked at
    named = find_browser({"SCENARIST_CHROMIUM": "/x/chrome"}, has_playwright=True,
                         which=lambda n: "/usr/bin/chromium", is_file=lambda p: False)
    assert named == Verdict(None, f"SCENARIST_CHROMIUM=/x/chrome does not exist; {HOW}")
    missing = find_browser({}, has_playwright=True, **NOTHING)  # type: ignore[arg-type]
    assert missing == Verdict(None, "no Chromium at /usr/bin/chromium or on PATH (chromium, "
                                    f"chromium-browser, google-chrome, google-chrome-stable); {HOW}")
    assert skipped_line(19, missing) == f"skipped 19 browser tests: {missing.message}"
    no_playwright = find_browser({}, has_playwright=False, which=lambda n: None,
                                 is_file=lambda p: True)
    assert no_playwright.message.startswith("Playwright's Python package is missing")


def test_required_turns_the_skip_into_a_failure() -> None:
    for value, fails in (("1", True), ("yes", True), ("0", False), ("", False)):
        v = find_browser({"SCENARIST_REQUIRE_BROWSER": value}, has_playwright=True,
                         **NOTHING)  # type: ignore[arg-type]
        assert v.fail is fails, value
    v = find_browser({"SCENARIST_REQUIRE_BROWSER": "1"}, has_playwright=True,
                     **NOTHING)  # type: ignore[arg-type]
    assert v.message.startswith("the report's browser tests need a browser: no Chromium at ")
    assert v.message.endswith("(SCENARIST_REQUIRE_BROWSER is set)")


def pytest_run(**env: str) -> subprocess.CompletedProcess[str]:
    """pytest on the browser tests (and one plain test, so that something runs), in a
    process whose environment has no browser."""
    full = {k: v for k, v in os.environ.items() if k != "SCENARIST_REQUIRE_BROWSER"}
    full.update(SCENARIST_CHROMIUM="/nonexistent/chromium", **env)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(HERE / "test_report_browser.py"),
         f"{HERE / 'test_browser_rule.py'}::test_the_rule_alone"],
        cwd=ROOT, env=full, capture_output=True, text=True, timeout=300)


def test_without_a_browser_the_run_passes_with_one_line() -> None:
    p = pytest_run()
    assert p.returncode == 0, p.stdout + p.stderr
    lines = p.stdout.splitlines()
    said = [line for line in lines if "browser" in line.lower()]
    assert len(said) == 1
    m = re.fullmatch(r"skipped (\d+) browser tests: (.*)", said[0])
    assert m is not None, said
    assert m.group(2) == f"SCENARIST_CHROMIUM=/nonexistent/chromium does not exist; {HOW}"
    assert int(m.group(1)) > 10  # every browser test of the module
    assert lines[-1].startswith(f"1 passed, {m.group(1)} deselected")


def test_with_the_ci_variable_a_missing_browser_fails() -> None:
    p = pytest_run(SCENARIST_REQUIRE_BROWSER="1")
    assert p.returncode == 1, p.stdout
    assert "(SCENARIST_REQUIRE_BROWSER is set)" in p.stdout
    assert re.match(r"1 passed, \d+ errors", p.stdout.splitlines()[-1])
