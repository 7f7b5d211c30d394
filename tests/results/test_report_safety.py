"""Hostile model output stays text in the written file: no markup from a run anywhere, the
embedded JSON escapes <, > and &, and the only script is ours (pinned by its hash).

The browser half of this proof (no dialog, the canary untouched, the text visible) is in
test_report_browser.py."""

from __future__ import annotations

import base64
import hashlib
import json
import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from dsl.results.report import MAX_TEXT, script_json
from tests.results.report_builders import CONTROL, HOSTILE, HUGE, XSS, hostile_run, regenerate

# Every tag and attribute the report's own template and script write; anything else in the
# file would have come from a run.
TAGS = {"html", "head", "meta", "title", "style", "noscript", "body", "a", "div", "header",
        "h1", "h2", "h3", "h4", "p", "span", "code", "strong", "main", "section", "dl", "dt",
        "dd", "small", "details", "summary", "ul", "li", "form", "label", "select", "option",
        "input", "output", "table", "caption", "thead", "tbody", "tr", "th", "td", "footer",
        "script", "button"}


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []
        self.scripts: list[str] = []
        self._in_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))
        self._in_script = tag == "script"

    def handle_endtag(self, tag: str) -> None:
        self._in_script = False

    def handle_data(self, data: str) -> None:
        if self._in_script:
            self.scripts.append(data)


@pytest.fixture(scope="module")
def hostile_html(tmp_path_factory: pytest.TempPathFactory) -> str:
    run = hostile_run(tmp_path_factory.mktemp("hostile") / "run")
    return regenerate(run)[0].read_text("utf-8")


def blobs(html: str) -> list[str]:
    """The JSON data, one blob per scenario row, in row order."""
    found = re.findall(r'<script type="application/json" id="attempts-(\d+)">(.*?)</script>',
                       html, re.S)
    assert [int(i) for i, _ in found] == list(range(len(found)))
    return [b for _, b in found]


def test_no_hostile_markup_anywhere_in_the_file(hostile_html: str) -> None:
    lower = hostile_html.lower()
    assert "<script>alert" not in lower
    assert "<img" not in lower
    assert "<svg" not in lower
    assert "<iframe" not in lower
    assert "<b>" not in lower
    assert "<!--" not in lower
    assert "javascript:" not in lower.replace("javascript:alert(4)", "")  # only as text...
    for text in XSS:
        if "<" in text:
            assert text not in hostile_html, text
    # ...and never inside an attribute that could follow it
    assert not re.search(r"""href\s*=\s*["']?\s*javascript:""", lower)
    assert lower.count("<script") == 3  # the data of the two rows, and our script
    assert lower.count("</script") == 3
    assert lower.count("<style") == 2  # ours, and the one for readers without JavaScript


def test_only_our_own_tags_and_no_event_handlers(hostile_html: str) -> None:
    parser = Tags()
    parser.feed(hostile_html)
    assert {t for t, _ in parser.tags} <= TAGS
    for tag, attrs in parser.tags:
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name, value)
            if name in ("href", "src", "action"):
                assert (value or "").startswith("#"), (tag, name, value)


def test_the_embedded_data_escapes_markup_and_reads_back(hostile_html: str) -> None:
    raw = blobs(hostile_html)[0]
    for ch in "<>&\u2028\u2029":
        assert ch not in raw
    assert "\\u003c/script\\u003e\\u003cscript\\u003ewindow.__canary" in raw
    data = json.loads(raw)
    texts = data["strings"]
    assert any(HOSTILE in t for t in texts)  # the text is all there, as text
    answer = next(t for t in texts if t.startswith(HOSTILE + "A"))
    assert len(answer) < MAX_TEXT + 200  # 2,000,000 characters were cut...
    assert answer.endswith(f"[… cut here by the report: {len(HOSTILE) + HUGE:,} characters "
                           "in all. The full text is in results.jsonl.]")  # ...and it says so
    assert len(hostile_html) < 1_000_000


def test_control_characters_never_reach_the_markup(hostile_html: str) -> None:
    assert not re.search("[\x00-\x08\x0b\x0c\x0e-\x1f]", hostile_html)
    outside = hostile_html
    for b in blobs(hostile_html):
        outside = outside.replace(b, "")
    assert "\x7f" not in outside
    assert "\u202e" not in outside
    assert "nul\\x00 esc\\x1b[31mred" in outside  # shown escaped in the server-rendered text
    assert "\\u202eoverride\\u202c" in outside


def test_the_csp_allows_exactly_our_script(hostile_html: str) -> None:
    parser = Tags()
    parser.feed(hostile_html)
    meta = [dict(a) for t, a in parser.tags if t == "meta" and
            dict(a).get("http-equiv") == "Content-Security-Policy"]
    assert len(meta) == 1
    csp = str(meta[0]["content"])
    ours = parser.scripts[-1]
    digest = base64.b64encode(hashlib.sha256(ours.encode("utf-8")).digest()).decode()
    assert csp == (f"default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
                   f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'")
    code = re.sub(r"/\*.*?\*/", "", ours, flags=re.S)  # what runs, not what comments say
    for sink in (r"\.innerHTML", r"\.outerHTML", r"insertAdjacentHTML", r"document\.write",
                 r"\beval\(", r"new Function", r"\.href\s*=",
                 r"setAttribute\(\s*[\"'](on|href|src)"):
        assert not re.search(sink, code), sink
    # The one URL the script sets: an attached image's data: URL, checked first (a base64
    # PNG, JPEG or WebP); the CSP allows no other image source.
    assert re.findall(r"\w+\.src\s*=.*", code) == ["img.src = url;"]
    assert "if (IMAGE_URL.test(url)) {" in code
    assert r"var IMAGE_URL = /^data:image\/(png|jpeg|webp);base64,[A-Za-z0-9+\/]+={0,2}$/;" in code


@pytest.mark.parametrize("text", [*XSS, CONTROL, "\ud800 lone surrogate", "\u2028\u2029"])
def test_script_json_round_trips_and_stays_inert(text: str) -> None:
    out = script_json({"t": text})
    assert not set(out) & set("<>&\u2028\u2029")
    assert json.loads(out) == {"t": text}


def test_a_lone_surrogate_does_not_stop_the_report(tmp_path: Path) -> None:
    from tests.results.report_builders import passing, scenario, write_run

    run = write_run(tmp_path / "run", [scenario("s", runs=1, min_pass=1)],
                    [passing("s", 1, answer="half a pair: \ud83d!")])
    html = regenerate(run)[0].read_text("utf-8")
    assert json.loads(blobs(html)[0])["strings"].count("half a pair: \ud83d!") == 1
