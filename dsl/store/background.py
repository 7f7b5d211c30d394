"""A file made beside a run, off its way: by a forked process when that is safe, else by
a thread. ``scenarist run`` makes its plan.json so (dsl.pipeline.PlanWriter): a plan of
10,000 scenarios takes about a second, and the first requests go out meanwhile.

:func:`forkable` is the one test of whether this process may fork now; lint asks it too
before it forks its workers.
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any


class BackgroundFile:
    """A JSON file — ``make()``'s value — made beside a run (``background``) or at once
    when asked for (:meth:`result`). :meth:`wait`, called before the run needs the file,
    returns once it is there, and raises OSError when it could not be.

    In the background it is made by a forked process, on the other core, only while the
    process has no thread but this one (:func:`forkable`): ``os.fork`` in a process with
    threads can leave the child holding a lock that no thread will ever release. Otherwise
    (an endpoint whose name the event loop looks up in a thread, a caller with threads of
    its own: a test's server, an embedding program) a thread makes it — safe, but it shares
    the interpreter with the run for as long as ``make`` takes."""

    def __init__(self, make: Callable[[], Any], background: bool,
                 name: str = "scenarist-file") -> None:
        self.make = make
        self.background = background
        self.name = name  # its thread's, when a thread makes it
        self.path: Path | None = None
        self.error: str | None = None
        self._data: Any = None
        self._child = 0  # the forked process making it
        self._thread: threading.Thread | None = None
        self._failure: BaseException | None = None  # a bug while making it: raised on wait
        self._started = False

    def aim(self, path: Path) -> None:
        """Where the file goes; it is made by :meth:`start`, or by :meth:`wait` if nothing
        started it."""
        self.path = path

    def write_to(self, path: Path) -> None:
        """Where the file goes, and begin making it now."""
        self.aim(path)
        self.start()

    def start(self) -> None:
        """Begin making the file (once)."""
        if self._started or self.path is None:
            return
        self._started = True
        if not self.background:
            self._make()
            return
        if forkable():
            self._child = _fork(self._make_in_child)
            if self._child > 0:
                return
        try:
            self._thread = threading.Thread(target=self._make, name=self.name, daemon=True)
            self._thread.start()
        except RuntimeError:  # no thread to be had: make it here
            self._thread = None
            self._make()

    def _make(self) -> None:
        # why: the run folder's files; lint or runs load this module without it
        from .jsonfile import write_json

        try:
            if self._data is None:
                self._data = self.make()
            if self.path is not None:
                write_json(self.path, self._data)
        except OSError as exc:
            self.error = f"cannot write {self.path}: {exc.strerror or exc}"
        except BaseException as exc:  # raised again by wait(), in the run's own thread
            self._failure = exc

    def _make_in_child(self) -> int:  # pragma: no cover - the child; tests see its file
        # Ctrl-C reaches the whole process group: the run's process handles it (and waits
        # for this one); here it must neither stop the file half-made nor, through the
        # event loop's wake-up descriptor it shares, tell the run it was pressed twice
        with contextlib.suppress(ValueError, OSError):
            signal.set_wakeup_fd(-1)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        self._make()
        return 0 if self.error is None and self._failure is None else 1

    def _join(self) -> None:
        if not self._started:  # nothing started it: make it here, now
            self._make_here()
        if self._child > 0:
            _, status = os.waitpid(self._child, 0)
            self._child = 0
            if status != 0 and self.error is None:
                self.error = f"cannot write {self.path}: the process that wrote it failed"
        if self._thread is not None:
            self._thread.join()
            self._thread = None

    def _make_here(self) -> None:
        if self.path is not None:
            self._started = True
            self._make()

    def wait(self) -> None:
        self._join()
        if self._failure is not None:
            raise self._failure
        if self.error is not None:
            raise OSError(self.error)

    def wait_quietly(self) -> None:
        self._join()

    def result(self) -> Any:
        """The file's contents (made here when it was made elsewhere)."""
        self._join()
        if self._data is None:
            self._data = self.make()
        return self._data


def forkable() -> bool:
    """May this process fork safely now? Only on Linux, and only while it has a single
    thread — counted by the kernel (``/proc/self/task``), which sees threads that C
    libraries start as well as Python's."""
    if not hasattr(os, "fork") or not sys.platform.startswith("linux"):
        return False
    if threading.active_count() != 1:
        return False
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def _fork(child: Callable[[], int]) -> int:
    """``child()`` in a forked process, which exits with what it returns; the child's pid,
    or -1 when the system would not fork."""
    frozen = gc.get_freeze_count() > 0  # set aside already (plan_set_aside): kept so
    gc.freeze()  # the child only reads the plan: its pages stay shared
    try:
        pid = os.fork()
    except OSError:
        return -1
    finally:
        if not frozen:
            gc.unfreeze()
    if pid == 0:  # pragma: no cover - the child
        status = 1
        try:
            status = child()
        finally:
            os._exit(status)
    return pid


