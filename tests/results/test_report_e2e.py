"""End to end: a real ``scenarist run`` of the demo suite against tests/fakeserver.py (its
own process, on 127.0.0.1) writes the report and the CI outputs; ``--format github``,
``--baseline``, ``--quiet`` and ``scenarist report`` work from the command line; the
report of that run opens in Chromium and shows what the server answered."""

from __future__ import annotations

import json
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.results.report_builders import demo_suite, fake_server, scenarist


@dataclass
class RealRun:
    suite: Path
    first: Path
    second: Path
    out1: str
    out2: str
    code1: int
    code2: int
    step_summary: Path


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> RealRun:
    tmp = tmp_path_factory.mktemp("e2e")
    step = tmp / "step-summary.md"
    with fake_server() as port:
        suite = demo_suite(tmp / "suite", port)
        p1 = scenarist("run", ".", "--out", str(tmp / "runs1"), "--format", "github",
                       "--no-early-stop",
                       cwd=suite, env={"GITHUB_STEP_SUMMARY": str(step)})
        first = next((tmp / "runs1").iterdir())
        p2 = scenarist("run", ".", "--out", str(tmp / "runs2"), "--baseline", str(first),
                       "--quiet", "--no-early-stop", cwd=suite)
        second = next((tmp / "runs2").iterdir())
    assert p1.stderr == ""
    return RealRun(suite, first, second, p1.stdout, p2.stdout, p1.returncode, p2.returncode,
                   step)


def test_the_run_prints_a_summary_and_github_annotations(real: RealRun) -> None:
    assert real.code1 == 1  # a scenario failed
    lines = real.out1.splitlines()
    assert "\x1b[" not in real.out1  # NO_COLOR
    assert re.match(r"FAIL  clinic\.book_cleaning +clinic-bot +3/5 +min 4 +60% \[23%–88%\]$",
                    lines[0])
    assert lines[1] == '      ✗ asks_to_confirm: "book_appointment"  (failed 2 of 5)'
    assert re.match(r"\?\?\?\?  clinic\.insurance +clinic-bot +0/0 +min 2 +–  3 errors "
                    r"\(status\)$", lines[2])
    assert lines[3] == (
        "      ! status ×3: The endpoint answered with an error (or sent Scenarist elsewhere) "
        "instead of a reply — a server that is overloaded, or set up wrong; it says nothing "
        "about the model, so it counts neither as a pass nor as a failure.")
    assert re.match(r"        the server said: HTTP 503 from http://127\.0\.0\.1:\d+/v1: "
                    r"'<html><body>Service Unavailable</body></html>' \(after 2 tries\)$",
                    lines[4])
    assert [line[:4] for line in lines[5:8]] == ["PASS"] * 3
    assert lines[9].startswith("3/5 passed · 1 failed · 1 inconclusive · 23 attempts · "
                               "3 endpoint errors · ")
    assert [line for line in lines if line.startswith("::")] == [
        "::error file=clinic/book_cleaning.yaml,line=1,title=Scenario clinic.book_cleaning "
        "failed on clinic-bot::3 of 5 attempts passed (60%25, 95%25 CI 23–88%25); min_pass is "
        "4 of 5. Failing checks: asks_to_confirm: \"book_appointment\" (failed 2 of 5).",
        "::warning file=clinic/insurance.yaml,line=1,title=Scenario clinic.insurance has no "
        "verdict on clinic-bot::No verdict: no attempt passed or failed; min_pass is 2 of 3. "
        "3 ended in endpoint errors (status ×3).",
    ]
    assert lines[-1] == f"Report: {real.first / 'report.html'}"


