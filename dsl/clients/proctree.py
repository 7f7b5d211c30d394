"""Every process an agent program (``kind: command``) started, found and ended with its
attempt — whether it stayed in the program's process group or left it.

The program starts in a session and process group of its own (``start_new_session``), so
ending the group ends what stayed in it. A process that calls ``setsid()`` (or
``setpgid``) leaves the group, and one whose parent exits is adopted by init: neither is
found through the group. Two marks find them on Linux, through ``/proc``:

* **descent**: every process whose chain of parents leads to the program (``/proc/PID/stat``'s
  ppid), taken before the program is ended — a grandchild that called ``setsid()`` while
  its parent lives;
* **the attempt's mark**: every process whose environment (``/proc/PID/environ``, as it
  was when the process started) holds ``SCENARIST_SESSION=<the attempt's id>`` — the id is
  new and unguessable for each attempt, and a child inherits its parent's environment, so
  this finds what was left behind by a parent that exited (a daemon's double fork) too.

A process that both empties its environment and leaves its parent's tree escapes both
marks (docs/targets.md says so: run such a program in a container of its own). Only
processes of this user can be read, and so ended. Elsewhere than Linux (no ``/proc``)
only the process group is ended.
"""

from __future__ import annotations

import contextlib
import os
import signal
from collections.abc import Collection, Iterable
from pathlib import Path

PROC = Path("/proc")


def _parents() -> dict[int, int]:
    """Every visible process's parent: ``{pid: ppid}``."""
    out: dict[int, int] = {}
    try:
        entries = os.listdir(PROC)
    except OSError:
        return out
    for name in entries:
        if not name.isdigit():
            continue
        try:
            stat = (PROC / name / "stat").read_bytes()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2:].split()
        if len(fields) > 1 and fields[0] != b"Z":
            out[int(name)] = int(fields[1])
    return out


def descendants(pid: int) -> set[int]:
    """The living processes that descend from ``pid`` (not ``pid`` itself)."""
    parents = _parents()
    children: dict[int, list[int]] = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    out: set[int] = set()
    todo = list(children.get(pid, ()))
    while todo:
        p = todo.pop()
        if p not in out:
            out.add(p)
            todo.extend(children.get(p, ()))
    return out


def marked(name: str, value: str) -> set[int]:
    """The living processes of this user whose environment holds ``name=value``."""
    mark = f"{name}={value}".encode()
    me = os.getpid()
    out: set[int] = set()
    for pid in _parents():
        if pid == me:
            continue
        try:
            environ = (PROC / str(pid) / "environ").read_bytes()
        except OSError:  # another user's, or gone
            continue
        if mark in environ.split(b"\0"):
            out.add(pid)
    return out


def signal_all(pids: Iterable[int], sig: int) -> None:
    """Send ``sig`` to each process (gone ones are skipped)."""
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def left(pids: Collection[int]) -> set[int]:
    """Those of ``pids`` still alive (a zombie has ended)."""
    if not pids:
        return set()
    parents = _parents()
    return {p for p in pids if p in parents}


TERM = signal.SIGTERM
KILL = signal.SIGKILL
