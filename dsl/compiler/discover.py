"""Discover: the files a command works on, each with the suite it belongs to.

``run`` and ``plan`` (:func:`dsl.compiler.compile.compile_paths`) and ``lint``
(:func:`dsl.compiler.lint.lint_paths`) start here, so they cannot disagree on which files are
scenarios, which suite a file belongs to, or which files a suite excludes: a file that
lint passes is one that a run of its suite accepts, and the reverse.

The rules, in the order they apply:

1. A path on the command line is a file, or a folder searched recursively for ``*.yaml``
   and ``*.yml`` (:func:`iter_yaml_files`: hidden files and folders and
   ``runs/`` are skipped, symlinked folders are not followed, the order is stable). A file
   met twice (named twice, or through a symlink) counts once.
2. Every ``scenarist.yaml``, named or met in a folder, is a suite and never a scenario.
   Every other file belongs to its *nearest* suite: the ``scenarist.yaml`` in its folder
   or in the closest folder above. A folder named on the command line brings its own
   nearest suite even when it holds no scenario file.
3. Each suite is loaded (:func:`dsl.compiler.suite.load_suite`), and its ``exclude:`` patterns
   (globs relative to the suite's folder) drop the files they match. A folder named on the
   command line is searched without what its own suite excludes: a suite of its own inside
   an excluded folder (``exclude: ["agents/**"]``) is not met there.
4. A suite is *whole* when every one of its scenario files is here: a folder at or above
   the suite's own was named, or all its files were named one by one. Lint reports unused
   library tools (W403) only for a whole suite.

What each command then does with the groups is its own rule: lint checks every group
against its own suite; run and plan need the files of exactly one suite (E211).

A :class:`Selection` (``--tag TAG`` and ``-k PATTERN`` on ``run``, ``plan`` and ``lint``)
then chooses among the scenarios these files hold — each case of a file with cases is one —
by their ids and tags, with the same rule in all three commands
(:meth:`Selection.selects`, applied by :func:`dsl.compiler.compile.compile_file` before a scenario
is compiled).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path

import msgspec

from ..errors import Collector, Diagnostic
from ..source.load import load_bytes, read_file
from .suite import SUITE_FILE, Suite, load_suite


class Selection(msgspec.Struct, frozen=True):
    """What the command line selects among the scenarios.

    ``tags``: ``--tag TAG`` (repeatable) — a scenario is selected when it has one of the
    tags given; ``--tag '!TAG'`` leaves out the scenarios that have TAG. ``patterns``:
    ``-k PATTERN`` (repeatable) — a scenario is selected when one pattern is part of its
    id, or matches the whole id as a glob (``*``, ``?``, ``[abc]``), in upper or lower
    case alike, as pytest's ``-k``. A pattern that ends in ``[CASE]`` names a case (a case
    id never holds ``[`` or ``]``): the scenario's id must end in that case (CASE may be a
    glob too) and the rest of the pattern select the rest of the id, as above —
    ``hours[es]`` and ``clinic.*[es]`` select ``clinic.hours_in_languages[es]``, never
    ``clinic.change_hours``. Both: a scenario must pass both."""

    tags: tuple[str, ...] = ()
    patterns: tuple[str, ...] = ()

    @property
    def active(self) -> bool:
        return bool(self.tags or self.patterns)

    def selects(self, scenario_id: str, tags: Iterable[str]) -> bool:
        if self.patterns:
            low = scenario_id.lower()
            if not any(_matches(low, p.lower()) for p in self.patterns):
                return False
        if self.tags:
            have = set(tags)
            wanted = [t for t in self.tags if not t.startswith("!")]
            if any(t[1:] in have for t in self.tags if t.startswith("!")):
                return False
            if wanted and not have.intersection(wanted):
                return False
        return True

    def flags(self) -> str:
        """The selection as it was written: ``--tag smoke -k refill``."""
        words = [f"--tag {_quoted(t)}" for t in self.tags]
        words += [f"-k {_quoted(p)}" for p in self.patterns]
        return " ".join(words)


EVERYTHING = Selection()  # no --tag, no -k

_CASE = re.compile(r"(?P<rest>.*)\[(?P<case>[^\[\]]*)\]\Z", re.S)


def _matches(scenario_id: str, pattern: str) -> bool:
    """One ``-k`` pattern against one id, both in lower case (see :class:`Selection`)."""
    named = _CASE.match(pattern)
    if named is None:
        return pattern in scenario_id or fnmatch.fnmatchcase(scenario_id, pattern)
    case = _CASE.match(scenario_id)
    if case is None or not (case["case"] == named["case"]
                            or fnmatch.fnmatchcase(case["case"], named["case"])):
        return False
    rest = named["rest"]
    return rest in case["rest"] or fnmatch.fnmatchcase(case["rest"], rest)


def _quoted(word: str) -> str:
    return f"'{word}'" if any(c in word for c in " !*?[]") else word


class ScenarioFile(msgspec.Struct, frozen=True):
    """One scenario file: where it is (symlinks resolved) and its name in messages
    (relative to the current folder when below it, otherwise as it was found)."""

    path: Path
    name: str


class SuiteFiles(msgspec.Struct, frozen=True):
    """The scenario files of one suite (or of none: ``suite_file`` is None for the files
    under no ``scenarist.yaml``)."""

    suite_file: Path | None  # resolved
    suite: Suite | None  # loaded; None when suite_file is None
    diagnostics: tuple[Diagnostic, ...]  # found while loading the suite
    files: tuple[ScenarioFile, ...]  # in the order found, the suite's exclusions applied
    whole: bool  # every scenario file of the suite is in ``files`` (never without a suite)


class Discovery(msgspec.Struct, frozen=True):
    """What :func:`discover` found: the groups in the order they were first met, and the
    nearest suite of each path as named (None: the path is under no suite)."""

    groups: tuple[SuiteFiles, ...]
    named: tuple[Path | None, ...]
    cwd: Path  # resolved; the root of scenario ids when there is no suite


def discover(paths: Sequence[Path], unsaved: Mapping[Path, str] | None = None) -> Discovery:
    """The scenario files under ``paths``, grouped by suite (the rules are this module's
    docstring). Loads each suite; never raises on bad input: a suite's problems are in
    its group's ``diagnostics``, a missing path is left to the caller to report.
    ``unsaved``: texts read instead of what some files hold, by their resolved path (an
    editor's unsaved ``scenarist.yaml``)."""
    unsaved = unsaved or {}
    where = _Where()
    found: dict[Path | None, dict[Path, Path]] = {}  # suite file -> real path -> as found
    seen: set[Path] = set()
    named: list[Path | None] = []
    walked: list[Path] = []

    def add(given: Path) -> None:
        real = where.real(given)
        if real in seen:
            return
        seen.add(real)
        if real.name == SUITE_FILE:
            found.setdefault(real, {})
        else:
            found.setdefault(where.suite_of(real.parent), {})[real] = given

    for p in paths:
        if p.is_dir():
            real_dir = p.resolve()
            walked.append(real_dir)
            suite_file = where.suite_of(real_dir)
            named.append(suite_file)
            if suite_file is not None:
                found.setdefault(suite_file, {})
            skip = _exclusion(suite_file, unsaved)
            for f in iter_yaml_files(p):
                if not skip(where.real(f)):
                    add(f)
        else:
            real = where.real(p)
            named.append(real if real.name == SUITE_FILE else where.suite_of(real.parent))
            add(p)
    groups = tuple(_group(suite_file, files, walked, where, unsaved)
                   for suite_file, files in found.items())
    return Discovery(groups, tuple(named), where.cwd)


def _group(suite_file: Path | None, files: dict[Path, Path], walked: list[Path],
           where: _Where, unsaved: Mapping[Path, str]) -> SuiteFiles:
    if suite_file is None:
        return SuiteFiles(None, None, (), _named(files, where), whole=False)
    diags = Collector()
    suite = load_suite(suite_file, diags, unsaved.get(suite_file))
    kept = {real: given for real, given in files.items()
            if not _excluded(real, suite.root, suite.exclude)}
    root = suite_file.parent
    whole = (any(w == root or w in root.parents for w in walked)
             or _every_file_is_here(suite, set(kept), walked))
    return SuiteFiles(suite_file, suite, tuple(diags.diagnostics), _named(kept, where), whole)


def _exclusion(suite_file: Path | None,
               unsaved: Mapping[Path, str]) -> Callable[[Path], bool]:
    """What a folder's suite excludes, met while searching the folder: a file, or another
    suite (its scenarist.yaml and files) inside an excluded folder, is not searched."""
    if suite_file is None:
        return lambda real: False
    patterns = _exclude_patterns(suite_file, unsaved.get(suite_file))
    root = suite_file.parent
    return lambda real: _excluded(real, root, patterns)


def _exclude_patterns(suite_file: Path, text: str | None = None) -> tuple[str, ...]:
    # its problems are reported when the suite is loaded
    data = (read_file(suite_file) if text is None else
            load_bytes(text.encode("utf-8"), str(suite_file))).data
    patterns = data.get("exclude") if isinstance(data, dict) else None
    return tuple(p for p in patterns if isinstance(p, str)) if isinstance(patterns,
                                                                          list) else ()


def _named(files: dict[Path, Path], where: _Where) -> tuple[ScenarioFile, ...]:
    return tuple(ScenarioFile(real, where.display(real, given)) for real, given in files.items())


def is_excluded(real: Path, root: Path, patterns: Sequence[str]) -> bool:
    """Does a suite at ``root`` leave the file ``real`` out (its ``exclude:`` patterns)?"""
    return _excluded(real, root, patterns)


def _excluded(real: Path, root: Path, patterns: Sequence[str]) -> bool:
    if not patterns:
        return False
    try:
        rel = real.relative_to(root).as_posix()
    except ValueError:
        return False
    return any(fnmatch.fnmatch(rel, pat) for pat in patterns)


def _every_file_is_here(suite: Suite, here: set[Path], walked: Sequence[Path]) -> bool:
    """Is every scenario file of the suite in ``here``? Walks the suite's folder as rule 1
    does, but not the folders of other suites, nor the ``walked`` folders (whose files
    were all found already); stops at the first file that is missing."""
    done = set(walked)

    def skip(folder: Path) -> bool:
        return folder in done or (folder / SUITE_FILE).is_file()  # walked, or another suite's

    for _, f in walk_yaml_files(suite.root, skip):
        if (f.name != SUITE_FILE and f not in here
                and not _excluded(f, suite.root, suite.exclude)):
            return False
    return True


class _Where:
    """Real paths, names for messages and nearest suites, with one system call per folder
    rather than per file."""

    def __init__(self) -> None:
        self.cwd = Path.cwd().resolve()
        self._dirs: dict[Path, Path] = {}
        self._suites: dict[Path, Path | None] = {}

    def real(self, path: Path) -> Path:
        if path.is_symlink():
            try:
                return path.resolve()
            except (OSError, RuntimeError):  # a symlink loop: reading it will say so
                return self.real(Path(os.path.abspath(path)).parent) / path.name
        parent = self._dirs.get(path.parent)
        if parent is None:
            parent = self._dirs[path.parent] = path.parent.resolve()
        return parent / path.name

    def display(self, real: Path, given: Path) -> str:
        """Relative to the current folder when below it (as ``dsl.compiler.suite.display_path``)."""
        try:
            return str(real.relative_to(self.cwd))
        except ValueError:
            return str(given)

    def suite_of(self, real_dir: Path) -> Path | None:
        """The nearest ``scenarist.yaml`` in ``real_dir`` or above it."""
        if real_dir in self._suites:
            return self._suites[real_dir]
        candidate = real_dir / SUITE_FILE
        if candidate.is_file():
            found: Path | None = candidate
        elif real_dir.parent == real_dir:
            found = None
        else:
            found = self.suite_of(real_dir.parent)
        self._suites[real_dir] = found
        return found


# ---- rule 1: the walk -------------------------------------------------------------------

class _BrokenLink(type(Path())):  # type: ignore[misc]
    """A symlink that leads nowhere (dangling, or a loop). ``resolve()`` gives the link's
    own absolute path instead of raising (pathlib raises RuntimeError on a loop), so the
    callers that resolve what they walk reach read_file, which reports the link."""

    def resolve(self, strict: bool = False) -> Path:
        return Path(os.path.abspath(self))


def iter_yaml_files(root: Path) -> Iterator[Path]:
    """``*.yaml`` and ``*.yml`` files under ``root`` in a stable order (sorted by their
    path's parts), skipping hidden files and folders and ``runs/``. Links named like a
    scenario that lead nowhere (dangling, or a loop) are yielded too: reading them reports
    them. Other entries that are not regular files (FIFOs, devices) are skipped."""
    for _, path in sorted(walk_yaml_files(root), key=lambda item: item[0]):
        yield path


def walk_yaml_files(root: Path, skip: Callable[[Path], bool] | None = None
                    ) -> Iterator[tuple[tuple[str, ...], Path]]:
    """The walk behind :func:`iter_yaml_files`, lazily and in the order the folders list
    their entries: each file with its path's parts below ``root``. Folders for which
    ``skip(folder)`` is true are not entered (nor are symlinked folders)."""
    stack: list[tuple[str, tuple[str, ...]]] = [(str(root), ())]
    while stack:
        folder, parts = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for e in entries:
            name = e.name
            if name.startswith("."):
                continue
            try:
                scenario = name.endswith((".yaml", ".yml"))
                if scenario and e.is_symlink() and not os.path.exists(e.path):
                    # a dangling link or a loop: read_file reports it, never skipped
                    yield (*parts, name), _BrokenLink(e.path)
                elif e.is_dir():
                    if (name != "runs" and not e.is_symlink()
                            and (skip is None or not skip(Path(e.path)))):
                        stack.append((e.path, (*parts, name)))
                elif scenario and e.is_file():
                    yield (*parts, name), Path(e.path)
            except OSError:
                continue
