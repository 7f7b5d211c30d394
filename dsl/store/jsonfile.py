"""A run folder's JSON files on disk: written atomically (a crash never leaves half a
file), read with their ``schema_version`` checked — here, once, for every file — and
handed to the file's own reader (:mod:`~dsl.store.planfile`, :mod:`~dsl.store.runfile`,
:mod:`~dsl.store.summaryfile`), whose errors this module places in the file.
"""

from __future__ import annotations

import gc
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from ..errors import RunDirError
from ..model import SCHEMA_VERSION
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
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(json_text(data))
    os.replace(tmp, path)


def write_atomic(path: Path, data: bytes) -> None:
    """Write a file (a report, junit.xml, summary.md) atomically, as write_json does."""
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def read_json(path: Path) -> Any:
    try:
        data = json.loads(path.read_text("utf-8"))
    except FileNotFoundError:
        raise RunDirError(f"{path} does not exist; is {path.parent} a run folder?") from None
    except (OSError, ValueError) as exc:
        raise RunDirError(f"cannot read {path}: {exc}") from None
    check_version(data, path)
    return data


def loads_line(line: bytes) -> Any:
    """One JSON line of a file Scenarist wrote. orjson reads what it can (almost every
    line); what it refuses — a lone surrogate kept as ``\\ud83d``, NaN, a huge integer —
    the standard library reads, so the files stay plain JSON whatever reads them."""
    if _fast_loads is not None:
        try:
            return _fast_loads(line)
        except ValueError:
            pass
    return json.loads(line)


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
            data = json.loads(path.read_text("utf-8"))
        except FileNotFoundError:
            raise RunDirError(f"{path} does not exist; is {path.parent} a run folder?"
                              ) from None
        except (OSError, ValueError, RecursionError) as exc:
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
