"""Make docs/img/report.png from a real run's report.

    python bench/report_screenshot.py [--out docs/img/report.png]
    python bench/report_screenshot.py --examples [--out docs/img/report-examples.png]

Starts tests/fakeserver.py, runs the demo suite (tests/results/demo) with ``scenarist run``,
opens the run's report.html in Chromium (Debian's /usr/bin/chromium, via Playwright), opens
the failing scenario and one failed attempt, and takes the screenshot. ``--examples`` does
the same with the example suite (scenarios/) replayed from its recorded cassette: a real
model's answers.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "results")]

from report_builders import CHROMIUM_ARGS, demo_suite, fake_server, scenarist  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "img" / "report.png")
    ap.add_argument("--chromium", default="/usr/bin/chromium")
    ap.add_argument("--examples", action="store_true", help="the example suite, replayed")
    a = ap.parse_args()
    from playwright.sync_api import sync_playwright

    scenario, attempt_index = ("clinic.hours_today", 1) if a.examples else \
        ("clinic.book_cleaning", 1)
    if a.examples and a.out == ROOT / "docs" / "img" / "report.png":
        a.out = ROOT / "docs" / "img" / "report-examples.png"
    with tempfile.TemporaryDirectory() as tmp, fake_server() as port:
        if a.examples:
            run = scenarist("run", str(ROOT / "scenarios"), "--no-early-stop", "--out",
                            str(Path(tmp) / "runs"), cwd=ROOT)
        else:
            suite = demo_suite(Path(tmp) / "suite", port)
            run = scenarist("run", ".", "--out", str(Path(tmp) / "runs"), cwd=suite)
        print(run.stdout, end="")
        report = next((Path(tmp) / "runs").iterdir()) / "report.html"
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=a.chromium, args=CHROMIUM_ARGS)
            page = browser.new_page(viewport={"width": 1280, "height": 900},
                                    device_scale_factor=1)
            page.goto(report.as_uri())
            book = page.locator(f'tbody.sc[data-scenario="{scenario}"]')
            book.locator("button.toggle").click()
            book.locator("details.attempt > summary").nth(attempt_index).click()
            attempt = book.locator("details.attempt").nth(attempt_index)
            attempt.locator(".transcript ul.check-list").wait_for()  # drawn on the toggle
            page.evaluate("window.scrollTo(0, 0)")  # boxes are measured from the viewport
            box = attempt.bounding_box()
            assert box is not None
            a.out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(a.out), full_page=True,
                            clip={"x": 0, "y": 0, "width": 1280,
                                  "height": box["y"] + box["height"] + 16})
            browser.close()
    print(f"wrote {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
