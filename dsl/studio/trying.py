"""Try on the page: ``scenarist try``'s own conversation (:func:`dsl.pipeline.tryout.play`)
played in a thread, with the page as the person's terminal.

The thread writes what the terminal would print (the same words: tool calls, fake
results, the agent's answers) and, where the terminal would wait for a line, waits for the
page: a message, or the answer to ``confirm …? [y/N]`` for a held call (the page's
Confirm and Cancel buttons). "Check" ends the conversation as Ctrl-D does, and the
scenario's checks are evaluated on it. Nothing is written (``/save`` is the terminal's).
"""

from __future__ import annotations

import itertools
import json
import queue
import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, NotReady, render
from ..model import WorldRun
from ..pipeline.tryout import NotTryable, Terminal, check_lines, intro, play, session_for

CONFIRM = "  confirm "  # how tryout asks about a held call
WAIT_S = 120.0  # the longest the page waits for one turn of the agent
_EOF = object()


@dataclass(slots=True)
class Reply:
    """What the page gets back: the lines since it last asked, and what the
    conversation waits for now (``message``, ``confirm`` with its question, or
    ``ended`` with the checks)."""

    lines: list[str]
    waiting: str
    question: str = ""
    checks: list[dict[str, Any]] = field(default_factory=list)
    summary: str = ""
    world: list[dict[str, Any]] = field(default_factory=list)  # World changes, by turn
    error: str = ""  # why the conversation stopped, in words (an endpoint that failed)

    def as_json(self) -> dict[str, Any]:
        return {"lines": self.lines, "waiting": self.waiting, "question": self.question,
                "checks": self.checks, "summary": self.summary, "world": self.world,
                "error": self.error}


class TryError(Exception):
    """The scenario cannot be tried (what to fix, in words)."""


class Conversation:
    """One ``try`` in a thread; :meth:`send` hands it a line and waits for its turn."""

    ids = itertools.count(1)

    def __init__(self, path: Path, target: str | None) -> None:
        try:
            self.session = session_for(path, target, None, None)
        except InputError as exc:
            raise TryError("\n".join(render(d) for d in exc.diagnostics)) from None
        except (NotReady, NotTryable) as exc:
            raise TryError(str(exc)) from None
        self.id = str(next(self.ids))
        self._lines: list[str] = list(intro(self.session))[:-1]  # not the terminal's help
        self._inbox: queue.Queue[object] = queue.Queue()
        self._ready = threading.Condition()
        self._waiting = ""  # "" while the agent works
        self._question = ""
        self._outcome: Any = None
        self._failed: str | None = None
        self._world: list[dict[str, Any]] = []
        self._turns = 0
        self.terminal = Terminal(self._say, self._ask, world=self._changed)
        self.thread = threading.Thread(target=self._play, daemon=True,
                                       name=f"studio-try-{self.id}")
        self.thread.start()

    def _play(self) -> None:
        try:
            self._outcome = play(self.session, self.terminal)
        except Exception as exc:  # shown on the page rather than lost in a thread
            self._failed = f"The conversation stopped: {exc}"
        with self._ready:
            self._waiting = "ended"
            self._ready.notify_all()

    def _say(self, line: str) -> None:
        with self._ready:
            self._lines.append(plain_words(line))

    def _changed(self, run: WorldRun, made: list[dict[str, Any]]) -> None:
        """A turn ended: what it changed in the world, table by table, each changed row
        with its cells before and after (as the report shows them)."""
        with self._ready:
            self._turns += 1
            self._world.append({"turn": self._turns, "tables": world_tables(run, made)})

    def _ask(self, prompt: str) -> str:
        with self._ready:
            if prompt.startswith(CONFIRM):
                self._waiting, self._question = "confirm", prompt.strip().removesuffix("[y/N]")
            else:
                self._waiting, self._question = "message", ""
            self._ready.notify_all()
        got = self._inbox.get()
        if got is _EOF:
            raise EOFError
        assert isinstance(got, str)
        return got

    def start(self) -> Reply:
        """The intro, once the conversation waits for the first message."""
        return self._wait()

    def send(self, line: str | None) -> Reply:
        """Hand the conversation a line (None: end it, as Ctrl-D) and wait for its turn."""
        with self._ready:
            if self._waiting == "ended":
                return self._reply()
            self._waiting = ""
        self._inbox.put(_EOF if line is None else line)
        return self._wait()

    def poll(self) -> Reply:
        """Wait again for a turn that took longer than one request."""
        return self._wait()

    def stop(self) -> None:
        """End the conversation without waiting for it."""
        self._inbox.put(_EOF)

    def _wait(self) -> Reply:
        with self._ready:
            self._ready.wait_for(lambda: self._waiting != "", timeout=WAIT_S)
            return self._reply()

    def _reply(self) -> Reply:
        lines, self._lines = self._lines, []
        world, self._world = self._world, []
        if self._waiting != "ended":
            return Reply(lines, self._waiting or "working", self._question, world=world)
        if self._failed:
            lines.append(self._failed)
        outcome = self._outcome
        checks: list[dict[str, Any]] = []
        summary = ""
        error = ""
        if outcome is not None:
            checks = [_check(c.label, c.status, c.reason, c.always, outcome.status)
                      for c in outcome.checks]
            said = [x for x in check_lines(outcome) if x.strip()]
            summary = said[-1] if said else ""
            if outcome.status == "error":
                error = plain_words(f"The conversation stopped: {outcome.reason}") \
                    if outcome.data is None else summary
                summary = ("The agent's endpoint failed, so the checks were not evaluated: "
                           "an attempt that ends in an error says nothing about the agent.")
            if outcome.data is None:
                lines.extend(plain_words(x) for x in said)
        return Reply(lines, "ended", "", checks, summary, world, error)


