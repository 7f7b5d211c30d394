"""A run folder's files on disk: written atomically (a crash never leaves half a file),
opened only as regular files and read no further than their limits (a run folder may come
from elsewhere), and — for plan.json, run.json and summary.json — read into their frozen
Struct by :mod:`~dsl.store.typed`, which checks ``schema_version`` and every field.
"""

from __future__ import annotations

import contextlib
import gc
import os
import stat
from pathlib import Path
from typing import IO, Any, TypeVar

from ..errors import RunDirError
from ..source.load import file_kind
from .typed import Reading, check_version, file_bytes, read, strict_loads

T = TypeVar("T")


def json_text(data: Any) -> bytes:
    """``data`` (plain JSON data, or a Struct the store keeps) as indented JSON text in
    UTF-8, written by msgspec (:func:`dsl.store.typed.file_bytes`)."""
    return file_bytes(data)


def write_json(path: Path, data: Any) -> None:
    """Write a JSON file atomically (a crash never leaves half a file)."""
    write_atomic(path, json_text(data))


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file (a report, junit.xml, summary.md) atomically: into a new file beside it,
    then moved into place (a crash never leaves half a file). The new file is made, never
    opened through what is there: a tampered run folder's ``report.html.tmp`` that is a
    symlink to another file is replaced, not written through."""
    tmp = path.with_name(path.name + ".tmp")
    with create_new(tmp) as f:
        f.write(data)
    os.replace(tmp, path)


def write_new(path: Path, data: bytes) -> None:
    """Write a new file atomically, never replacing one: into a new file beside it, then
    linked into place, which fails with FileExistsError when something is already there
    (a file made meanwhile included). Where the file system has no hard links, the file is
    made with O_EXCL and written (still never replacing one)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with create_new(tmp) as f:
        f.write(data)
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError:  # no hard links here: O_EXCL keeps the promise, not the atomicity
        with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), "wb") as out:
            out.write(data)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()


def create_new(path: Path) -> IO[bytes]:
    """A new, empty file at ``path`` opened for writing: whatever is there (a symlink a
    tampered run folder planted, say) is removed first, and the file is made with O_EXCL,
    so nothing is ever written through a link."""
    with contextlib.suppress(FileNotFoundError):
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                 0o666)
    return open(fd, "wb")


# What a run folder's files may weigh. A folder is a CI artifact or a shared folder, so it
# may have been tampered with: each file is opened as a regular file (a FIFO, a device or a
# symlink to one is refused, never waited on) and read no further than these.
MAX_JSON_BYTES = 512 * 2**20  # plan.json, run.json, summary.json (a plan of 10,000: ~40 MB)
MAX_RESULTS_BYTES = 4 * 2**30  # results.jsonl (10,000 attempts: ~100 MB), read a line at a time
MAX_RECORD_BYTES = 256 * 2**20  # one line of results.jsonl
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def open_regular(path: Path, limit: int) -> IO[bytes]:
    """``path`` opened for reading when it is a regular file of at most ``limit`` bytes;
    RunDirError in one sentence when it is missing, unreadable, not a regular file (a FIFO,
    a device, a symlink to one: refused without blocking) or larger."""
    try:
        # O_NONBLOCK: opening a FIFO for reading would wait for a writer forever
        fd = os.open(path, _OPEN_FLAGS)
    except FileNotFoundError:
        raise RunDirError(f"{path} does not exist; is {path.parent} a run folder?") from None
    except OSError as exc:
        raise RunDirError(f"cannot read {path}: {exc.strerror or exc}") from None
    f = open(fd, "rb")  # noqa: SIM115 - handed to the caller, who closes it
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise RunDirError(f"{path} is {file_kind(st.st_mode)}, not a regular file: a run "
                              "folder holds the files a run wrote")
        if st.st_size > limit:
            raise RunDirError(f"{path} is larger than Scenarist reads ({st.st_size:,} bytes; "
                              f"at most {limit:,})")
    except BaseException:
        f.close()
        raise
    return f


def read_bounded(path: Path, limit: int = MAX_JSON_BYTES) -> bytes:
    """The bytes of a run folder's file (see :func:`open_regular`)."""
    with open_regular(path, limit) as f:
        try:
            raw = f.read(limit + 1)  # a file that grows stops here
        except OSError as exc:
            raise RunDirError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(raw) > limit:
        raise RunDirError(f"{path} is larger than Scenarist reads (at most {limit:,} bytes)")
    return raw


def read_json(path: Path) -> Any:
    """A JSON file Scenarist wrote (conformance.json; a shard's plan.json as written, for
    its fingerprints), as plain data, its ``schema_version`` checked."""
    try:
        data = strict_loads(read_bounded(path))
    except (ValueError, RecursionError) as exc:
        raise RunDirError(f"cannot read {path}: {exc}") from None
    check_version(data, path)
    return data


def read_file(path: Path, kind: type[T], what: str, **how: Any) -> T:
    """A run folder's JSON file as the Struct ``kind``: RunDirError, with the file, when it
    is missing, is not JSON, was written by another version of Scenarist, or holds a value
    ``kind`` does not (:func:`dsl.store.typed.read`; ``how``: more of its
    :class:`~dsl.store.typed.Reading`). Read with the collector paused: a plan of 10,000
    scenarios is a few hundred thousand small values and no cycles, which it would
    otherwise walk again and again."""
    raw = read_bounded(path)
    paused = gc.isenabled()
    gc.disable()
    try:
        return read(raw, kind, Reading(path, what, **how))
    finally:
        if paused:
            gc.enable()
