"""``scenarist import`` as a function: sources in, scenario files and located problems out.

:func:`import_conversations` is what the command line calls, and what the studio's
"Import conversations" calls with the files a person chose (:class:`Upload`). It writes
nothing half-way: a name that exists refuses the whole import before anything is written
(:class:`ImportRefused`), and each file is written whole, atomically, or not at all.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from ..compiler.lint import lint_paths
from ..compiler.redact import redactor_for
from ..compiler.suite import DEFAULTS, load_suite
from ..errors import Collector, NotReady, RunDirError
from ..source.suitefile import find_suite_file
from ..store import write_new
from . import openai, otel, runfolder
from .conversation import Built, Place, Problem, stated_moment
from .names import unique
from .runfolder import Attempt
from .scenario import Draft, NotExact, write
from .secrets import Cleaner, scanning
from .sources import FORMATS, Format, Source, Unreadable, detect, is_run_folder, shown

IMPORTED = "imported"  # the folder, in the suite's, that receives the scenarios by default


class ImportRefused(NotReady):
    """The import cannot start or finish as things are (a file it would write exists, an
    attempt named is not in the run); nothing was written. One sentence."""


@dataclass(frozen=True, slots=True)
class Written:
    """A scenario file written: where, and what it holds."""

    path: Path
    turns: int
    calls: int


@dataclass(frozen=True, slots=True)
class ImportResult:
    """What an import did: the files written, in order, and every problem met (each with
    its place; what they concern was left out, the rest imported)."""

    written: tuple[Written, ...]
    problems: tuple[Problem, ...]


def default_folder(start: Path) -> Path:
    """Where scenarios go without ``--into``: ``imported/`` in the suite of ``start`` (the
    folder of the nearest ``scenarist.yaml``), else in ``start``."""
    suite = find_suite_file(start)
    return (suite.parent if suite is not None else start) / IMPORTED


def import_conversations(sources: Sequence[Source], into: Path, *,
                         format: Format | None = None, world: bool = False,
                         attempts: Sequence[Attempt] = (),
                         now: dt.datetime | None = None) -> ImportResult:
    """Read every conversation of ``sources`` (paths, or uploaded bytes), and write one
    scenario a conversation into ``into``. ``format``: every source's (default: read from
    each one's content); ``world``: read tools become table tools where exact;
    ``attempts``: the attempts of a run folder to import (default: every failed one);
    ``now``: the time written into a scenario whose log holds none.

    The scenarios use the redaction and ``max_steps`` of the suite ``into`` belongs to (its
    nearest ``scenarist.yaml``), and are written only when they lint clean in it
    (``--strict``). ImportRefused when a file it would write exists."""
    if attempts and not any(isinstance(s, Path) and is_run_folder(s) for s in sources):
        raise ImportRefused("--attempt names attempts of a run folder, and no PATH is one "
                            "(a folder with results.jsonl and plan.json)")
    problems: list[Problem] = []
    redactor, max_steps = _suite_settings(into, problems)
    built: list[Built] = []
    for source in sources:
        built.extend(_read(source, format, attempts, problems))
    cleaner = Cleaner(redactor, problems)
    drafts: list[Draft] = []
    with scanning():
        for b in built:
            problems.extend(b.problems)
            if b.conversation is None:
                continue
            conversation = cleaner.conversation(stated_moment(b.conversation))
            try:
                drafts.append(write(conversation, world=world, max_steps=max_steps, now=now))
            except NotExact as exc:
                problems.append(Problem(conversation.place, f"no scenario was written for "
                                                            f"this conversation: {exc}"))
    names = unique([d.name for d in drafts])
    planned = [(into / f"{name}.yaml", replace(d, name=name)) for name, d in zip(names, drafts,
                                                                              strict=True)]
    there = [p for p, _ in planned if p.exists() or p.is_symlink()]
    if there:
        listed = ", ".join(shown(p) for p in there)
        raise ImportRefused(f"{listed} already exist{'s' if len(there) == 1 else ''}: "
                            "scenarist import never replaces a file (nothing was written); "
                            "move or rename it, or import into another folder with --into")
    if planned:
        into.mkdir(parents=True, exist_ok=True)
    clean = _lint_clean(planned, problems)
    written = []

    for path, draft in planned:
        if path not in clean:
            continue
        try:
            write_new(path, draft.text.encode("utf-8"))
        except FileExistsError:
            problems.append(Problem(Place(shown(path)), "was made by something else while "
                                                        "importing: not replaced"))
            continue
        written.append(Written(path, draft.turns, draft.calls))
    said = [Problem(p.place, redactor(p.message)) for p in problems]  # an endpoint's words too
    return ImportResult(tuple(written), tuple(sorted(said, key=_order)))


def _order(p: Problem) -> tuple[str, int]:
    """Problems in the order of their places: by file, then line (a span's, an attempt's
    and a whole file's keep the order they were met in)."""
    return p.place.file, p.place.line or 0


def _read(source: Source, format: Format | None, attempts: Sequence[Attempt],
          problems: list[Problem]) -> list[Built]:
    """The conversations of one source (its problems added to ``problems``)."""
    name = shown(source)
    fmt = format or detect_or_none(source)
    if fmt is None:
        known = " or ".join(FORMATS)
        problems.append(Problem(Place(name), "not a format scenarist import reads (an OpenAI "
                                             "gateway log, an OTLP/JSON trace export, a "
                                             f"Scenarist run folder): give --format ({known}) "
                                             "if it is one"))
        return []
    try:
        match fmt:
            case "openai":

                return openai.read(source, problems)
            case "otel":

                return otel.read(source, problems)
            case "scenarist":

                if not isinstance(source, Path) or not is_run_folder(source):
                    problems.append(Problem(Place(name), "not a Scenarist run folder (a "
                                                         "folder with results.jsonl and "
                                                         "plan.json)"))
                    return []
                return runfolder.read(source, attempts, problems)
    except Unreadable as exc:
        problems.append(Problem(Place(name, exc.line), exc.message))
    except RunDirError as exc:
        problems.append(Problem(Place(name), str(exc)))
    return []


def detect_or_none(source: Source) -> Format | None:
    try:
        return detect(source)
    except Unreadable:
        return "openai"  # let its reader say why it cannot be read


def _suite_settings(into: Path, problems: list[Problem]) -> tuple[Any, int]:
    """The redaction and the ``max_steps`` of the suite ``into`` belongs to; the default
    key patterns and ``max_steps`` without one."""
    file = find_suite_file(into)
    if file is None:
        return redactor_for(None, ()), DEFAULTS.max_steps
    diags = Collector()
    suite = load_suite(file, diags)
    if diags.has_errors:
        problems.append(Problem(Place(shown(file)), "has errors (scenarist lint shows them): "
                                                    "its redact patterns may not all apply"))
    return redactor_for(suite.redact, suite.targets.values()), suite.defaults.max_steps


def _lint_clean(planned: Sequence[tuple[Path, Draft]], problems: list[Problem]) -> set[Path]:
    """The files that lint clean with ``--strict`` in their suite, as they would be
    written; for any other, a problem with lint's first word on it (a bug of the import)."""
    if not planned:
        return set()
    texts = {p.resolve(): d.text for p, d in planned}
    result = lint_paths([p for p, _ in planned], strict=True, unsaved=texts)
    bad: dict[Path, str] = {}
    by_name = {shown(p): p for p, _ in planned}
    resolved = {p.resolve(): p for p, _ in planned}
    for d in result.diagnostics:
        path = by_name.get(d.span.file) or resolved.get(Path(d.span.file).resolve())
        if path is not None and path not in bad:
            bad[path] = f"{d.code} {d.message} (line {d.span.line})"
    for path, why in bad.items():
        problems.append(Problem(Place(shown(path)), f"not written: the scenario made for it "
                                                    f"does not lint clean ({why})"))
    return {p for p, _ in planned if p not in bad}


__all__ = ["IMPORTED", "ImportRefused", "ImportResult", "Written", "default_folder",
           "import_conversations"]
