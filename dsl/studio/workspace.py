"""The suite the studio serves: the files it may read and write, reading and saving them,
creating scenarios, and each scenario's last verdict from the history.

**The one rule for every path the page sends** (:meth:`Workspace.resolve`): it names, inside
the suite's folder, one of

* the suite's own ``scenarist.yaml`` (kind ``suite``);
* a scenario file — one ``scenarist run`` and ``lint`` find (:mod:`dsl.compiler.discover`),
  or, for a file not written yet, one they would find: ``*.yaml``/``*.yml``, in no hidden
  folder and not hidden itself, not under ``runs/``, not excluded by the suite, not in
  another suite below (kind ``scenario``);
* a world table's file or a cases file (``.csv``, ``.jsonl``) that the suite or one of its
  scenarios names (kind ``table``).

Anything else is refused (:class:`Refused`): ``.pre-commit-config.yaml``, ``.github/``,
``runs/``, ``.scenarist/``, a file outside the folder or reached through a link that leads
out. Only regular files are read or replaced: a FIFO, a device or a folder named like a
scenario is refused at once, never waited on.

A file is saved atomically — written to a new file with a unique name beside it, then
moved into place — and only over the version the page opened: when the file changed on
disk since, the save is refused (:class:`Changed`) until the person says to overwrite it.
Saves are serialised, so two saves over one version never both succeed. A file written
with CRLF line ends keeps them.
"""

from __future__ import annotations

import contextlib
import difflib
import hashlib
import os
import re
import stat
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..compiler.compile import compile_paths
from ..compiler.discover import _exclude_patterns, _excluded, discover
from ..compiler.suite import SUITE_FILE, find_suite_file
from ..history import HistoryError, location_for, open_history
from ..source.load import file_kind, read_file
from ..verdict import words

MAX_TEXT = 5 * 1024 * 1024  # the largest file the page may save or the studio reads
MAX_PATH = 1024  # characters of a path the page may send
MAX_NAME = 255  # bytes of one part of it (what a file system takes)
NAME = re.compile(r"^[\w][\w .-]*(/[\w][\w .-]*)*\.ya?ml$")
SCENARIO_SUFFIXES = (".yaml", ".yml")
TABLE_SUFFIXES = (".csv", ".jsonl")

NEW_SCENARIO = """\
# A scenario: given a moment (and tools), when the person says something,
# then the agent's answer should pass these checks. Reference: docs/scenarios.md.
description: {description}
given:
  # the moment the person speaks: date, time and UTC offset
  at: 2026-09-29T10:00:00-03:00
when: "Hello, what can you do for me?"
then:
  # each check must pass in an attempt; `scenarist checks` lists them all
  - non_empty
"""


class Refused(Exception):
    """A path or a request the studio will not act on (a sentence for the person)."""


class Missing(Exception):
    """The file named does not exist."""


class Changed(Exception):
    """The file changed on disk since the page opened it."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One scenario file, as the navigation lists it."""

    path: str  # relative to the suite's folder, with /
    verdict: str | None  # the last run's verdict in words (passed, failed, no verdict)


@dataclass(frozen=True, slots=True)
class FileText:
    """A file as the page gets it: its text, the version it was read at, its line ends
    (``\\r\\n`` or ``\\n``) and what it is (``suite``, ``scenario``, ``table``)."""

    text: str
    version: str
    eol: str
    kind: str


def version_of(data: bytes) -> str:
    """What the page keeps of the file it opened, to notice a change on disk."""
    return hashlib.sha256(data).hexdigest()


def eol_of(text: str) -> str:
    """The line end a text is written with: CRLF when its first line ends so."""
    first = text.find("\n")
    return "\r\n" if first > 0 and text[first - 1] == "\r" else "\n"


def suite_root(folder: Path) -> Path:
    """The folder of the suite at or above ``folder``; Refused when there is none."""
    found = find_suite_file(folder)
    if found is None:
        raise Refused(f"no {SUITE_FILE} in {folder} or above it; create a suite with: "
                      f"scenarist init {folder}")
    return found.parent


