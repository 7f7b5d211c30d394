"""Fixtures for the report tests: run folders built from records, and a real headless
Chromium (Debian's /usr/bin/chromium, or one on PATH, driven by Playwright's Python package).

Without a browser the browser tests skip with one line that says how to install one, so
the README's test command passes on a fresh machine; CI sets SCENARIST_REQUIRE_BROWSER=1
and there they fail instead (find_browser.py has the rule).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.results.find_browser import Verdict, browser_here, skipped_line
from tests.results.report_builders import CHROMIUM_ARGS, demo_run, regenerate

_SKIPPED = pytest.StashKey[tuple[int, Verdict]]()


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Without a browser (and without SCENARIST_REQUIRE_BROWSER), the browser tests are
    left out and the run ends with one line saying so (pytest_terminal_summary)."""
    wanted = [i for i in items if i.get_closest_marker("browser") is not None]
    if not wanted:
        return
    found = browser_here()
    if found.executable is not None or found.fail:
        return  # they run; the browser fixture fails them when the browser is required
    config.hook.pytest_deselected(items=wanted)
    left_out = set(wanted)
    items[:] = [i for i in items if i not in left_out]
    config.stash[_SKIPPED] = (len(wanted), found)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    skipped = config.stash.get(_SKIPPED, None)
    if skipped is not None:
        terminalreporter.write_line(skipped_line(*skipped), yellow=True)


@pytest.fixture
def demo_dir(tmp_path: Path) -> Path:
    return demo_run(tmp_path / "run")


@pytest.fixture
def demo_report(demo_dir: Path) -> Path:
    return regenerate(demo_dir)[0]


@pytest.fixture(scope="module")  # a live Playwright loop blocks asyncio.run in later modules
def browser() -> Iterator[Any]:
    found = browser_here()
    if found.executable is None:
        if found.fail:
            pytest.fail(found.message, pytrace=False)
        pytest.skip(found.message)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=found.executable, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


class PageWatch:
    """What a page did that it should not: script errors, console errors (a CSP violation
    is one), network requests other than the report file itself, dialogs."""

    def __init__(self, page: Any, allowed_url: str | None = None) -> None:
        self.errors: list[str] = []
        self.console: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        page.on("pageerror", lambda e: self.errors.append(str(e)))
        page.on("console", lambda m: self.console.append(m.text) if m.type == "error" else None)
        page.on("request", lambda r: self.requests.append(r.url))

        def on_dialog(d: Any) -> None:
            self.dialogs.append(d.message)
            d.dismiss()

        page.on("dialog", on_dialog)

    def foreign_requests(self, report_url: str) -> list[str]:
        return [u for u in self.requests if u != report_url]


@pytest.fixture
def new_page(browser: Any) -> Iterator[Any]:
    """``new_page(**context_options) -> (page, watch)``; contexts are closed afterwards."""
    contexts: list[Any] = []

    def make(**options: Any) -> tuple[Any, PageWatch]:
        options.setdefault("viewport", {"width": 1280, "height": 900})
        ctx = browser.new_context(**options)
        contexts.append(ctx)
        page = ctx.new_page()
        return page, PageWatch(page)

    yield make
    for ctx in contexts:
        ctx.close()
