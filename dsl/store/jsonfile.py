"""A run folder's JSON files on disk: written atomically (a crash never leaves half a
file), read with their ``schema_version`` checked — here, once, for every file — and
handed to the file's own reader (:mod:`~dsl.store.planfile`, :mod:`~dsl.store.runfile`,
:mod:`~dsl.store.summaryfile`), whose errors this module places in the file.
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, TypeVar

from ..errors import RunDirError
from ..model import SCHEMA_VERSION
from ..source.load import file_kind
from .fields import FieldError, JSONObject

T = TypeVar("T")

_fast_loads: Callable[[bytes], Any] | None
_fast_dumps: Callable[..., bytes] | None
try:  # 2.3x faster than the standard library on attempt records (bench/report_bench.py)
    from orjson import OPT_INDENT_2 as _INDENT
    from orjson import dumps as _fast_dumps
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - PyPy, or a platform without a wheel
    _fast_loads = _fast_dumps = None
    _INDENT = 0


def json_text(data: Any) -> bytes:
    """``data`` as indented JSON text in UTF-8. orjson writes it when it can (the json
    module's indenting encoder is pure Python: a third of writing summary.json at 10,000
    attempts); what orjson refuses — a lone surrogate, NaN, a huge integer — the standard
    library writes."""
    if _fast_dumps is not None:
        try:
            return _fast_dumps(data, option=_INDENT) + b"\n"
        except (TypeError, ValueError):
            pass
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode(
        "utf-8", "backslashreplace")


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


class NotJSONNumber(ValueError):
    """Infinity in a file: not JSON, and no value of Scenarist's is (it would overflow
    whatever counts with it: a latency, a mean)."""


def _constant(name: str) -> Any:
    if name == "NaN":  # what the json module writes for a value that is not a number
        return float("nan")
    raise NotJSONNumber(f"{name} is not a number JSON allows")


def strict_loads(text: str | bytes) -> Any:
    """JSON as the standard library reads it, but Infinity and -Infinity refused."""
    return json.loads(text, parse_constant=_constant)


def read_json(path: Path) -> Any:
    try:
        data = strict_loads(read_bounded(path).decode("utf-8"))
    except (ValueError, RecursionError) as exc:
        raise RunDirError(f"cannot read {path}: {exc}") from None
    check_version(data, path)
    return data


def loads_line(line: bytes) -> Any:
    """One JSON line of a file Scenarist wrote. orjson reads what it can (almost every
    line); what it refuses — a lone surrogate kept as ``\\ud83d``, a huge integer — the
    standard library reads, so the files stay plain JSON whatever reads them (NaN as the
    json module writes it). Infinity is refused (NotJSONNumber): no value Scenarist keeps
    is infinite."""
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except ValueError:
            pass
    return strict_loads(line)


def read_file(path: Path, read: Callable[[JSONObject], T], what: str) -> T:
    """A run folder's JSON file, read by ``read``: RunDirError, with the file, when it is
    missing, is not JSON, was written by another version of Scenarist (``schema_version``:
    checked here, for every such file), or holds a value its reader does not expect. Read
    with the collector paused: a plan of 10,000 scenarios is a few hundred thousand small
    containers and no cycles, which it would otherwise walk again and again (half the time
    of reading it)."""
    paused = gc.isenabled()
    gc.disable()
    try:
        try:
            data = strict_loads(read_bounded(path).decode("utf-8"))
        except (ValueError, RecursionError) as exc:
            raise RunDirError(f"cannot read {path}: {exc}") from None
        return from_json(data, read, what, path)
    finally:
        if paused:
            gc.enable()


def from_json(data: Any, read: Callable[[JSONObject], T], what: str, where: object) -> T:
    """``data`` (a file's JSON, already parsed) read by ``read``; see :func:`read_file`."""
    check_version(data, where)
    try:
        return read(data)
    except FieldError as exc:
        said = str(exc)  # a remark in parentheses follows the words directly
        raise RunDirError(f"{where} is not {what}{' ' if said[:1] == '(' else ': '}{said}"
                          ) from None


def check_version(data: Any, where: object) -> None:
    """Refuse a file (or line) written by another version of Scenarist's formats."""
    version = data.get("schema_version") if isinstance(data, dict) else None
    if version != SCHEMA_VERSION:
        raise RunDirError(
            f"{where} has schema_version {version!r}; this Scenarist reads version "
            f"{SCHEMA_VERSION} (upgrade Scenarist, or re-run to regenerate it)"
        )
