"""Fixtures for the report tests: run folders built from records, and a real headless
Chromium (Debian's /usr/bin/chromium, driven by Playwright's Python package).

Browser tests never skip: when Chromium or Playwright is missing they fail and say how to
install it, because a report that was never opened in a browser is not tested.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from report_builders import CHROMIUM_ARGS, demo_run

from dsl.report import regenerate

CHROMIUM = Path(os.environ.get("SCENARIST_CHROMIUM", "/usr/bin/chromium"))


@pytest.fixture
def demo_dir(tmp_path: Path) -> Path:
    return demo_run(tmp_path / "run")


@pytest.fixture
def demo_report(demo_dir: Path) -> Path:
    return regenerate(demo_dir)[0]


@pytest.fixture(scope="module")  # a live Playwright loop blocks asyncio.run in later modules
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        pytest.fail(f"{CHROMIUM} is missing: the report's browser tests need Chromium "
                    "(apt-get install -y chromium)", pytrace=False)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("the report's browser tests need Playwright's Python package "
                    "(pip install playwright; its own browser download is not needed)",
                    pytrace=False)
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
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
