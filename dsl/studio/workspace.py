"""The suite the studio serves: its scenario files (found as ``run`` and ``lint`` find
them), each one's last verdict from the history, reading, saving and creating files — and
the one rule for every path the page sends: resolved, and refused unless it is a scenario
file inside the suite.

A file is saved atomically (the store's ``write_atomic``), and only over the version the
page opened: when the file changed on disk since, the save is refused (:class:`Changed`)
until the person says to overwrite it.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

from ..compiler.compile import compile_paths
from ..compiler.discover import discover
from ..compiler.suite import SUITE_FILE, find_suite_file
from ..history import HistoryError, location_for, open_history
from ..store import write_atomic
from ..verdict import words

MAX_TEXT = 5 * 1024 * 1024  # the largest scenario file the page may send (as lint reads)
NAME = re.compile(r"^[\w][\w .-]*(/[\w][\w .-]*)*\.ya?ml$")

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


def version_of(data: bytes) -> str:
    """What the page keeps of the file it opened, to notice a change on disk."""
    return hashlib.sha256(data).hexdigest()


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

    def resolve(self, rel: str) -> Path:
        """The scenario file ``rel`` names, inside the suite; Refused otherwise (outside
        the suite, through a link that leads out, not ``*.yaml``/``*.yml``, or the suite
        file itself)."""
        if not isinstance(rel, str) or not rel or "\x00" in rel or rel.startswith("/"):
            raise Refused(f"'{rel}' is not a path inside the suite")
        path = (self.root / rel).resolve()
        if not path.is_relative_to(self.root) or path == self.root:
            raise Refused(f"'{rel}' is outside the suite's folder {self.root}")
        if path.suffix not in (".yaml", ".yml"):
            raise Refused(f"'{rel}' is not a scenario file (*.yaml or *.yml)")
        if path.name == SUITE_FILE:
            raise Refused(f"'{rel}' is the suite's own file; the studio edits scenarios")
        return path

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def scenario_files(self) -> list[Path]:
        """The suite's scenario files, as ``run`` and ``lint`` find them (the suite's
        ``exclude:`` applied; the files of a suite nested below belong to it, not here)."""
        found = discover([self.root])
        mine = self.root / SUITE_FILE
        return [f.path for g in found.groups if g.suite_file == mine for f in g.files
                if f.path.is_relative_to(self.root)]  # not a link that leads out

    def entries(self) -> list[Entry]:
        files = self.scenario_files()
        verdicts = _last_verdicts(self.root, files)
        return [Entry(self.relative(f), verdicts.get(f)) for f in files]

    def read(self, rel: str) -> tuple[str, str]:
        """The file's text and version."""
        path = self.resolve(rel)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise Missing(f"'{rel}' does not exist") from None
        except OSError as exc:
            raise Refused(f"cannot read '{rel}': {exc.strerror or exc}") from None
        return data.decode("utf-8", errors="replace"), version_of(data)

    def save(self, rel: str, text: str, base: str | None, overwrite: bool = False) -> str:
        """Write ``text`` to the file atomically over version ``base`` (None: a file the
        page created); Changed when the file on disk is another version, unless
        ``overwrite``. The new version."""
        path = self.resolve(rel)
        data = text.encode("utf-8")
        if len(data) > MAX_TEXT:
            raise Refused(f"'{rel}' would be larger than {MAX_TEXT // (1024 * 1024)} MiB")
        try:
            now: str | None = version_of(path.read_bytes())
        except FileNotFoundError:
            now = None
        if now != base and not overwrite:
            raise Changed(f"'{rel}' changed on disk since you opened it"
                          if now is not None else f"'{rel}' was deleted since you opened it")
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, data)
        return version_of(data)

    def create(self, name: str) -> str:
        """A new commented scenario at ``name`` (relative to the suite; ``.yaml`` added
        when it has no extension). Refused for a name that exists or is not a plain
        path."""
        name = name.strip()
        if name and not name.endswith((".yaml", ".yml")):
            name += ".yaml"
        if not NAME.match(name) or ".." in name.split("/"):
            raise Refused(f"'{name}' is not a file name the studio can create: use letters, "
                          "digits, spaces, '.', '-', '_' and '/' between folders, e.g. "
                          "clinic/greeting.yaml")
        path = self.resolve(name)
        if path.exists():
            raise Refused(f"'{self.relative(path)}' exists already; choose another name")
        description = path.stem.replace("_", " ").replace("-", " ").strip().capitalize()
        path.parent.mkdir(parents=True, exist_ok=True)
        write_atomic(path, NEW_SCENARIO.format(description=description or "A new scenario")
                     .encode("utf-8"))
        return self.relative(path)


def _last_verdicts(root: Path, files: list[Path]) -> dict[Path, str]:
    """Each file's last verdict in the history, in words: of the scenarios it compiles
    into, the worst verdict of each one's latest run (any target). Files that do not
    compile, or never ran, have none."""
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
    latest: dict[str, tuple[str, str]] = {}  # scenario -> (started_at, verdict)
    for (sid, _), points in trends.items():
        for p in points:
            when = p.started_at or ""
            if sid not in latest or when > latest[sid][0]:
                latest[sid] = (when, p.verdict)
    out: dict[Path, str] = {}
    wanted = set(files)
    for sid, (_, verdict) in latest.items():
        f = by_id[sid]
        if f not in wanted:
            continue
        old = out.get(f)
        if old is None or words(verdict).order < words(old).order:
            out[f] = verdict
    return {f: words(v).word for f, v in out.items()}
