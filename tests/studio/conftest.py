"""Fixtures for the studio's tests: a suite in a temporary folder, ``scenarist studio``
started on it as a real process (and stopped with Ctrl-C), and a real headless Chromium
(found as the report's browser tests find it: tests/results/find_browser.py)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import REPO, suite_yaml, write

HOURS = """
    # The clinic's hours: a receptionist asks, the agent looks them up.
    id: hours
    description: A receptionist asks until what time the clinic is open today.
    given:
      at: 2026-09-29T10:00:00-03:00   # a Tuesday
      tools: [list_business_hours]
    when: "¿Hasta qué hora atendemos hoy?"
    runs: 3
    min_pass: 2
    then:
      - calls: list_business_hours    # it looks the hours up
      - contains: "18:00"
    """

CLOSE = """
    id: close_saturday
    description: The owner closes on Saturdays and confirms the change.
    given:
      at: 2026-09-29T10:00:00-03:00
      tools: [list_business_hours, set_business_hours]
    when:
      - say: "Los sábados cerramos."
        then:
          - asks_to_confirm: set_business_hours
      - confirm: set_business_hours
    then:
      - {calls: {name: set_business_hours, args: {day: saturday}}, name: it closes Saturday}
    runs: 1
    min_pass: 1
    """

SCRIPT: dict[str, Any] = {"rules": [
    {"match": "hora", "per_turn": True, "replies": [
        {"tool_calls": [{"name": "list_business_hours", "arguments": {}}]},
        {"text": "Hoy atendemos hasta las 18:00."}]},
    {"match": "sábado", "per_turn": True, "replies": [
        {"tool_calls": [{"name": "set_business_hours",
                         "arguments": {"day": "saturday", "hours": "closed"}}]},
        {"text": "Listo: los sábados cerrado."}]},
]}


def make_suite(folder: Path, url: str) -> Path:
    write(folder / "scenarist.yaml", suite_yaml(url))
    write(folder / "hours.yaml", HOURS)
    write(folder / "owner" / "close.yaml", CLOSE)
    return folder


@dataclass
class Studio:
    """A running ``scenarist studio``: its address, token and process."""

    url: str  # the first line's address, with its one-time code
    port: int
    token: str  # that code
    process: subprocess.Popen[str]
    folder: Path
    session: str = ""  # the session key, once the code was traded

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def trade(self) -> str:
        """The session key, for the code (traded once, as the page does on its first
        load)."""
        if not self.session:
            r = httpx.post(self.base + "/api/session", json={"code": self.token}, timeout=30)
            r.raise_for_status()
            self.session = r.json()["token"]
        return self.session

    @contextlib.contextmanager
    def client(self) -> Iterator[httpx.Client]:
        """A client that sends the session key in its header, as the page does."""
        with httpx.Client(base_url=self.base, timeout=30,
                          headers={"X-Scenarist-Token": self.trade()}) as c:
            yield c

    def stop(self) -> tuple[int, str]:
        """Ctrl-C, as a person stops it; its exit code and what it printed."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=15)
        return self.process.returncode, out + err


def start_studio(folder: Path, *args: str) -> Studio:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "dsl", "studio", *args, "--no-open"],
                            cwd=folder, env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if not first.startswith("Studio: "):
        proc.kill()
        raise AssertionError(f"the studio did not start: {first!r} {proc.communicate()}")
    url = first.split(" ", 1)[1].strip()
    port = int(url.split(":")[2].split("/")[0])
    return Studio(url, port, url.split("token=")[1], proc, folder)


@pytest.fixture
def studio_on() -> Iterator[Callable[..., Studio]]:
    started: list[Studio] = []

    def start(folder: Path, *args: str) -> Studio:
        s = start_studio(folder, *args)
        started.append(s)
        return s

    yield start
    for s in started:
        if s.process.poll() is None:
            s.process.kill()
            s.process.communicate()


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Chromium, as the report's browser tests launch it: skipped without one, failed
    without one when SCENARIST_REQUIRE_BROWSER is set."""
    from tests.results.find_browser import browser_here
    from tests.results.report_builders import CHROMIUM_ARGS

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
