"""What ``scenarist import`` reads: a file, a run folder, or bytes handed over (the studio's
file chooser), each read with bounds, and which format it holds.

A log can be large and can come from anywhere, so every file is opened as a regular file
only (a FIFO or a device is refused, never waited on) and read no further than
:data:`MAX_FILE_BYTES`; a line longer than :data:`MAX_LINE_BYTES` is skipped whole, never
held in memory. Each is a located :class:`~dsl.importing.conversation.Problem`, and what
was read is still imported.

The format is read from the content (:func:`detect`): a JSON object a line with
``request`` and ``response`` is an OpenAI gateway log; JSON with ``resourceSpans`` is an
OTLP/JSON trace export; a folder with ``results.jsonl`` (or that file itself) is a
Scenarist run folder.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

from .conversation import Place, Problem

Format = Literal["openai", "otel", "scenarist"]
FORMATS: tuple[Format, ...] = ("openai", "otel", "scenarist")

MAX_FILE_BYTES = 256 * 2**20  # a log file: what is past this is not read
MAX_LINE_BYTES = 16 * 2**20  # one line of a log (one exchange, one batch of spans)
_CHUNK = 2**20
_LOOK = 64 * 2**10  # how much of a file detect() reads


@dataclass(frozen=True, slots=True)
class Upload:
    """A file's content handed over rather than named (the studio's file chooser): its
    name (shown in messages and in the scenario's description) and its bytes."""

    name: str
    data: bytes


Source = Path | Upload


def shown(source: Source) -> str:
    """How messages and descriptions name a source: a path relative to the current folder
    when it is inside it, an upload by its name."""
    if isinstance(source, Upload):
        return source.name
    if not source.is_absolute():
        return str(source)
    try:
        return str(source.relative_to(Path.cwd()))
    except ValueError:
        return str(source)


class Unreadable(Exception):
    """A source that cannot be read at all (missing, not a regular file, one JSON document
    that does not parse): what is wrong, in one sentence, and the line, when there is one."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


@dataclass(frozen=True, slots=True)
class Line:
    """One line of a source: its 1-based number and its bytes (without the line break)."""

    number: int
    data: bytes


def open_source(path: Path) -> IO[bytes]:
    """``path`` opened for reading when it is a regular file; Unreadable otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
                     | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise Unreadable("no such file or folder") from None
    except OSError as exc:
        raise Unreadable(f"cannot be read: {exc.strerror or exc}") from None
    f = open(fd, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        f.close()
        raise Unreadable("not a regular file (a log is a file of text)")
    return f


def lines(source: Source, problems: list[Problem]) -> Iterator[Line]:
    """The lines of a source, bounded: a line over :data:`MAX_LINE_BYTES` is skipped (a
    problem at its line), and nothing past :data:`MAX_FILE_BYTES` is read (a problem at
    the first line not read). Empty lines are left out."""
    name = shown(source)
    stream: IO[bytes] = io.BytesIO(source.data) if isinstance(source, Upload) \
        else open_source(source)
    with stream:
        number = 0
        total = 0
        while True:
            room = MAX_FILE_BYTES - total
            line = stream.readline(min(MAX_LINE_BYTES, room) + 1)
            if not line:
                return
            number += 1
            if len(line) > room:  # this line goes past the file's bound: stop before it
                problems.append(Problem(Place(name, number),
                                        f"the file is larger than Scenarist reads "
                                        f"({size(MAX_FILE_BYTES)}): the lines from here on "
                                        "were not read"))
                return
            total += len(line)
            if len(line) > MAX_LINE_BYTES and not line.endswith(b"\n"):  # skip the rest
                total += _skip_line(stream)
                problems.append(Problem(Place(name, number),
                                        f"the line is longer than Scenarist reads "
                                        f"({size(MAX_LINE_BYTES)}): skipped"))
                continue
            data = line.rstrip(b"\r\n")
            if data.strip():
                yield Line(number, data)


def size(n: int) -> str:
    """``256 MiB``, or ``4,096 bytes`` for less than a MiB."""
    return f"{n // 2**20} MiB" if n >= 2**20 and n % 2**20 == 0 else f"{n:,} bytes"


def _skip_line(stream: IO[bytes]) -> int:
    """Read past the rest of a line without keeping it; the bytes skipped."""
    n = 0
    while True:
        chunk = stream.readline(_CHUNK)
        n += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return n


def read_whole(source: Source) -> bytes:
    """A source's bytes, all of them: Unreadable when it is over :data:`MAX_FILE_BYTES`
    (one JSON document cannot be read in part)."""
    if isinstance(source, Upload):
        data = source.data
    else:
        with open_source(source) as f:
            data = f.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise Unreadable(f"the file is larger than Scenarist reads "
                         f"({size(MAX_FILE_BYTES)}), and it is one JSON document, "
                         "which cannot be read in part: export it as JSON Lines, or split it")
    return data


# ---- which format -------------------------------------------------------------------------


def is_run_folder(source: Source) -> bool:
    return isinstance(source, Path) and (
        (source.is_dir() and (source / "results.jsonl").exists())
        or (source.name == "results.jsonl" and (source.parent / "plan.json").exists()))


def detect(source: Source) -> Format | None:
    """The format a source holds, read from its content; None when it is none of them."""
    if is_run_folder(source):
        return "scenarist"
    if isinstance(source, Path) and source.is_dir():
        return None
    head = source.data[:_LOOK] if isinstance(source, Upload) else _head(source)
    text = head.decode("utf-8", "replace").lstrip("\ufeff \t\r\n")
    if not text.startswith(("{", "[")):
        return None
    first = text.split("\n", 1)[0]
    data: Any = None
    with contextlib.suppress(ValueError, RecursionError):
        data = json.loads(first)
    if isinstance(data, dict):
        if "request" in data and "response" in data:
            return "openai"
        if "resourceSpans" in data:
            return "otel"
        if {"scenario", "target", "run"} <= data.keys():
            return "scenarist"
    if '"resourceSpans"' in text or '"resource_spans"' in text:
        return "otel"
    if '"request"' in text:  # an exchange cut off before its response: the reader says so
        return "openai"
    return None


def _head(path: Path) -> bytes:
    with open_source(path) as f:
        return f.read(_LOOK)
