"""The caches Scenarist keeps, each checked before it is used.

A cache only saves work: whatever it holds can be made again. So a cache file is read only
when it is a regular file (never a FIFO that would block the read, a device or a folder) of
at most a bound, and what it holds is checked before it is believed; a damaged one is
ignored — as if it were not there — the value is made again and the file written again,
and one line on standard error says so (once per file and process)::

    warning: the judge's answer in its cache (.scenarist/judge-cache/3f/3f9a….json) is
    damaged (it is not JSON); it was ignored and is written again

The caches, each with its reader:

* **the judge's answers** — one JSON file per question under ``.scenarist/judge-cache/``
  beside scenarist.yaml (:mod:`dsl.judge.ask`): its fields checked; written again when the
  question is asked again;
* **the report's compiled template** — Jinja's bytecode cache in the temp folder, this
  user's alone (:mod:`dsl.results.report`): its header and code checked without unpickling
  anything; written again as soon as the template is compiled again.

(``grammar/expr.lark.json``, the expression parser's tables, is a file of the package, not a
cache: tables that do not fit the grammar are not used, and the parser is built instead.)
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from ..source.load import file_kind

_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
_SAID: set[str] = set()  # the files already said damaged in this process


class Damaged(Exception):
    """A cache file that cannot be used, and why (in a few words)."""


def read_cache(path: Path, limit: int) -> bytes | None:
    """The bytes of a cache file; None when there is none. Damaged when it is not a regular
    file, is larger than ``limit`` or cannot be read."""
    try:
        fd = os.open(path, _OPEN_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        if stat.S_ISDIR(_mode(path)):
            raise Damaged("it is a folder, not a regular file") from None
        raise Damaged(f"it cannot be read: {exc.strerror or exc}") from None
    with open(fd, "rb") as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Damaged(f"it is {file_kind(st.st_mode)}, not a regular file")
        try:
            raw = f.read(limit + 1)
        except OSError as exc:
            raise Damaged(f"it cannot be read: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise Damaged(f"it is larger than such a cache file can be ({limit:,} bytes)")
    return raw


def _mode(path: Path) -> int:
    try:
        return os.stat(path).st_mode
    except OSError:
        return 0


WRITTEN_AGAIN = "it was ignored and is written again"


def say_damaged(what: str, path: Path | str, why: str, then: str = WRITTEN_AGAIN) -> None:
    """One line on standard error: ``what`` at ``path`` is damaged, ignored and written
    again (``then``) — once per file and process (a file read by every attempt is said
    once)."""
    key = f"{what}\0{path}"
    if key in _SAID:
        return
    _SAID.add(key)
    sys.stderr.write(damaged_line(what, path, why, then) + "\n")
    sys.stderr.flush()


def damaged_line(what: str, path: Path | str, why: str, then: str = WRITTEN_AGAIN) -> str:
    """The words of :func:`say_damaged` (``dsl/__init__.py`` writes the same)."""
    return f"warning: {what} ({_printable(str(path))}) is damaged ({_printable(why)}); {then}"


def _printable(text: str) -> str:
    """Text a terminal shows as it is: other characters as escapes."""
    return "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                   for ch in text)


def remove_damaged(path: Path) -> None:
    """Take a damaged cache entry away that is not a regular file (a FIFO, a folder) so
    that it can be written again; a regular one is simply replaced when it is."""
    try:
        if stat.S_ISDIR(os.lstat(path).st_mode):
            return  # a folder someone made there: leave it, it is reported each time
        os.unlink(path)
    except OSError:
        pass