class Workspace:
    """The suite at ``root`` (resolved): every path the page names goes through
    :meth:`resolve`."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self.suite_file = self.root / SUITE_FILE
        self._saving = threading.Lock()

    # ------------------------------------------------------------------ the rule

    def resolve(self, rel: Any) -> Path:
        """The file ``rel`` names, when the studio may read and write it (this module's
        docstring); Refused otherwise."""
        path = self._inside(rel)
        if self.kind(path) is None:
            raise Refused(self._not_mine(rel, path))
        return path

    def kind(self, path: Path) -> str | None:
        """``suite``, ``scenario`` or ``table`` for a resolved path inside the suite the
        studio may touch; None for any other."""
        if path == self.suite_file:
            return "suite"
        parts = path.relative_to(self.root).parts
        if any(p.startswith(".") for p in parts) or "runs" in parts[:-1]:
            return None
        if path.suffix in SCENARIO_SUFFIXES:
            return "scenario" if self._would_be_scenario(path) else None
        if path.suffix in TABLE_SUFFIXES and path in self.named_tables():
            return "table"
        return None

    def _inside(self, rel: Any) -> Path:
        if not isinstance(rel, str) or not rel or "\x00" in rel or rel.startswith("/"):
            raise Refused(f"'{_shown(rel)}' is not a path inside the suite")
        if len(rel) > MAX_PATH:
            raise Refused(f"a path of {len(rel):,} characters is longer than the studio "
                          f"takes (at most {MAX_PATH:,})")
        try:
            parts = [p.encode("utf-8") for p in rel.split("/")]
        except UnicodeEncodeError:
            raise Refused(f"'{_shown(rel)}' is not a valid file name (it holds a lone "
                          "surrogate, which no file name can)") from None
        if any(len(p) > MAX_NAME for p in parts):
            raise Refused(f"'{_shown(rel)}' has a name longer than {MAX_NAME} bytes, which no "
                          "file system takes")
        try:
            path = (self.root / rel).resolve()
        except (OSError, RuntimeError) as exc:
            raise Refused(f"'{_shown(rel)}' cannot be followed: {_reason(exc)}") from None
        if not path.is_relative_to(self.root) or path == self.root:
            raise Refused(f"'{_shown(rel)}' is outside the suite's folder {self.root}")
        for folder in reversed(path.relative_to(self.root).parents[:-1]):
            if (self.root / folder).exists() and not (self.root / folder).is_dir():
                raise Refused(f"'{_shown(rel)}' is under '{folder.as_posix()}', which is a "
                              "file, not a folder")
        return path

    def _not_mine(self, rel: str, path: Path) -> str:
        if path.suffix in SCENARIO_SUFFIXES:
            return (f"'{_shown(rel)}' is not one of the suite's scenario files: the studio "
                    "opens scenario files, scenarist.yaml and the table files they name, "
                    "never hidden files, runs/ or what the suite excludes")
        return (f"'{_shown(rel)}' is not a file the studio opens: it opens the suite's "
                "scenario files, scenarist.yaml and the world and cases files they name")

    def _would_be_scenario(self, path: Path) -> bool:
        """A scenario file of this suite, or one it would be once written: no suite below
        the suite's folder is nearer, and the suite does not exclude it."""
        folder = path.parent
        while folder != self.root:
            if (folder / SUITE_FILE).exists():
                return False
            if folder.is_symlink():
                return False  # discovery does not follow linked folders
            folder = folder.parent
        return not _excluded(path, self.root, _exclude_patterns(self.suite_file))

    def named_tables(self) -> set[Path]:
        """The CSV and JSONL files the suite's world and its scenarios' worlds and
        ``cases_file`` name (resolved; only those inside the suite)."""
        out: set[Path] = set()

        def add(base: Path, name: Any) -> None:
            if isinstance(name, str) and name:
                try:
                    p = (base / name).resolve()
                except (OSError, RuntimeError, ValueError):
                    return
                if p.is_relative_to(self.root) and p.suffix in TABLE_SUFFIXES:
                    out.add(p)

        def tables(base: Path, world: Any) -> None:
            if isinstance(world, dict):
                for table in world.values():
                    if isinstance(table, dict):
                        add(base, table.get("file"))

        suite = read_file(self.suite_file).data
        if isinstance(suite, dict):
            tables(self.root, suite.get("world"))
        for f in self.scenario_files():
            data = read_file(f).data
            if not isinstance(data, dict):
                continue
            add(f.parent, data.get("cases_file"))
            given = data.get("given")
            if isinstance(given, dict):
                tables(f.parent, given.get("world"))
        return out

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    # ------------------------------------------------------------------ the files

    def scenario_files(self) -> list[Path]:
        """The suite's scenario files, as ``run`` and ``lint`` find them (the suite's
        ``exclude:`` applied; the files of a suite nested below belong to it, not here)."""
        found = discover([self.root])
        return [f.path for g in found.groups if g.suite_file == self.suite_file
                for f in g.files if f.path.is_relative_to(self.root)]  # no link that leads out

    def entries(self) -> list[Entry]:
        files = self.scenario_files()
        verdicts = _last_verdicts(self.root, files)
        return [Entry(self.relative(f), verdicts.get(f)) for f in files]

    def read(self, rel: Any) -> FileText:
        """The file's text, version, line ends and kind."""
        path = self.resolve(rel)
        data = _read_regular(path, rel)
        text = data.decode("utf-8", errors="replace")
        kind = self.kind(path)
        assert kind is not None
        return FileText(text, version_of(data), eol_of(text), kind)

    def save(self, rel: Any, text: str, base: str | None, overwrite: bool = False) -> str:
        """Write ``text`` to the file atomically over version ``base`` (None: a file not
        written yet); Changed when the file on disk is another version, unless
        ``overwrite``. A text with only ``\\n`` line ends is written with the file's CRLF
        when the file has them. The new version."""
        path = self.resolve(rel)
        with self._saving:
            try:
                old: bytes | None = _read_regular(path, rel)
            except Missing:
                old = None
            now = None if old is None else version_of(old)
            if now != base and not overwrite:
                raise Changed(f"'{rel}' changed on disk since you opened it"
                              if now is not None else
                              f"'{rel}' was deleted since you opened it")
            if old is not None and "\r\n" not in text \
                    and eol_of(old.decode("utf-8", errors="replace")) == "\r\n":
                text = text.replace("\n", "\r\n")
            data = _encoded(text, rel)
            path.parent.mkdir(parents=True, exist_ok=True)
            replace_atomically(path, data)
        return version_of(data)

    def create(self, name: str) -> str:
        """A new commented scenario at ``name`` (relative to the suite; ``.yaml`` added
        when it has no extension). Refused for a name that exists or is not a plain
        path."""
        name = name.strip()
        if name and not name.endswith(SCENARIO_SUFFIXES):
            name += ".yaml"
        if not NAME.match(name) or ".." in name.split("/"):
            raise Refused(f"'{_shown(name)}' is not a file name the studio can create: use "
                          "letters, digits, spaces, '.', '-', '_' and '/' between folders, "
                          "e.g. clinic/greeting.yaml")
        path = self.resolve(name)
        if os.path.lexists(path):
            raise Refused(f"'{self.relative(path)}' exists already; choose another name")
        description = path.stem.replace("_", " ").replace("-", " ").strip().capitalize()
        path.parent.mkdir(parents=True, exist_ok=True)
        with self._saving:
            replace_atomically(path, NEW_SCENARIO.format(
                description=description or "A new scenario").encode("utf-8"))
        return self.relative(path)

    def diff(self, rel: Any, mine: str) -> dict[str, Any]:
        """What changed on disk since the page opened the file: a unified diff of the text
        it opened (``mine``) against the file now, and the file's text and version."""
        try:
            now = self.read(rel)
        except Missing:
            return {"diff": [f"--- {rel} (as you opened it)", f"+++ {rel} (deleted since)"],
                    "text": None, "version": None}
        lines = list(difflib.unified_diff(
            mine.splitlines(), now.text.replace("\r\n", "\n").splitlines(),
            f"{rel} (as you opened it)", f"{rel} (on disk now)", lineterm="", n=2))
        return {"diff": lines, "text": now.text, "version": now.version}

    def versions(self, paths: Iterable[Any]) -> dict[str, str | None]:
        """The version on disk of each file named (None: it does not exist; a path the
        studio may not touch is left out)."""
        out: dict[str, str | None] = {}
        for rel in paths:
            try:
                out[rel] = self.read(rel).version
            except Missing:
                out[rel] = None
            except Refused:
                continue
        return out


