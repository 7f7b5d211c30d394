"""The studio's server over HTTP, as a real process: the token, the Host and Origin rules,
paths outside the suite refused, the page served from the package alone, lint of an
unsaved text, the form's edits, saving (and refusing to overwrite a file changed on
disk), new scenarios, a run's server-sent events, Ctrl-C — and the command without its
extra."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO, FakeServer, suite_yaml, write

from .conftest import SCRIPT, Studio, make_suite

JSON = {"Content-Type": "application/json"}


@pytest.fixture
def running(studio_on: Any, tmp_path: Path) -> Studio:
    return studio_on(make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1"))


def test_the_first_line_is_the_address_with_a_new_token_each_start(
        studio_on: Any, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    one, two = studio_on(suite), studio_on(suite)
    assert one.url.startswith("http://127.0.0.1:")
    assert "/?token=" in one.url
    assert one.token != two.token
    assert len(one.token) >= 40
    assert one.port != two.port


NO_ENTRY = {"error": "open the studio with the address it printed when it started (the "
                     "one with ?token=)."}


def test_every_request_needs_the_token(running: Studio) -> None:
    for path in ("/", "/api/suite", "/static/studio.js", "/api/file?path=hours.yaml"):
        r = httpx.get(running.base + path)
        assert r.status_code == 403, path
        assert r.json() == NO_ENTRY
    assert httpx.get(running.base + "/?token=wrong").status_code == 403
    assert httpx.get(running.base + "/api/suite", headers={"X-Scenarist-Token": "wrong"}
                     ).status_code == 403


def test_the_code_is_traded_once_for_a_key_the_page_sends_in_a_header(running: Studio) -> None:
    page = httpx.get(running.url)
    assert page.status_code == 200
    assert "<title>Scenarist Studio</title>" in page.text
    assert "set-cookie" not in page.headers  # nothing a page on another port could read
    assert page.headers["referrer-policy"] == "no-referrer"
    assert "script-src 'self'" in page.headers["content-security-policy"]
    traded = httpx.post(running.base + "/api/session", json={"code": running.token})
    assert traded.status_code == 200
    assert "set-cookie" not in traded.headers
    key, ticket = traded.json()["token"], traded.json()["ticket"]
    assert key not in (running.token, ticket)
    again = httpx.post(running.base + "/api/session", json={"code": running.token})
    assert again.status_code == 403
    assert again.json() == {"error": "this address was used already: go on in the page you "
                                     "opened with it, or restart scenarist studio for a "
                                     "new one"}
    # the key opens the API; the ticket and the used code open only the page
    assert httpx.get(running.base + "/api/suite",
                     headers={"X-Scenarist-Token": key}).status_code == 200
    assert httpx.get(f"{running.base}/?s={ticket}").status_code == 200
    assert httpx.get(f"{running.base}/static/studio.js?s={ticket}").status_code == 200
    assert httpx.get(running.url).status_code == 200
    for query in (f"?s={ticket}", f"?token={running.token}"):
        assert httpx.get(f"{running.base}/api/suite{query}").status_code == 403


def test_a_foreign_host_is_refused_even_with_the_token(running: Studio) -> None:
    for host in ("evil.example", f"evil.example:{running.port}", f"127.0.0.1:{running.port + 1}",
                 "127.0.0.1"):
        r = httpx.get(running.url, headers={"Host": host})
        assert r.status_code == 403, host
        assert "answers only at the address it printed" in r.json()["error"]
    r = httpx.get(running.url.replace("127.0.0.1", "localhost"))
    assert r.status_code == 200


def test_a_change_from_another_site_is_refused(running: Studio) -> None:
    body = {"path": "hours.yaml", "text": "x: 1\n"}
    with running.client() as c:
        for headers in ({"Origin": "http://evil.example"},
                        {"Origin": f"http://evil.example:{running.port}"},
                        {"Sec-Fetch-Site": "cross-site"}):
            r = c.post("/api/lint", json=body, headers=headers)
            assert r.status_code == 403, headers
            assert r.json() == {"error": "a change must come from the studio's own page."}
        # a form posted from elsewhere cannot send JSON
        r = c.post("/api/save", content=json.dumps(body),
                   headers={"Content-Type": "text/plain"})
        assert r.status_code == 403
        ok = c.post("/api/lint", json=body,
                    headers={"Origin": f"http://localhost:{running.port}"})
        assert ok.status_code == 200
    assert sorted(p.name for p in running.folder.iterdir()) == [
        "hours.yaml", "owner", "scenarist.yaml"]  # nothing above wrote anything


@pytest.mark.parametrize("path", ["../outside.yaml", "/etc/passwd", "sub/../../x.yaml",
                                  "link/escape.yaml", "hours.txt", ""])
def test_paths_outside_the_suite_are_refused(studio_on: Any, tmp_path: Path, path: str) -> None:
    suite = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    write(tmp_path / "outside.yaml", "secret: 1\n")
    (suite / "link").symlink_to(tmp_path, target_is_directory=True)
    write(tmp_path / "escape.yaml", "secret: 2\n")
    studio = studio_on(suite)
    with studio.client() as c:
        r = c.get("/api/file", params={"path": path})
        assert r.status_code in (400, 403), r.text
        assert "secret" not in r.text
        r = c.post("/api/save", json={"path": path, "text": "x: 1\n", "version": None})
        assert r.status_code in (400, 403)
        r = c.post("/api/lint", json={"path": path, "text": "x: 1\n"})
        assert r.status_code in (400, 403)
        r = c.get("/runs/%2e%2e/%2e%2e/outside.yaml")
        assert r.status_code == 403
        assert r.json() == {"error": "'../../outside.yaml' is outside the suite's runs folder"}
    assert (tmp_path / "outside.yaml").read_text() == "secret: 1\n"


def test_the_page_is_served_from_the_package_and_names_nothing_elsewhere(
        running: Studio) -> None:
    with running.client() as c:
        page = c.get("/").text
        js = c.get("/static/studio.js")
        css = c.get("/static/studio.css")
        notices = c.get("/static/studio.js.LICENSES.txt")
    assert js.headers["content-type"] == "text/javascript; charset=utf-8"
    assert js.text.startswith("/*! Scenarist Studio ")
    assert "@codemirror/view" in notices.text
    assert "MIT" in notices.text
    for text in (page, css.text):
        assert "https://" not in text
        assert "http://" not in text
    assert 'src="/static/studio.js' in page


def test_browse_lists_the_suites_scenarios_as_run_and_lint_find_them(
        studio_on: Any, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    text = (suite / "scenarist.yaml").read_text()
    (suite / "scenarist.yaml").write_text(text[:-2] + ',\n  "exclude": ["drafts/**"]\n}\n')
    write(suite / "drafts" / "wip.yaml", "id: wip\n")
    write(suite / "runs" / "old.yaml", "id: old\n")
    write(suite / "other" / "scenarist.yaml", "targets: {}\n")
    write(suite / "other" / "theirs.yaml", "id: theirs\n")
    write(tmp_path / "elsewhere.yaml", "id: elsewhere\n")
    (suite / "linked.yaml").symlink_to(tmp_path / "elsewhere.yaml")
    studio = studio_on(suite)
    with studio.client() as c:
        got = c.get("/api/suite").json()
    assert [f["path"] for f in got["files"]] == ["hours.yaml", "owner/close.yaml"]
    assert got["targets"] == ["fake"]
    assert {t["name"] for t in got["tools"]} == {"list_business_hours", "set_business_hours",
                                                 "book_appointment"}
    assert "contains" in {c["name"] for c in got["checks"]}
    assert not (suite / ".scenarist").exists()  # looking wrote nothing


def test_lint_of_an_unsaved_text_uses_the_files_suite_and_terminal_words(
        running: Studio) -> None:
    text = ("given:\n  at: 2026-09-29T10:00:00-03:00\n  tools: [list_business_hour]\n"
            "when: hola\nthen:\n  - contians: x\n")
    with running.client() as c:
        r = c.post("/api/lint", json={"path": "owner/new.yaml", "text": text}).json()
    assert [p["text"] for p in r["problems"]] == [
        "3:11 E201 there is no tool 'list_business_hour' in the suite's tool library "
        "(scenarist.yaml); did you mean 'list_business_hours'?",
        "6:5 S101 unknown check 'contians'; did you mean 'contains'?",
    ]
    assert r["elsewhere"] == []
    assert not (running.folder / "owner" / "new.yaml").exists()


def test_the_form_edits_the_text_and_keeps_its_comments(running: Studio) -> None:
    with running.client() as c:
        text = c.get("/api/file", params={"path": "hours.yaml"}).json()["text"]
        r = c.post("/api/form", json={"path": "hours.yaml", "text": text, "edits": [
            {"op": "add_check", "list": None, "check": "not_contains"},
            {"op": "check_value", "list": None, "index": 2, "value": "cerrado"},
        ]}).json()
        bad = c.post("/api/form", json={"path": "hours.yaml", "text": "a: [\n", "edits": []})
    assert r["text"] == text + '  - not_contains: "cerrado"\n'
    assert r["problems"] == []
    assert r["form"]["checks"][2] == {"check": "not_contains", "takes": "text",
                                      "value": "cerrado", "yaml": "", "always": False,
                                      "name": "", "shape": "fields",
                                      "values": {"text": "cerrado"}, "world": []}
    assert bad.status_code == 400
    assert bad.json()["error"] == (
        "The form needs YAML it can read; fix this in the YAML tab first: 2:1 Y101 invalid "
        "YAML: expected the node content, but found '<stream end>' (while parsing a flow "
        "node at line 2, column 1) (hint: check the quotes and the indentation near this "
        "place)")


def test_save_is_atomic_and_never_overwrites_a_file_changed_on_disk(
        studio_on: Any, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    studio = studio_on(suite)
    with studio.client() as c:
        opened = c.get("/api/file", params={"path": "hours.yaml"}).json()
        first = c.post("/api/save", json={"path": "hours.yaml", "text": "# mine\n",
                                          "version": opened["version"]})
        assert first.status_code == 200
        assert (suite / "hours.yaml").read_text() == "# mine\n"
        (suite / "hours.yaml").write_text("# someone else's\n")
        second = c.post("/api/save", json={"path": "hours.yaml", "text": "# mine again\n",
                                           "version": first.json()["version"]})
        assert second.status_code == 409
        assert second.json() == {"error": "'hours.yaml' changed on disk since you opened it"}
        assert (suite / "hours.yaml").read_text() == "# someone else's\n"
        forced = c.post("/api/save", json={"path": "hours.yaml", "text": "# mine again\n",
                                           "version": first.json()["version"],
                                           "overwrite": True})
        assert forced.status_code == 200
    assert (suite / "hours.yaml").read_text() == "# mine again\n"
    assert sorted(p.name for p in suite.iterdir()) == ["hours.yaml", "owner", "scenarist.yaml"]


def test_a_new_scenario_is_commented_lints_clean_and_never_replaces_a_file(
        studio_on: Any, tmp_path: Path) -> None:
    suite = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    studio = studio_on(suite)
    with studio.client() as c:
        made = c.post("/api/new", json={"name": "desk/greeting"})
        again = c.post("/api/new", json={"name": "desk/greeting.yaml"})
        odd = c.post("/api/new", json={"name": "../up"})
    assert made.json() == {"path": "desk/greeting.yaml"}
    assert again.status_code == 403
    assert again.json()["error"] == "'desk/greeting.yaml' exists already; choose another name"
    assert odd.status_code == 403
    text = (suite / "desk" / "greeting.yaml").read_text()
    assert text.startswith("# A scenario: given a moment")
    lint = subprocess.run([sys.executable, "-m", "dsl", "lint", "--strict", "desk/greeting.yaml"],
                          cwd=suite, capture_output=True, text=True,
                          env={"PYTHONPATH": str(REPO), "NO_COLOR": "1", "PATH": "/usr/bin"})
    assert lint.returncode == 0, lint.stdout


def test_a_run_streams_its_progress_and_ends_with_its_report(
        studio_on: Any, tmp_path: Path, server: FakeServer) -> None:
    server.script(SCRIPT)
    suite = make_suite(tmp_path / "suite", server.url)
    studio = studio_on(suite)
    with studio.client() as c:
        job = c.post("/api/run", json={"path": "hours.yaml", "target": "fake"}).json()
        events = []
        with c.stream("GET", f"/api/run/{job['id']}/events") as r:
            assert r.headers["content-type"].startswith("text/event-stream")
            for line in r.iter_lines():
                if line.startswith("data: "):
                    events.append(json.loads(line[6:]))
        report = c.get(events[-1]["report"])
    kinds = [e["event"] for e in events]
    assert kinds == ["started", "attempt", "attempt", "attempt", "finished"]
    assert [e.get("done") for e in events[1:4]] == [1, 2, 3]
    assert events[-1]["verdict"] == ("The run ended: hours passed with fake (3 of 3 attempts "
                                     "passed, 2 needed).")
    assert report.status_code == 200
    assert "Scenarist report" in report.text
    run_dir = Path(events[-1]["run_dir"])
    assert run_dir.parent == suite / "runs"
    assert (suite / ".scenarist" / "history.db").is_file()


def test_ctrl_c_stops_it_cleanly(running: Studio) -> None:
    code, said = running.stop()
    assert code == 0
    assert said.splitlines()[-1] == "Studio stopped."
    assert "Traceback" not in said


def test_without_its_extra_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    make_suite(tmp_path, "http://127.0.0.1:9/v1")
    code = ("import sys; sys.modules['starlette'] = None; from dsl.cli import main; "
            "main(['studio', '--no-open'])")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                       text=True, env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"})
    assert r.returncode == 2
    assert r.stderr == ("error: the studio needs Starlette and Uvicorn (starlette is "
                        "missing); install them with: pip install 'scenarist[studio]'\n")


def test_without_a_suite_it_says_how_to_make_one(tmp_path: Path) -> None:
    r = subprocess.run([sys.executable, "-m", "dsl", "studio", str(tmp_path), "--no-open"],
                       capture_output=True, text=True,
                       env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin"})
    assert r.returncode == 2
    assert r.stderr == (f"error: no scenarist.yaml in {tmp_path} or above it; create a "
                        f"suite with: scenarist init {tmp_path}\n")


def test_what_lint_finds_in_the_suite_file_is_listed_apart(studio_on: Any, tmp_path: Path
                                                           ) -> None:
    suite = tmp_path / "suite"
    write(suite / "scenarist.yaml", suite_yaml("http://127.0.0.1:9/v1"))
    write(suite / "only.yaml", "given:\n  at: 2026-09-29T10:00:00-03:00\nwhen: hola\n"
          "then:\n  - non_empty\n")
    studio = studio_on(suite)
    with studio.client() as c:
        r = c.post("/api/lint", json={"path": "only.yaml",
                                      "text": (suite / "only.yaml").read_text()}).json()
    assert r["problems"] == []
    assert [x.split(": warning ")[1][:4] for x in r["elsewhere"]] == ["W403"] * 3
    assert all(x.startswith("scenarist.yaml:") for x in r["elsewhere"])


def test_suite_settings_and_a_table_file_are_edited_and_saved_through_the_api(
        studio_on: Any, tmp_path: Path, server: FakeServer) -> None:
    server.script({"models": ["m1", "m2"]})
    folder = make_suite(tmp_path / "suite", server.url)
    data = json.loads((folder / "scenarist.yaml").read_text())
    data["world"] = {"cards": {"file": "data/cards.csv"}}
    (folder / "scenarist.yaml").write_text(json.dumps(data, indent=2) + "\n")
    write(folder / "data" / "cards.csv", "id,status\nC-1,active\n")
    studio = studio_on(folder)
    with studio.client() as c:
        suite = c.get("/api/suite").json()
        assert suite["tables"] == [{"name": "cards", "columns": ["id", "status"],
                                    "ids": ["C-1"], "file": "data/cards.csv"}]
        opened = c.get("/api/file", params={"path": "scenarist.yaml"}).json()
        form = c.post("/api/form", json={"path": "scenarist.yaml", "text": opened["text"],
                                         "edits": [{"op": "defaults_set", "key": "runs",
                                                    "value": 4}]}).json()
        assert form["kind"] == "suite"
        assert form["form"]["defaults"]["runs"] == 4
        assert form["problems"] == []
        saved = c.post("/api/save", json={"path": "scenarist.yaml", "text": form["text"],
                                          "version": opened["version"]})
        assert saved.status_code == 200
        table = c.get("/api/file", params={"path": "data/cards.csv"}).json()
        grid = c.post("/api/form", json={"path": "data/cards.csv", "text": table["text"],
                                         "edits": [{"op": "set_cell", "row": 0,
                                                    "column": "status", "value": "blocked"}]}
                      ).json()
        assert grid["form"]["rows"] == [["C-1", "blocked"]]
        assert c.post("/api/save", json={"path": "data/cards.csv", "text": grid["text"],
                                         "version": table["version"]}).status_code == 200
        found = c.post("/api/models", json={"base_url": server.url}).json()
        down = c.post("/api/models", json={"base_url": "http://127.0.0.1:9/v1"}).json()
        odd = c.post("/api/models", json={"base_url": "ftp://x"}).json()
    assert json.loads((folder / "scenarist.yaml").read_text())["defaults"]["runs"] == 4
    assert (folder / "data" / "cards.csv").read_text() == "id,status\nC-1,blocked\n"
    assert found == {"models": ["m1", "m2"], "error": ""}
    assert down == {"models": [], "error": "cannot reach http://127.0.0.1:9/v1: the connection "
                                           "was refused (is the server running?)"}
    assert odd["error"] == ("'ftp://x' is not an address the studio can ask: write it as "
                            "http://HOST:PORT/v1")
