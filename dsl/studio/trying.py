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
import queue
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError, NotReady, render
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

    def as_json(self) -> dict[str, Any]:
        return {"lines": self.lines, "waiting": self.waiting, "question": self.question,
                "checks": self.checks, "summary": self.summary}


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
        self.terminal = Terminal(self._say, self._ask)
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
            self._lines.append(line)

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
        if self._waiting != "ended":
            return Reply(lines, self._waiting or "working", self._question)
        if self._failed:
            lines.append(self._failed)
        outcome = self._outcome
        checks: list[dict[str, Any]] = []
        summary = ""
        if outcome is not None:
            checks = [{"label": c.label, "status": c.status, "reason": c.reason,
                       "always": c.always} for c in outcome.checks]
            said = [x for x in check_lines(outcome) if x.strip()]
            summary = said[-1] if said else ""
            if outcome.data is None:
                lines.extend(said)
        return Reply(lines, "ended", "", checks, summary)
