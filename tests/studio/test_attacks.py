"""The attack on the studio, probe by probe, against a real ``scenarist studio`` process —
what another local user, or a page or server on another port of 127.0.0.1, could try:

* read the credential off a command line (the browser the studio opens, ``ps``);
* use a cookie, which browsers send to every port of 127.0.0.1;
* read or write a file that is not the suite's (``.pre-commit-config.yaml``, ``.github/``,
  ``runs/``, ``.scenarist/``, a file outside the suite or linked from inside it);
* send bodies too large or too deep to parse, names of 300 characters, a path under a
  file, lone surrogates — every answer must be a JSON sentence, never a traceback;
* block the server with a FIFO (or a device, or a folder) named like a scenario;
* race saves over one version.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO, write

from .conftest import Studio, make_suite


@pytest.fixture
def suite(tmp_path: Path) -> Path:
    folder = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    write(folder / ".pre-commit-config.yaml", "repos: []\n")
    write(folder / ".github" / "workflows" / "ci.yml", "on: push\n")
    write(folder / "runs" / "old.yaml", "id: old\n")
    write(folder / ".scenarist" / "notes.yaml", "x: 1\n")
    write(folder / "data" / "stray.csv", "id,x\n1,2\n")
    write(tmp_path / "outside.yaml", "secret: 1\n")
    (folder / "hidden-link.yaml").symlink_to(folder / ".pre-commit-config.yaml")
    return folder


def _all_cmdlines() -> list[str]:
    out = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                out.append((proc / "cmdline").read_bytes().replace(b"\0", b" ").decode(
                    "utf-8", "replace"))
            except OSError:
                continue
    return out


def test_no_reusable_credential_on_a_command_line(suite: Path, tmp_path: Path) -> None:
    """The browser is opened on a file only this user can read, never on an address with
    a code; that file's code and the printed one each work once; no process's command
    line holds the session key or a code."""
    said = tmp_path / "browser-argv.json"
    browser = tmp_path / "browser.py"
    browser.write_text(f"import json, sys\nopen({str(said)!r}, 'w').write(json.dumps(sys.argv))\n")
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1",
           "BROWSER": f"{sys.executable} {browser} %s"}
    proc = subprocess.Popen([sys.executable, "-m", "dsl", "studio"], cwd=suite, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        url = proc.stdout.readline().split(" ", 1)[1].strip()
        base, printed = url.split("/?token=")
        deadline = time.monotonic() + 30
        while not said.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        argv = json.loads(said.read_text())
        opened = argv[-1]
        assert opened.startswith("file:///")
        assert opened.endswith("/open.html")
        page = Path(opened.removeprefix("file://"))
        assert stat.S_IMODE(page.stat().st_mode) == 0o600
        assert stat.S_IMODE(page.parent.stat().st_mode) == 0o700
        code = page.read_text().split("?token=")[1].split('"')[0]
        assert code != printed
        lines = _all_cmdlines()
        assert not any(printed in x or code in x for x in lines)
        key = httpx.post(base + "/api/session", json={"code": code}).json()["token"]
        assert not page.exists()  # gone once its code was traded
        assert not any(key in x for x in _all_cmdlines())
        for used in (code,):
            again = httpx.post(base + "/api/session", json={"code": used})
            assert again.status_code == 403
        assert httpx.post(base + "/api/session", json={"code": printed}).status_code == 200
        assert httpx.post(base + "/api/session", json={"code": printed}).status_code == 403
    finally:
        proc.send_signal(2)
        proc.communicate(timeout=15)


def test_a_cookie_never_opens_the_api(studio_on: Any, suite: Path) -> None:
    """Whatever a server on another port of 127.0.0.1 collects from the browser's cookies
    (the studio sets none), it opens nothing: the API wants the key in a header."""
    studio: Studio = studio_on(suite)
    responses = [httpx.get(studio.url), httpx.post(studio.base + "/api/session",
                                                   json={"code": studio.token})]
    key = studio.session = responses[1].json()["token"]
    with studio.client() as c:
        responses += [c.get("/api/suite"), c.get("/api/file", params={"path": "hours.yaml"})]
    assert not any("set-cookie" in r.headers for r in responses)
    for cookies in ({f"scenarist-studio-{studio.port}": key}, {"token": key},
                    {"X-Scenarist-Token": key}):
        for path in ("/api/suite", "/api/file?path=hours.yaml"):
            r = httpx.get(studio.base + path, cookies=cookies)
            assert r.status_code == 403, (cookies, path)
        r = httpx.post(studio.base + "/api/save", cookies=cookies,
                       json={"path": "hours.yaml", "text": "x: 1\n", "version": None,
                             "overwrite": True})
        assert r.status_code == 403
    assert "x: 1" not in (suite / "hours.yaml").read_text()


def test_no_file_but_the_suites_own_is_read_or_written(studio_on: Any, suite: Path,
                                                       tmp_path: Path) -> None:
    studio: Studio = studio_on(suite)
    refused = [".pre-commit-config.yaml", ".github/workflows/ci.yml",
               ".github/workflows/new.yml", "runs/old.yaml", "runs/new.yaml",
               ".scenarist/notes.yaml", ".scenarist/history.yaml", "hidden-link.yaml",
               "data/stray.csv", "../outside.yaml", "notes.txt", "hours.yaml/../../x.yaml"]
    before = {p: p.read_bytes() for p in suite.rglob("*") if p.is_file()}
    with studio.client() as c:
        for path in refused:
            r = c.get("/api/file", params={"path": path})
            assert r.status_code in (403, 404), (path, r.text)
            assert "repos" not in r.text
            assert "secret" not in r.text
            r = c.post("/api/save", json={"path": path, "text": "pwned: 1\n", "version": None,
                                          "overwrite": True})
            assert r.status_code == 403, (path, r.text)
            assert r.json()["error"], path
            r = c.post("/api/form", json={"path": path, "text": "x: 1\n", "edits": []})
            assert r.status_code == 403, path
        # the suite's own files are the studio's to write
        assert c.get("/api/file", params={"path": "scenarist.yaml"}).json()["kind"] == "suite"
        made = c.post("/api/save", json={"path": "owner/new.yaml", "text": "id: new\n",
                                         "version": None})
        assert made.status_code == 200
    after = {p: p.read_bytes() for p in suite.rglob("*") if p.is_file()}
    assert {p: b for p, b in after.items() if p.name != "new.yaml"} == before
    assert not (suite / ".github" / "workflows" / "new.yml").exists()
    assert not (suite / "runs" / "new.yaml").exists()
    assert (tmp_path / "outside.yaml").read_text() == "secret: 1\n"


def test_a_table_file_is_opened_only_when_the_suite_names_it(studio_on: Any,
                                                             tmp_path: Path) -> None:
    folder = make_suite(tmp_path / "suite", "http://127.0.0.1:9/v1")
    text = json.loads((folder / "scenarist.yaml").read_text())
    text["world"] = {"cards": {"file": "data/cards.csv"}}
    (folder / "scenarist.yaml").write_text(json.dumps(text))
    write(folder / "data" / "cards.csv", "id,status\nC-1,active\n")
    write(folder / "data" / "other.csv", "id,status\nC-9,secret\n")
    studio: Studio = studio_on(folder)
    with studio.client() as c:
        named = c.get("/api/file", params={"path": "data/cards.csv"})
        other = c.get("/api/file", params={"path": "data/other.csv"})
    assert named.status_code == 200
    assert named.json()["kind"] == "table"
    assert other.status_code == 403
    assert "secret" not in other.text


@pytest.mark.parametrize("what", ["size", "declared size", "nesting", "not JSON",
                                  "not an object", "surrogate"])
def test_bodies_are_bounded_before_they_are_parsed(running_attack: Studio, what: str
                                                   ) -> None:
    big = 13 * 2**20
    with running_attack.client() as c:
        match what:
            case "size":
                r = c.post("/api/lint", content=b'{"path": "hours.yaml", "text": "'
                           + b"x" * big + b'"}', headers={"Content-Type": "application/json"})
                want = (413, "the request is larger than the studio takes (10 MiB)")
            case "declared size":
                def chunks() -> Any:
                    yield b'{"text": "'
                    for _ in range(big // 2**20):
                        yield b"y" * 2**20
                    yield b'"}'
                r = c.post("/api/lint", content=chunks(),
                           headers={"Content-Type": "application/json"})
                want = (413, "the request is larger than the studio takes (10 MiB)")
            case "nesting":
                r = c.post("/api/form", content=b'{"edits": ' + b"[" * 100_000
                           + b"]" * 100_000 + b"}", headers={"Content-Type": "application/json"})
                want = (400, "the request's JSON is nested more than 32 levels deep")
            case "not JSON":
                r = c.post("/api/lint", content=b"{nope",
                           headers={"Content-Type": "application/json"})
                want = (400, "the request is not JSON")
            case "not an object":
                r = c.post("/api/lint", json=[1, 2])
                want = (400, "the request must be a JSON object")
            case _:
                r = c.post("/api/save", content=b'{"path": "hours.yaml", "text": "\\ud800", '
                           b'"version": null, "overwrite": true}',
                           headers={"Content-Type": "application/json"})
                want = (400, "the request holds a lone surrogate (half of a character), "
                             "which is not text")
    assert (r.status_code, r.json()["error"]) == want
    assert r.headers["content-type"] == "application/json"


@pytest.fixture
def running_attack(studio_on: Any, suite: Path) -> Studio:
    studio: Studio = studio_on(suite)
    return studio


@pytest.mark.parametrize(("path", "status", "said"), [
    ("a" * 300 + ".yaml", 403, "has a name longer than 255 bytes, which no file system takes"),
    ("hours.yaml/inner.yaml", 403, "'hours.yaml/inner.yaml' is under 'hours.yaml', which is "
                                   "a file, not a folder"),
    ("\ud800.yaml", 400, "the request holds a lone surrogate"),
    ("x" * 2000, 403, "a path of 2,000 characters is longer than the studio takes"),
    ("dev.yaml", 403, "'dev.yaml' is outside the suite's folder"),
    ("folder.yaml", 403, "'folder.yaml' is a folder, not a file the studio reads"),
])
def test_every_error_is_a_json_sentence(running_attack: Studio, path: str, status: int,
                                        said: str) -> None:
    (running_attack.folder / "folder.yaml").mkdir()
    (running_attack.folder / "dev.yaml").symlink_to("/dev/zero")
    def post(c: httpx.Client, url: str, body: dict[str, Any]) -> httpx.Response:
        return c.post(url, content=json.dumps(body).encode(),  # a lone surrogate, escaped
                      headers={"Content-Type": "application/json"})

    with running_attack.client() as c:
        for r in (post(c, "/api/lint", {"path": path, "text": "x: 1\n"}),
                  post(c, "/api/form", {"path": path, "text": "x: 1\n", "edits": []}),
                  post(c, "/api/save", {"path": path, "text": "x: 1\n", "version": None,
                                        "overwrite": True}),
                  post(c, "/api/diff", {"path": path, "text": "x: 1\n"})):
            assert r.headers["content-type"] == "application/json", r.text
            if "a folder, not" in said:
                if r.status_code == 200:  # lint and the form take text, read no file
                    continue
                assert "not a file the studio" in r.json()["error"]
                continue
            assert r.status_code == status, (r.url, r.text)
            assert said in r.json()["error"]
        if "surrogate" not in said:
            r = c.get("/api/file", params={"path": path})
            assert r.status_code == status
            assert said in r.json()["error"]
    assert running_attack.process.poll() is None


def test_unknown_addresses_and_methods_answer_json(running_attack: Studio) -> None:
    with running_attack.client() as c:
        missing = c.get("/api/nothing")
        method = c.get("/api/save")
        query = c.get("/api/file?path=%ED%A0%80.yaml")
    assert (missing.status_code, missing.json()) == (
        404, {"error": "there is nothing at this address"})
    assert (method.status_code, method.json()) == (
        405, {"error": "this address does not take this method"})
    assert query.status_code in (403, 404)
    assert query.headers["content-type"] == "application/json"


def test_a_fifo_named_like_a_scenario_blocks_no_worker(running_attack: Studio) -> None:
    fifo = running_attack.folder / "pipe.yaml"
    os.mkfifo(fifo)
    with running_attack.client() as c:
        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            reads = list(pool.map(lambda _: c.get("/api/file", params={"path": "pipe.yaml"}),
                                  range(48)))
        saved = c.post("/api/save", json={"path": "pipe.yaml", "text": "x: 1\n",
                                          "version": None, "overwrite": True})
        alive = c.get("/api/file", params={"path": "hours.yaml"})
    for r in reads:
        assert r.status_code == 403
        assert r.json() == {"error": "'pipe.yaml' is a FIFO (named pipe), not a file the "
                                     "studio reads"}
    assert saved.status_code == 403
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert alive.status_code == 200


def test_concurrent_saves_over_one_version_never_both_succeed(running_attack: Studio) -> None:
    folder = running_attack.folder
    with running_attack.client() as c:
        version = c.get("/api/file", params={"path": "hours.yaml"}).json()["version"]

        def save(i: int) -> httpx.Response:
            return c.post("/api/save", json={"path": "hours.yaml", "text": f"id: h{i}\n",
                                             "version": version})

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            results = list(pool.map(save, range(40)))

        def force(i: int) -> httpx.Response:
            return c.post("/api/save", json={"path": "hours.yaml", "text": f"id: f{i}\n",
                                             "version": None, "overwrite": True})

        with concurrent.futures.ThreadPoolExecutor(16) as pool:
            forced = list(pool.map(force, range(40)))
    codes = sorted(r.status_code for r in results)
    assert codes == [200] + [409] * 39
    winner = next(i for i, r in enumerate(results) if r.status_code == 200)
    assert all(r.json() == {"error": "'hours.yaml' changed on disk since you opened it"}
               for r in results if r.status_code == 409)
    assert {r.status_code for r in forced} == {200}
    final = (folder / "hours.yaml").read_text()
    assert final in {f"id: f{i}\n" for i in range(40)}
    assert winner >= 0
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]


def test_crlf_files_keep_crlf_and_saves_keep_the_mode(running_attack: Studio) -> None:
    path = running_attack.folder / "hours.yaml"
    path.write_bytes(b"id: hours\r\ndescription: x\r\n")
    path.chmod(0o640)
    with running_attack.client() as c:
        opened = c.get("/api/file", params={"path": "hours.yaml"}).json()
        assert opened["eol"] == "\r\n"
        form = c.post("/api/form", json={"path": "hours.yaml", "text": "id: hours\ndescription: x\n",
                                         "edits": [{"op": "description", "value": "y"}]}).json()
        r = c.post("/api/save", json={"path": "hours.yaml", "text": form["text"],
                                      "version": opened["version"]})
    assert r.status_code == 200
    assert path.read_bytes() == b"id: hours\r\ndescription: y\r\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o640