def _shown(name: Any) -> str:
    """A name as a message quotes it: at most 80 characters, control characters and lone
    surrogates escaped."""
    text = name if isinstance(name, str) else repr(name)
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    text = "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)
    return text if len(text) <= 80 else text[:77] + "..."


def _reason(exc: BaseException) -> str:
    return (exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)).lower()


def _encoded(text: str, rel: Any) -> bytes:
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        raise Refused(f"the text for '{_shown(rel)}' holds a lone surrogate, which is not "
                      "valid Unicode: it cannot be saved") from None
    if len(data) > MAX_TEXT:
        raise Refused(f"'{_shown(rel)}' would be larger than the studio saves "
                      f"({MAX_TEXT // 2**20} MiB)")
    return data


_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)


def _read_regular(path: Path, rel: Any) -> bytes:
    """The bytes of a regular file of at most MAX_TEXT bytes: Missing when there is none,
    Refused for a FIFO, a device or a folder (never waited on), or a larger file."""
    try:
        fd = os.open(path, _OPEN_FLAGS)  # O_NONBLOCK: a FIFO would wait for a writer
    except FileNotFoundError:
        raise Missing(f"'{_shown(rel)}' does not exist") from None
    except OSError as exc:
        raise Refused(f"cannot read '{_shown(rel)}': {_reason(exc)}") from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise Refused(f"'{_shown(rel)}' is {file_kind(st.st_mode)}, not a file the "
                          "studio reads")
    except BaseException:
        os.close(fd)
        raise
    with open(fd, "rb") as f:
        if st.st_size > MAX_TEXT:
            raise Refused(f"'{_shown(rel)}' is larger than the studio opens "
                          f"({MAX_TEXT // 2**20} MiB)")
        try:
            data = f.read(MAX_TEXT + 1)
        except OSError as exc:
            raise Refused(f"cannot read '{_shown(rel)}': {_reason(exc)}") from None
    if len(data) > MAX_TEXT:
        raise Refused(f"'{_shown(rel)}' is larger than the studio opens "
                      f"({MAX_TEXT // 2**20} MiB)")
    return data


