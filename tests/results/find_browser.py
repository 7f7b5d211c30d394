"""Where the report's browser tests find Chromium, and what they do without one.

On a fresh machine without a browser the README's test command must still pass: the
browser tests (marked ``browser``) are skipped, and the run ends with one line that says
so and how to install one. CI sets ``SCENARIST_REQUIRE_BROWSER=1`` (.ci/run), and there a
missing browser *fails* them, so the report is always opened in a real browser before
anything merges.

A browser is, in order: the executable ``SCENARIST_CHROMIUM`` names (only it, when it is
set), Debian's ``/usr/bin/chromium``, or ``chromium``, ``chromium-browser``,
``google-chrome`` or ``google-chrome-stable`` on ``PATH``; driven by Playwright's Python
package (its own browser download is not needed).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

REQUIRE = "SCENARIST_REQUIRE_BROWSER"
CHOSEN = "SCENARIST_CHROMIUM"
DEBIAN = "/usr/bin/chromium"
ON_PATH = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
HOW = ("install Chromium (Debian/Ubuntu: sudo apt-get install chromium; macOS: brew install "
       "--cask chromium) or set SCENARIST_CHROMIUM to a Chromium or Chrome executable")


@dataclass(frozen=True, slots=True)
class Verdict:
    """What the browser tests do: run with ``executable``, or skip / fail with ``message``."""

    executable: str | None
    message: str = ""
    fail: bool = False


def find_browser(env: Mapping[str, str], *, has_playwright: bool,
                 which: Callable[[str], str | None] = shutil.which,
                 is_file: Callable[[str], bool] = lambda p: Path(p).is_file()) -> Verdict:
    """The rule, with the world passed in (the environment, whether Playwright imports,
    how to look up PATH and files) so that it can be tested on its own."""
    required = env.get(REQUIRE, "") not in ("", "0")
    chosen = env.get(CHOSEN)
    if chosen:
        found = chosen if is_file(chosen) else None
        where = f"{CHOSEN}={chosen} does not exist"
    else:
        found = DEBIAN if is_file(DEBIAN) else next(
            (p for p in map(which, ON_PATH) if p), None)
        where = f"no Chromium at {DEBIAN} or on PATH ({', '.join(ON_PATH)})"
    if found is not None and has_playwright:
        return Verdict(found)
    if found is None:
        message = f"{where}; {HOW}"
    else:
        message = ("Playwright's Python package is missing: pip install playwright (its own "
                   "browser download is not needed)")
    if required:
        message = f"the report's browser tests need a browser: {message} ({REQUIRE} is set)"
    return Verdict(None, message, fail=required)


def skipped_line(count: int, verdict: Verdict) -> str:
    """The one line a test run without a browser ends with."""
    return f"skipped {count} browser test{'s' if count != 1 else ''}: {verdict.message}"


def playwright_installed() -> bool:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return False
    return True


def browser_here() -> Verdict:
    return find_browser(os.environ, has_playwright=playwright_installed())