def test_the_run_folder_holds_the_report_and_the_ci_outputs(real: RealRun) -> None:
    names = sorted(p.name for p in real.first.iterdir())
    assert names == [".lock", "junit.xml", "plan.json", "report.html", "results.jsonl", "run.json",
                     "summary.json", "summary.md"]
    root = ET.parse(real.first / "junit.xml").getroot()
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("5", "1", "1")
    failure = root.find("testsuite/testcase[@name='clinic.book_cleaning']/failure")
    assert failure is not None
    assert failure.get("message") == (
        '3 of 5 attempts passed (60%, 95% CI 23–88%); min_pass is 4 of 5. Failing checks: '
        'asks_to_confirm: "book_appointment" (failed 2 of 5).')
    md = (real.first / "summary.md").read_text("utf-8")
    assert md.startswith("## Scenarist: 2 of 5 did not pass\n")
    assert real.step_summary.read_text("utf-8") == md + "\n"


def test_quiet_against_a_baseline(real: RealRun) -> None:
    assert real.code2 == 1
    lines = real.out2.splitlines()
    assert not any(line.startswith("PASS") for line in lines)
    assert not any(line.startswith("::") for line in lines)
    assert f"Against {real.first.name}: 1 inconclusive, 4 unchanged" in lines
    md = (real.second / "summary.md").read_text("utf-8")
    assert f"Against `{real.first.name}`: 4 unchanged · 1 inconclusive" in md


def test_report_regenerates_from_stored_results(real: RealRun, tmp_path: Path) -> None:
    out = tmp_path / "again.html"
    p = scenarist("report", str(real.second), "-o", str(out), "--baseline",
                  str(real.first / "summary.json"), cwd=tmp_path)
    assert (p.returncode, p.stdout, p.stderr) == (0, f"Report: {out}\n", "")
    html = out.read_text("utf-8")
    assert 'id="baseline"' in html
    # 4 unchanged: a badge in the table and in the detail of each, and one in the headline
    assert html.count('class="badge b-unchanged"') == 9