def replace_atomically(path: Path, data: bytes) -> None:
    """Put ``data`` at ``path`` at once: written to a new file with a unique name in the
    same folder (hidden, so no scenario search meets it), flushed, then moved over the
    old file, whose permissions it keeps. Refused when what is at ``path`` is not a
    regular file (a FIFO, a device, a folder)."""
    try:
        st: os.stat_result | None = os.stat(path)
    except FileNotFoundError:
        st = None
    except OSError as exc:
        raise Refused(f"cannot write {path.name}: {_reason(exc)}") from None
    if st is not None and not stat.S_ISREG(st.st_mode):
        raise Refused(f"'{path.name}' is {file_kind(st.st_mode)}, not a file the studio "
                      "writes")
    if st is not None:
        mode = stat.S_IMODE(st.st_mode)
    else:
        umask = os.umask(0)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _last_verdicts(root: Path, files: list[Path]) -> dict[Path, str]:
    """Each file's last verdict in the history, in words: for each scenario it compiles
    into, its latest run, over every target of that run (failed when any target failed);
    of several scenarios in one file (cases), the worst. Files that do not compile, or
    never ran, have none."""
    compiled = compile_paths([root])
    if compiled.suite is None or not compiled.scenarios:
        return {}
    by_id = {s.id: (root / s.file).resolve() for s in compiled.scenarios}
    keys = [(sid, t) for sid in by_id for t in compiled.suite.targets]
    location = location_for(root, compiled.suite.history)
    if location is None or (location.kind == "sqlite" and not Path(location.target).exists()):
        return {}  # no history yet: looking creates none
    try:
        with open_history(location) as store:
            trends = store.trends(keys, limit=1)
    except HistoryError:
        return {}
    points: dict[str, list[tuple[str, str, str]]] = {}  # scenario -> (when, run, verdict)
    for (sid, _), found in trends.items():
        for p in found:
            points.setdefault(sid, []).append((p.started_at or "", p.run_id, p.verdict))
    out: dict[Path, str] = {}
    wanted = set(files)
    for sid, seen in points.items():
        f = by_id[sid]
        if f not in wanted:
            continue
        latest = max(seen)[1]  # the run that started last
        for _, run, verdict in seen:
            if run != latest:
                continue
            old = out.get(f)
            if old is None or words(verdict).order < words(old).order:
                out[f] = verdict
    return {f: words(v).word for f, v in out.items()}
