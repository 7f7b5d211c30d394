"""What the language server knows of the files an editor shows: which suite each belongs
to (the nearest ``scenarist.yaml``, as ``scenarist lint`` finds it), what kind of file it is,
the texts open in the editor (checked instead of what is saved), and each suite loaded
once per version of its ``scenarist.yaml`` (saved or unsaved).

Nothing here imports the LSP toolkit; :mod:`dsl.lsp.server` holds one :class:`Files`.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from ..compiler.discover import discover, is_excluded
from ..compiler.suite import Suite, load_suite
from ..errors import Collector
from ..source.load import Document, load_bytes
from ..source.suitefile import SUITE_FILE, find_suite_file

Kind = Literal["scenario", "suite", "table", "other"]
SCENARIO_SUFFIXES = (".yaml", ".yml")
TABLE_SUFFIXES = (".csv", ".jsonl")  # cases and world tables


def path_of(uri: str) -> Path | None:
    """The local file a ``file:`` URI names (resolved); None for any other URI."""
    parsed = urlparse(uri)
    if parsed.scheme != "file":
        return None
    raw = url2pathname(unquote(parsed.path))
    if not raw or "\x00" in raw:
        return None
    path = Path(raw)
    return path.parent.resolve() / path.name if path.is_absolute() else None


def uri_of(path: Path) -> str:
    return path.absolute().as_uri()


@dataclass(frozen=True, slots=True)
class FileInfo:
    """A file as the server sees it: its kind and its suite's ``scenarist.yaml`` (None:
    under no suite, or a scenario the suite's ``exclude:`` leaves out — then the server
    says nothing of it, as ``scenarist run`` would not run it)."""

    path: Path
    kind: Kind
    suite_file: Path | None


class Files:
    """The open texts and the suites, shared by the server's handlers (the event loop's
    thread) and its lint (a worker thread): guarded by one lock."""

    def __init__(self) -> None:
        self.texts: dict[Path, str] = {}
        self._suites: dict[Path, tuple[object, Suite]] = {}
        self._sound: dict[Path, Suite] = {}  # the last version of each without mistakes
        self._docs: dict[Path, tuple[str, Document]] = {}
        self._lock = threading.Lock()

    # ------------------------------------------------------------------ texts

    def opened(self, path: Path, text: str) -> None:
        with self._lock:
            self.texts[path] = text

    def closed(self, path: Path) -> None:
        with self._lock:
            self.texts.pop(path, None)
            self._docs.pop(path, None)

    def unsaved(self) -> dict[Path, str]:
        """The open texts, by path (what lint reads instead of the files)."""
        with self._lock:
            return dict(self.texts)

    def text(self, path: Path) -> str | None:
        """The text of a file: as open in the editor, else as saved (None: unreadable)."""
        with self._lock:
            found = self.texts.get(path)
        if found is not None:
            return found
        try:
            return path.read_text("utf-8", errors="replace")
        except OSError:
            return None

    # ------------------------------------------------------------------ kinds

    def info(self, path: Path) -> FileInfo:
        """What ``path`` is, and its suite."""
        suite_file = find_suite_file(path.parent)
        if path.name == SUITE_FILE:
            return FileInfo(path, "suite", path)
        suffix = path.suffix.lower()
        if suite_file is None:
            return FileInfo(path, "other", None)
        if suffix in TABLE_SUFFIXES:
            return FileInfo(path, "table", suite_file)
        if suffix in SCENARIO_SUFFIXES:
            suite = self.suite(suite_file)
            if _excluded(path, suite):
                return FileInfo(path, "other", None)
            return FileInfo(path, "scenario", suite_file)
        return FileInfo(path, "other", None)

    # ------------------------------------------------------------------ suites

    def suite(self, suite_file: Path) -> Suite:
        """The suite of ``suite_file`` (its open text, else the file), loaded once per
        version; its problems are lint's to report. While the text has mistakes (being
        typed), the last version without any: its names are still the ones to offer."""
        with self._lock:
            text = self.texts.get(suite_file)
        version: object = text if text is not None else _stamp(suite_file)
        with self._lock:
            kept = self._suites.get(suite_file)
        if kept is not None and kept[0] == version:
            return kept[1]
        problems = Collector()
        suite = load_suite(suite_file, problems, text)
        if problems.has_errors:
            with self._lock:
                sound = self._sound.get(suite_file)
            if sound is None and text is not None:  # the saved file, if it has none
                saved_problems = Collector()
                saved = load_suite(suite_file, saved_problems)
                sound = None if saved_problems.has_errors else saved
            suite = sound if sound is not None else suite
        else:
            with self._lock:
                self._sound[suite_file] = suite
        with self._lock:
            self._suites[suite_file] = (version, suite)
        return suite

    def forget(self, path: Path | None = None) -> None:
        """Forget what was loaded of ``path`` (every suite when None): a file changed on
        disk."""
        with self._lock:
            if path is None:
                self._suites.clear()
            else:
                self._suites.pop(path, None)

    # ------------------------------------------------------------------ documents

    def document(self, path: Path) -> Document | None:
        """The file's text loaded (positions of every value); when the text does not load
        (half-written), the last version that did; None when none did."""
        text = self.text(path)
        if text is None:
            return None
        with self._lock:
            kept = self._docs.get(path)
        if kept is not None and kept[0] == text:
            return kept[1]
        doc = load_bytes(text.encode("utf-8"), str(path))
        if doc.data is None and doc.salvaged is None:
            return kept[1] if kept is not None else None
        with self._lock:
            if path in self.texts:
                self._docs[path] = (text, doc)
        return doc

    def suite_members(self, suite_file: Path) -> list[Path]:
        """The suite's scenario files, as ``scenarist lint`` finds them (its ``exclude:``
        applied), and the open ones that are not saved yet."""
        found = discover([suite_file.parent], self.unsaved())
        files = [f.path for g in found.groups if g.suite_file == suite_file for f in g.files]
        extra = [p for p in self.unsaved() if p not in files and p.suffix in SCENARIO_SUFFIXES
                 and p.name != SUITE_FILE and self.info(p).suite_file == suite_file]
        return files + extra


def _stamp(path: Path) -> object:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


def _excluded(path: Path, suite: Suite) -> bool:
    return is_excluded(path, suite.root, suite.exclude)