def test_report_says_what_is_wrong(tmp_path: Path) -> None:
    p = scenarist("report", str(tmp_path), cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr == f"error: {tmp_path}/plan.json does not exist; is {tmp_path} a run " \
        "folder?\n"
    p = scenarist("run", ".", "--baseline", str(tmp_path / "nope"), cwd=tmp_path)
    assert p.returncode == 2
    assert "'--baseline': Path" in p.stderr
    assert "does not exist" in p.stderr


@pytest.mark.browser
def test_the_report_of_a_real_run_shows_the_transcripts(real: RealRun, new_page: Any) -> None:
    page, watch = new_page()
    page.goto((real.first / "report.html").as_uri())
    assert page.locator("tbody.sc").count() == 5
    book = page.locator('tbody.sc[data-scenario="clinic.book_cleaning"]')
    book.locator("button.toggle").click()
    book.locator("details.attempt > summary").nth(1).click()  # run 2: booked without asking
    t = book.locator("details.attempt").nth(1).locator(".transcript")
    assert t.locator(".moment").inner_text() == (
        "The moment the model saw: Tuesday 29 September 2026, 10:00 (UTC-03:00)")
    assert t.locator(".m-user .text").inner_text() == (
        "Quiero una limpieza el martes 6 de octubre a las 15:00")
    assert t.locator(".m-tool pre").inner_text() == (
        '{\n  "date": "2026-10-06",\n  "free": [\n    "10:30",\n    "15:00",\n    "16:30"\n'
        '  ]\n}')
    assert t.locator(".m-answer .text").inner_text() == (
        "Listo, te reservé una limpieza el martes 6 a las 15:00.")
    assert t.locator("ul.check-list > li").nth(1).inner_text().startswith(
        'fail asks_to_confirm: "book_appointment" — ')
    book.locator("details.attempt > summary").first.click()  # run 1: asked to confirm
    first = book.locator("details.attempt").first.locator(".transcript")
    # the words beside the held call are the attempt's answer (issue 25, item 6)
    assert first.locator(".m-answer .text").inner_text() == (
        "Hay lugar el martes 6 a las 15:00. ¿Confirmo el turno?")
    assert "pending confirmation: not run" in first.locator(".m-call.pending").inner_text()
    insurance = page.locator('tbody.sc[data-scenario="clinic.insurance"]')
    insurance.locator("button.toggle").click()
    insurance.locator("details.attempt > summary").first.click()
    error = insurance.locator(".m-error").inner_text()
    assert error.startswith("ENDPOINT ERROR\nstatus (HTTP 503)\n")
    assert watch.errors == []
    assert watch.console == []
    assert watch.foreign_requests(page.url) == []


# ---- a model that answers with hostile text, through a real run -------------------------

HOSTILE_ANSWER = ("<script>alert(1)</script></script><img src=x onerror=alert(2)> "
                  "half a pair \ud83d, bell \x07, <a href='javascript:alert(3)'>x</a>")


def hostile_script(tmp: Path) -> Path:
    final = {"id": "x", "object": "chat.completion", "model": "m",
             "choices": [{"index": 0, "finish_reason": "stop",
                          "message": {"role": "assistant", "content": HOSTILE_ANSWER}}],
             "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
    script = {"rules": [{"match": "hola", "replies": [
        {"tool_calls": [{"name": "lookup", "arguments": '{"q": "<svg onload=alert(4)>"'},
                        {"name": "lookup", "arguments": {"q": "<svg onload=alert(5)>"}}]},
        {"raw": json.dumps(final)}]}]}  # json.dumps keeps the lone surrogate as \\ud83d
    path = tmp / "script.json"
    path.write_text(json.dumps(script), "utf-8")
    return path


SUITE = """\
targets:
  t: {kind: openai, base_url: "http://127.0.0.1:PORT/v1", model: m, timeout_ms: 5000}
defaults: {runs: 2, min_pass_rate: 1.0}
tools:
  lookup: {description: Look something up., returns: "<iframe src=https://example.com>"}
"""
SCENARIO = """\
given:
  at: 2026-09-29T10:00:00-03:00
  tools: [lookup]
when: "hola"
then:
  - non_empty
"""


@pytest.mark.browser
def test_hostile_replies_through_a_real_run_stay_text(tmp_path: Path, new_page: Any) -> None:
    suite = tmp_path / "suite"
    suite.mkdir()
    with fake_server(hostile_script(tmp_path)) as port:
        (suite / "scenarist.yaml").write_text(SUITE.replace("PORT", str(port)), "utf-8")
        (suite / "hostile.yaml").write_text(SCENARIO, "utf-8")
        p = scenarist("run", ".", "--out", str(tmp_path / "runs"), cwd=suite)
    assert p.returncode == 0, p.stdout + p.stderr
    run = next((tmp_path / "runs").iterdir())
    html = (run / "report.html").read_text("utf-8")
    assert "<script>alert" not in html
    assert "<img" not in html
    page, watch = new_page()
    page.add_init_script("window.__canary = 'intact';")
    page.goto((run / "report.html").as_uri())
    page.click("button.toggle")
    page.click("details.attempt > summary >> nth=0")
    answer = page.locator(".m-answer .text").inner_text()
    assert answer == ("<script>alert(1)</script></script><img src=x onerror=alert(2)> "
                      "half a pair \\ud83d, bell \\x07, <a href='javascript:alert(3)'>x</a>")
    calls = page.locator(".m-call pre.args")
    assert calls.all_inner_texts() == ['{"q": "<svg onload=alert(4)>"',
                                       '{\n  "q": "<svg onload=alert(5)>"\n}']
    results = page.locator(".m-tool .text")
    assert results.nth(0).inner_text().startswith("error: the arguments are not valid JSON")
    assert results.nth(1).inner_text() == "<iframe src=https://example.com>"
    assert page.evaluate("window.__canary") == "intact"
    assert watch.dialogs == []
    assert watch.errors == []
    assert watch.foreign_requests(page.url) == []