GOAL = "goal_reached"
NOT_HERE = ("not applicable in Try: you play the person here, and goal_reached asks a "
            "simulated user whether its goal was reached; it is evaluated in a run")


def _check(label: str, status: str, reason: str, always: bool, attempt: str
           ) -> dict[str, Any]:
    """One check's result as the page shows it: never pass or fail for a conversation
    that ended in an error (not evaluated), and goal_reached as not applicable."""
    if attempt == "error":
        status, reason = "not_evaluated", "the conversation ended in an error"
    elif label.split(" ")[0] == GOAL or label == GOAL:
        status, reason = "not_applicable", NOT_HERE
    return {"label": label, "status": status, "reason": reason, "always": always}


_JSON_IN = re.compile(r"\{.*\}", re.S)


def plain_words(line: str) -> str:
    """A line with an endpoint's JSON error body (``{"error": {"message": "..."}}``) said
    by its message."""
    m = _JSON_IN.search(line)
    if m is None:
        return line
    try:
        body = json.loads(m.group())
    except ValueError:
        return line
    error = body.get("error") if isinstance(body, dict) else None
    message = error.get("message") if isinstance(error, dict) else error
    if not isinstance(message, str) and isinstance(body, dict):
        message = body.get("message") or body.get("detail")
    if not isinstance(message, str) or not message.strip():
        return line
    return line[:m.start()] + message.strip() + line[m.end():]


def world_tables(run: WorldRun, made: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The changes of one turn by table: each changed row, with the columns that
    changed, before → after (an added row: every column after; a removed one: before)."""
    # why: the world's module is imported only by a scenario that has a world
    from ..compiler.world import shown

    out: dict[str, dict[str, Any]] = {}
    for ch in made:
        table = out.setdefault(str(ch.get("table")), {"name": str(ch.get("table")),
                                                      "rows": []})
        if "added" in ch:
            cells = [{"column": str(k), "before": None, "after": shown(v)}
                     for k, v in dict(ch["added"]).items()]
            kind = "added"
        elif "removed" in ch:
            cells = [{"column": str(k), "before": shown(v), "after": None}
                     for k, v in dict(ch["removed"]).items()]
            kind = "removed"
        else:
            cells = [{"column": str(k), "before": shown(b), "after": shown(a)}
                     for k, (b, a) in dict(ch.get("set") or {}).items()]
            kind = "changed"
        table["rows"].append({"id": str(ch.get("id")), "kind": kind, "cells": cells})
    return list(out.values())
