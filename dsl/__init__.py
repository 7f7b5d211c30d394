"""Scenarist: test LLM agents with scenarios written in YAML."""

from typing import Any

__version__ = "0.1.0"


def _keep_dataclass_code() -> None:
    """Keep the code the ``dataclasses`` module compiles for Scenarist's own classes.

    Issue 27: ``@dataclass`` writes ``__init__``, ``__repr__``, ``__eq__``, ``__hash__``,
    ``__setattr__`` of each class as Python source and compiles it, at every start: for
    the ~100 frozen dataclasses a plan imports (~150 a run) that was ~50 ms of every
    command, a quarter of ``scenarist plan``. The compiled code of each source text is kept
    in the per-user cache folder (the one ``dsl.source.fastschema`` uses, only when it is
    this user's alone), keyed by the text itself and the exact Python, so the classes are
    built from the same text to the same code, only without compiling it again. Only
    modules of ``dsl`` are concerned; any other module's dataclasses compile as always.
    """
    import contextlib
    import dataclasses
    import marshal
    import os
    import stat
    import sys

    if getattr(dataclasses, "exec", None) is not None or not hasattr(os, "getuid"):
        return
    try:
        base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
            os.path.expanduser("~"), ".cache")
        folder = os.path.join(base, "scenarist")
        path = os.path.join(folder, f"dataclasses-{sys.implementation.cache_tag}.code")
        st = os.lstat(folder)
    except OSError:
        return  # no cache folder yet: fastschema makes it (with its checks) on first use
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        return
    codes: dict[str, bytes] = {}
    damaged = ""  # why the file cannot be used (dsl/store/cachefile.py: checked before use)
    try:
        # a file of this user's own cache folder, written below, as __pycache__ is; opened
        # without blocking (a FIFO put there would wait forever), a regular file only
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        fd = -1
    except OSError as exc:
        fd, damaged = -1, f"it cannot be read: {exc.strerror or exc}"
    if fd >= 0:
        with open(fd, "rb") as f:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                damaged = "it is not a regular file"
            else:
                try:
                    kept = marshal.loads(f.read(MAX_CODE_CACHE_BYTES + 1))  # noqa: S302
                except (OSError, ValueError, EOFError, TypeError):
                    kept = None
                if not (isinstance(kept, tuple) and len(kept) == 2
                        and isinstance(kept[0], str) and isinstance(kept[1], dict)
                        and all(type(k) is str and type(v) is bytes
                                for k, v in kept[1].items())):
                    damaged = "it does not hold compiled code as Scenarist writes it"
                elif kept[0] == sys.version:  # another Python's: not used, written again
                    codes = kept[1]
    new: list[str] = []
    used: set[str] = set()
    code_type = type(_keep_dataclass_code.__code__)

    def exec_(source: Any, *args: Any, **kwargs: Any) -> None:
        # dataclasses calls exec(text, globals, namespace); any other call passes through
        scope = args[0] if args else kwargs.get("globals")
        if type(source) is str:
            if isinstance(scope, dict) and str(scope.get("__name__", "")).startswith("dsl."):
                code = None
                kept = codes.get(source)
                if kept is not None:
                    with contextlib.suppress(ValueError, EOFError, TypeError):
                        code = marshal.loads(kept)  # noqa: S302 (each when needed)
                    if type(code) is not code_type:
                        _damaged(path, "a class's compiled code cannot be read")
                if type(code) is not code_type:
                    code = compile(source, "<string>", "exec", dont_inherit=True)
                    codes[source] = marshal.dumps(code)
                    new.append(source)
                used.add(source)
                source = code
            else:
                # dont_inherit: as dataclasses.py's own exec() of a text compiles it (no
                # __future__ flags), whatever this module's flags
                source = compile(source, "<string>", "exec", dont_inherit=True)
        exec(source, *args, **kwargs)  # noqa: S102 (dataclasses' own call, unchanged)

    def save() -> None:
        nonlocal codes
        if not new and not damaged:
            return
        if len(codes) > 4000:  # texts of older versions pile up: keep this process's only
            codes = {text: codes[text] for text in used}
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "wb") as f:
                f.write(marshal.dumps((sys.version, codes)))
            os.replace(tmp, path)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    import atexit

    if damaged:
        _damaged(path, damaged)
        with contextlib.suppress(OSError):
            if not os.path.isdir(path):
                os.unlink(path)  # (written again below, as the classes are compiled)
    atexit.register(save)
    dataclasses.exec = exec_  # type: ignore[attr-defined]


MAX_CODE_CACHE_BYTES = 64 * 2**20


def _damaged(path: str, why: str) -> None:
    """One line that says the cache file is damaged, once — the words of
    dsl.store.cachefile.damaged_line, written here (importing it would import the very
    modules whose classes the cache is for, before it is in place; a test keeps the two
    equal)."""
    import sys

    if path in _SAID:
        return
    _SAID.add(path)
    shown = "".join(ch if ch.isprintable() else ch.encode("unicode_escape").decode("ascii")
                    for ch in path)
    sys.stderr.write(f"warning: Scenarist's cache of its compiled classes ({shown}) is "
                     f"damaged ({why}); it was ignored and is written again\n")


_SAID: set[str] = set()


_keep_dataclass_code()
