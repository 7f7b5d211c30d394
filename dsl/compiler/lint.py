"""Lint: every check a run makes before it calls a model, on every file, and the warnings
for what is legal but likely wrong — reported for people, editors and CI.

The stage, in the order it runs:

1. **Discover** the files named on the command line (files, or folders searched
   recursively), grouped by their suite, exactly as ``run`` and ``plan`` find them
   (:func:`dsl.compiler.discover.discover`): the nearest ``scenarist.yaml`` in the file's folder or
   above, its ``exclude:`` patterns applied. A ``scenarist.yaml`` named directly, or met
   in a folder, is linted as the suite it is. Files under no suite are linted without
   one. Unlike a run, one lint may check several suites.
2. **Compile** each suite (loaded while discovering) and each scenario file
   (:func:`dsl.compiler.compile.compile_document`): load, validate and compile, exactly as a run
   does, so lint finds what a run would refuse. Large batches are split across the
   machine's cores (``os.fork`` after the imports; one process does its share, the others
   send theirs back through a pipe).
3. **Warn** (``W4xx``) about scenarios and suites that are legal but likely wrong: see
   :func:`scenario_warnings` and :func:`suite_warnings`.
4. **Report**: ``--strict`` turns warnings into errors; one diagnostic is kept per place
   (:func:`dsl.errors.best_per_place`), sorted by file, line and column; then printed as
   ``text`` (the source line and a caret), ``json`` or ``github`` (workflow commands).

Unused library tools (``W403``) are reported only when every scenario of the suite was
linted — the suite's folder (or one above it) was named, or all its files were (the
suite is *whole*, :class:`dsl.compiler.discover.SuiteFiles`) — since a tool that no scenario *in
this batch* uses may be used by one that was not linted.
"""

from __future__ import annotations

import gc
import json
import math
import os
import pickle
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from ..checks import REGISTRY, label
from ..checks.answer import REDACTION_MARK
from ..checks.registry import Offered
from ..errors import (
    CODES,
    Collector,
    Diagnostic,
    Span,
    best_per_place,
    gh_data,
    gh_property,
    quoted_list,
    render,
)
from ..model import Scenario
from ..source.load import DataPath, Document, load_bytes, read_file, source_lines
from ..source.schemacheck import same_json
from ..store.background import forkable
from ..targets.kinds import AgentNeeds, holds_calls, kind_of
from ..verdict import min_pass_for
from .compile import CheckItem, compile_file, id_span, nothing_selected, read_check_item
from .discover import EVERYTHING, Selection, SuiteFiles, discover
from .suite import DEFAULTS, Suite

Format = Literal["text", "json", "github"]
JSON_SCHEMA_VERSION = 1

# Below this many files, forking costs more than it saves.
PARALLEL_MIN_FILES = 64
COMMAND_LINE = "<command line>"


# ---------------------------------------------------------------- results


@dataclass(frozen=True, slots=True)
class FileReport:
    """What linting one scenario file found (small, so a worker process can send it)."""

    file: str
    diagnostics: tuple[Diagnostic, ...]
    scenarios: tuple[tuple[str, Span], ...]  # the ids it compiled into, where each is given
    uses: tuple[str, ...]  # names in given.tools: the library tools the file uses
    excerpts: dict[str, dict[int, str]]  # the source lines the diagnostics point at, by file
    considered: int = 1  # scenarios it holds (each case one), before the selection
    tools: bool = False  # a scenario it holds has tools
    holds: bool = False  # a scenario it holds has a tool with confirm: true


@dataclass(slots=True)
class LintResult:
    """Every diagnostic of a lint, sorted, one per place, ``--strict`` applied.
    ``selected``: the scenarios the selection kept (None without ``--tag`` or ``-k``)."""

    files: int
    diagnostics: list[Diagnostic]
    excerpts: dict[str, dict[int, str]] = field(default_factory=dict)
    selected: int | None = None

    @property
    def errors(self) -> int:
        return sum(d.severity == "error" for d in self.diagnostics)

    @property
    def warnings(self) -> int:
        return sum(d.severity == "warning" for d in self.diagnostics)

    def of_file(self, path: Path) -> list[Diagnostic]:
        """The diagnostics in the file at ``path`` (resolved), as lint names files: relative
        to the current folder, or absolute."""
        return [d for d in self.diagnostics if not d.span.file.startswith("<")
                and Path(d.span.file).absolute().resolve() == path]

    def source_lines(self, file: str) -> list[str] | None:
        """The file's lines as the renderer wants them (only the ones it will show)."""
        lines = self.excerpts.get(file)
        if not lines:
            return None
        out = [""] * max(lines)
        for n, text in lines.items():
            out[n - 1] = text
        return out


# ---------------------------------------------------------------- linting


def lint_text(path: Path, text: str, *, strict: bool = False,
              unsaved: Mapping[Path, str] | None = None) -> LintResult:
    """Lint ``text`` as the file at ``path`` would be linted once saved with it — an
    editor's unsaved buffer (``scenarist studio``, ``scenarist lsp``): the same discovery,
    suite and diagnostics as :func:`lint_paths` on that one file. The file need not exist.
    ``unsaved``: other unsaved texts by resolved path (the editor's ``scenarist.yaml``)."""
    real = path.parent.resolve() / path.name
    return lint_paths([real], strict=strict, jobs=1, unsaved={**(unsaved or {}), real: text})


def lint_paths(paths: Sequence[Path], *, strict: bool = False,
               jobs: int | None = None, selection: Selection = EVERYTHING,
               unsaved: Mapping[Path, str] | None = None) -> LintResult:
    """Lint every file under ``paths`` (found by :func:`dsl.compiler.discover.discover`, each
    against its own suite); never raises on bad input. ``jobs``: processes to use
    (default: one per core for large batches). ``selection``: only the scenarios it
    selects are linted (``--tag``, ``-k``: as run and plan select them); when it selects
    none, the result is the one diagnostic E220. ``unsaved``: texts linted instead of
    what some files hold, by their resolved path (:func:`lint_text`)."""
    found: list[Diagnostic] = []
    excerpts: dict[str, dict[int, str]] = {}
    paused = gc.isenabled()
    gc.disable()  # the batch makes many objects and no cycles: collecting costs ~40%
    try:
        discovery = discover(paths, unsaved)
        work: list[tuple[int, Path, str]] = []
        for gi, g in enumerate(discovery.groups):
            found.extend(g.diagnostics)
            if g.suite is not None and g.suite.doc is not None:
                _add_excerpt(excerpts, g.suite.doc, g.diagnostics)
            work.extend((gi, f.path, f.name) for f in g.files)
        linter = _Linter(discovery.groups, discovery.cwd, selection, unsaved or {})
        reports = _map(linter.file, work,
                       _jobs(jobs, len(work), lambda: _holds_cases(w[1] for w in work)))
    finally:
        if paused:
            gc.enable()
    by_group: dict[int, list[FileReport]] = {}
    for (gi, _, _), report in zip(work, reports, strict=True):
        by_group.setdefault(gi, []).append(report)
        found.extend(report.diagnostics)
        for file, lines in report.excerpts.items():
            excerpts.setdefault(file, {}).update(lines)
    if selection.active and not any(r.scenarios for r in reports):
        return LintResult(len(work), [nothing_selected(
            selection, sum(r.considered for r in reports))], {}, 0)
    for gi, g in enumerate(discovery.groups):
        group_reports = by_group.get(gi, [])
        found.extend(_duplicate_ids(group_reports))
        if g.suite is not None:
            # with a selection, some scenarios were not linted: a tool may be theirs
            whole = g.whole and not selection.active
            suite_diags = suite_warnings(g.suite, group_reports if whole else None)
            suite_diags += target_warnings(g.suite, group_reports)
            found.extend(suite_diags)
            if g.suite.doc is not None:
                _add_excerpt(excerpts, g.suite.doc, suite_diags)
    if not work and not any(g.suite_file for g in discovery.groups):
        found.append(Diagnostic(
            Span(COMMAND_LINE, 1, 1), "E212",
            f"no scenario files (*.yaml) in {quoted_list([str(p) for p in paths])}",
            "name scenario files or the folder that holds them",
        ))
    if strict:
        found = [_as_error(d) for d in found]
    chosen = best_per_place(found)
    sources = {name: real for _, real, name in work}
    sources.update((g.suite.file, g.suite_file) for g in discovery.groups
                   if g.suite is not None and g.suite_file is not None)
    _fill_excerpts(excerpts, chosen, sources)
    selected = sum(len(r.scenarios) for r in reports) if selection.active else None
    return LintResult(len(work), chosen, excerpts, selected)


def _fill_excerpts(excerpts: dict[str, dict[int, str]], diagnostics: list[Diagnostic],
                   files: dict[str, Path]) -> None:
    """Source lines for diagnostics made apart from their file's own report (duplicate
    ids; a scenario's check reported in scenarist.yaml)."""
    read: dict[str, list[str]] = {}
    for d in diagnostics:
        if d.span.line in excerpts.get(d.span.file, {}) or d.span.file not in files:
            continue
        if d.span.file not in read:
            read[d.span.file] = _lines(files[d.span.file])
        lines = read[d.span.file]
        if 1 <= d.span.line <= len(lines):
            excerpts.setdefault(d.span.file, {})[d.span.line] = lines[d.span.line - 1]


def _lines(path: Path) -> list[str]:
    """A file's lines for showing, or none for a file too large, binary or not a regular
    file (a FIFO is never waited on)."""
    return source_lines(path)


class _Linter:
    """Lints one file of a group; lives in every worker process (forked, not pickled)."""

    def __init__(self, groups: Sequence[SuiteFiles], cwd: Path,
                 selection: Selection = EVERYTHING,
                 unsaved: Mapping[Path, str] | None = None) -> None:
        self.groups = groups
        self.cwd = cwd
        self.selection = selection
        self.unsaved = unsaved or {}

    def file(self, item: tuple[int, Path, str]) -> FileReport:
        gi, real, name = item
        suite = self.groups[gi].suite
        root = suite.root if suite is not None else self.cwd
        diags = Collector()
        text = self.unsaved.get(real)
        doc = read_file(real, name) if text is None else load_bytes(text.encode("utf-8"), name)

        def warn(scenario: Scenario, compiled_doc: Document) -> None:
            diags.extend(scenario_warnings(scenario, compiled_doc, suite))

        found = compile_file(doc, suite, root, diags, selection=self.selection, each=warn)
        data = doc.data if isinstance(doc.data, dict) else {}
        excerpts: dict[str, dict[int, str]] = {}
        _add_excerpt(excerpts, doc, diags.diagnostics)
        for other in {d.span.file for d in diags.diagnostics} - {name, COMMAND_LINE}:
            wanted = {d.span.line for d in diags.diagnostics if d.span.file == other}
            lines = _lines(Path(other))
            excerpts[other] = {n: lines[n - 1] for n in wanted if 1 <= n <= len(lines)}
        return FileReport(
            file=name,
            diagnostics=tuple(diags.diagnostics),
            scenarios=tuple((s.id, id_span(doc, s)) for s in found.scenarios),
            uses=_library_names(data),
            excerpts=excerpts,
            considered=found.considered,
            tools=any(s.tools for s in found.scenarios),
            holds=any(t.confirm for s in found.scenarios for t in s.tools),
        )


def _library_names(data: dict[str, Any]) -> tuple[str, ...]:
    given = data.get("given")
    tools = given.get("tools") if isinstance(given, dict) else None
    if not isinstance(tools, list):
        return ()
    return tuple(t for t in tools if isinstance(t, str))


def _add_excerpt(excerpts: dict[str, dict[int, str]], doc: Document,
                 diagnostics: Iterable[Diagnostic]) -> None:
    wanted = {d.span.line for d in diagnostics if d.span.file == doc.path}
    if not wanted or not doc.text:
        return
    lines = doc.text.splitlines()
    mine = excerpts.setdefault(doc.path, {})
    for n in wanted:
        if 1 <= n <= len(lines):
            mine[n] = lines[n - 1]


def _duplicate_ids(reports: list[FileReport]) -> list[Diagnostic]:
    out = []
    first: dict[str, str] = {}
    for r in reports:
        for sid, at in r.scenarios:
            if sid in first:
                out.append(Diagnostic(at, "E205",
                                      f"the scenario id '{sid}' is already used by "
                                      f"{first[sid]}",
                                      "give one of them a different 'id'"))
            else:
                first[sid] = r.file
    return out


def _as_error(d: Diagnostic) -> Diagnostic:
    if d.severity == "error":
        return d
    return Diagnostic(d.span, d.code, d.message, d.hint, "error")


# ---------------------------------------------------------------- processes

T = TypeVar("T")
R = TypeVar("R")


def _jobs(jobs: int | None, count: int, heavy: Callable[[], bool] = lambda: False) -> int:
    """Processes for ``count`` files: one per core for a large batch — or for a few files
    that are large batches themselves (``heavy``: some hold cases)."""
    if not forkable():  # no fork here, or a thread that a fork could leave holding a lock
        return 1
    if jobs is None:
        if count < PARALLEL_MIN_FILES and (count < 2 or not heavy()):
            return 1
        jobs = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
            os.cpu_count() or 1)
    return max(1, min(jobs, count))


def _holds_cases(paths: Iterable[Path]) -> bool:
    """Does one of these scenario files have cases (each a scenario to compile)?"""
    for p in paths:
        try:
            with p.open("rb") as f:
                head = f.read(MAX_SCAN_BYTES)
        except OSError:
            continue
        if b"cases_file:" in head or b"\ncases:" in head or head.startswith(b"cases:"):
            return True
    return False


MAX_SCAN_BYTES = 64 * 1024


def _map(func: Callable[[T], R], items: list[T], jobs: int) -> list[R]:
    """``[func(x) for x in items]`` across ``jobs`` processes. Each forked child takes
    every ``jobs``-th item, computes, and sends its results back pickled through a pipe
    while this process does its own share. A child that fails has its share redone here,
    so an error in Scenarist surfaces here, with its traceback."""
    if jobs <= 1 or len(items) < 2:
        return [func(x) for x in items]
    # One item here first: what the files need (the schema validator, the expression
    # parser, compiled patterns) is then loaded once and shared with the children.
    head = func(items[0])
    return [head, *_map_forked(func, items[1:], jobs)]


def _map_forked(func: Callable[[T], R], items: list[T], jobs: int) -> list[R]:
    shares = [items[k::jobs] for k in range(jobs)]
    children: list[tuple[int, int]] = []
    gc.freeze()  # keep the parent's objects out of the children's collections (and pages)
    try:
        for share in shares[1:]:
            read_end, write_end = os.pipe()
            try:
                pid = os.fork()
            except OSError:  # no more processes: this one does the share
                os.close(read_end)
                os.close(write_end)
                children.append((-1, -1))
                continue
            if pid == 0:  # pragma: no cover - the child; measured by the benchmark
                status = 1
                try:
                    os.close(read_end)
                    payload = pickle.dumps([func(x) for x in share], pickle.HIGHEST_PROTOCOL)
                    with os.fdopen(write_end, "wb") as out:
                        out.write(payload)
                    status = 0
                finally:
                    os._exit(status)
            os.close(write_end)
            children.append((pid, read_end))
        results = [[func(x) for x in shares[0]]]
        for (pid, read_end), share in zip(children, shares[1:], strict=True):
            payload, status = b"", 1
            if pid > 0:
                with os.fdopen(read_end, "rb") as pipe:
                    payload = pipe.read()
                _, status = os.waitpid(pid, 0)
            if status == 0 and payload:
                results.append(pickle.loads(payload))  # noqa: S301 - our own child's output
            else:
                results.append([func(x) for x in share])
    finally:
        gc.unfreeze()
    return [results[i % jobs][i // jobs] for i in range(len(items))]


# ---------------------------------------------------------------- warnings


def _check_place(doc: Document, item: CheckItem) -> Span:
    """Where a check item starts: its check's name."""
    return doc.key_span(item.path)


def _check_lists(data: dict[str, Any]) -> list[tuple[DataPath, list[Any]]]:
    """Every ``then`` list of a scenario: its own, and each turn's."""
    out: list[tuple[DataPath, list[Any]]] = [(("then",), data.get("then") or [])]
    when = data.get("when")
    if isinstance(when, list):
        out += [(("when", i, "then"), t.get("then") or []) for i, t in enumerate(when)
                if isinstance(t, dict)]
    return out


def scenario_warnings(s: Scenario, doc: Document, suite: Suite | None) -> list[Diagnostic]:
    """W401, W402, W404, W405, W406 and W409 for one compiled scenario (W404 for
    ``not_calls`` comes from the check itself, while it compiles)."""
    data: dict[str, Any] = doc.data
    lists = _check_lists(data)
    out = Collector()

    if not any(items for _, items in lists):
        out.warning(doc.key_span(("then",) if "then" in data else ("when",)), "W402",
                    "this scenario has no checks, so every attempt passes",
                    "add at least one check under 'then', e.g. - contains: \"18:00\"")

    targets = [t for t in (suite.targets.values() if suite is not None else ())
               if s.runs_on(t.name)]
    offered = Offered(s.tools, any(holds_calls(t) for t in targets))
    items: list[CheckItem] = [c.item for c in s.all_checks]  # as written, with their places
    if None in items:  # checks not made by compile_check: read them
        items = []
        for path, raw_items in lists:
            spans = doc.item_spans(path)
            read = (read_check_item(raw, (*path, i), spans[i]) for i, raw in enumerate(raw_items)
                    if i < len(spans))
            items += [item for item in read if item is not None]
    by_list: dict[DataPath, list[CheckItem]] = {}  # the scenario's then, each turn's then
    for item in items:
        by_list.setdefault(item.at[:-1], []).append(item)
    judged: list[CheckItem] = []
    for in_list in by_list.values():
        earlier: dict[tuple[str, Hashable], list[CheckItem]] = {}
        titles: dict[str, CheckItem] = {}
        for item in in_list:  # compared only with the checks that may equal it: linear
            same = earlier.setdefault((item.check, _json_bucket(item.param)), [])
            first = next((e for e in same if same_json(e.param, item.param)), None)
            if first is not None:
                line = _check_place(doc, first).line
                out.warning(_check_place(doc, item), "W406",
                            f"the check '{label(item.check, item.param)}' is already on line "
                            f"{line}; the same check twice adds nothing",
                            "remove one of them")
            else:
                same.append(item)
            if item.title:
                named = titles.setdefault(item.title, item)
                if named is not item:
                    out.warning(doc.span((*item.at, "name")), "W409",
                                f"the name '{item.title}' is already given to the check on "
                                f"line {_check_place(doc, named).line}; the report could not "
                                "tell them apart", "give each check its own name")
            _cannot_fail(offered, doc, item, out)
            _redacted_literal(doc, item, suite, out)
            if REGISTRY[item.check].judge:
                judged.append(item)

    _flaky_minimum(s, doc, data, suite, out)
    _rate_rounds_up(s, doc, data, suite, out)

    if s.runs == 1 and judged:
        first = judged[0]
        at = doc.span(("runs",)) if "runs" in data else _check_place(doc, first)
        out.warning(at, "W405",
                    f"the judge check '{first.check}' runs only once (runs: 1); a judge is "
                    "a model too, and one verdict says little",
                    "use runs: 3 or more, so that the pass rate means something")
    return out.diagnostics


def _json_bucket(value: Any) -> Hashable:
    """A key that two values equal as JSON (:func:`same_json`) always share — ``1`` and
    ``1.0`` alike, ``true`` apart from ``1`` — so that a check is compared only with the
    few others in its bucket, not with every check before it."""
    match value:
        case bool():
            return ("bool", value)
        case int() | float():
            return ("number", float(value))
        case str():
            return ("text", value)
        case list() | tuple():
            return ("list", tuple(_json_bucket(v) for v in value))
        case dict():
            return ("mapping", frozenset((str(k), _json_bucket(v)) for k, v in value.items()))
        case _:
            return ("other", type(value).__name__)


# the checks whose texts are compared with the answer as checks see it (redacted)
_LITERAL_CHECKS = frozenset({"contains", "not_contains", "equals", "matches"})
_REGEX_SPECIAL = frozenset("\\.^$*+?{}[]|()")
_REDACTORS: dict[int, tuple[object, Any]] = {}
_TAIL = "0aB1" * 10  # what may follow a text in an answer: a key's characters


def _redactor(suite: Suite | None) -> Any:
    """The redaction a run of this suite applies (cached per suite)."""
    kept = _REDACTORS.get(id(suite))
    if kept is not None and kept[0] is suite:
        return kept[1]
    from .redact import DEFAULT_PATTERNS, build, redactor_for  # why: regex, not for a plan

    made = build((), DEFAULT_PATTERNS) if suite is None else \
        redactor_for(suite.redact, suite.targets.values())
    _REDACTORS.clear()
    _REDACTORS[id(suite)] = (suite, made)
    return made


def _literal_texts(item: CheckItem) -> list[tuple[str, DataPath]]:
    param = item.param
    if item.check == "matches":  # the text a pattern starts with, as written
        source = param.get("pattern") if isinstance(param, dict) else param
        if not isinstance(source, str):
            return []
        n = next((i for i, ch in enumerate(source) if ch in _REGEX_SPECIAL), len(source))
        at: DataPath = (*item.path, "pattern") if isinstance(param, dict) else item.path
        return [(source[:n], at)] if n >= 3 else []
    if isinstance(param, dict):
        where: DataPath = (*item.path, "text")
        param = param.get("text")
    else:
        where = item.path
    if isinstance(param, str):
        return [(param, where)]
    if isinstance(param, list):
        return [(t, (*where, i)) for i, t in enumerate(param) if isinstance(t, str)]
    return []


def _redacted_literal(doc: Document, item: CheckItem, suite: Suite | None,
                      out: Collector) -> None:
    """W412: a text of contains, not_contains or equals that redaction would replace before
    the check sees it — a secret the scenario does not hold, which no replay or recheck can
    put back, so every mode (live too) sees its mark: such a contains could never pass,
    such a not_contains never fail. The scenario's own secrets are seen as they are."""
    if item.check not in _LITERAL_CHECKS:
        return
    texts = _literal_texts(item)
    if not texts:
        return
    redact = _redactor(suite)
    if not redact.patterns:
        return
    for text, where in texts:
        seen = redact(text + _TAIL)
        if text in seen or _own_secrets(doc, suite, redact, text):
            continue

        marks = sorted({m.group(0) for m in REDACTION_MARK.finditer(seen)})
        mark = marks[0] if marks else "[REDACTED:…]"
        if item.check == "matches":
            why = "so the pattern could never match it"
            hint = ("match what the answer keeps (the redaction mark, e.g. " + mark +
                    "); to catch a leaked secret, use no_secrets")
        elif item.check == "not_contains":
            why = "so it could never fail, and a leaked secret would go unseen"
            hint = ("to catch a secret that reaches the answer or a tool call's arguments, "
                    "use the no_secrets check")
        else:
            why = "so it could never pass"
            written = redact(text)
            hint = (f"check for what the answer keeps: {item.check}: "
                    f"{json.dumps(written, ensure_ascii=False)}" if written != text else
                    f"check for the redaction mark ({mark}), or for the text around it") + \
                "; to catch a leaked secret, use no_secrets"
        out.warning(doc.span(where), "W412",
                    f"the text {json.dumps(text, ensure_ascii=False)} of {item.check} would "
                    f"be redacted ({mark}) before the check sees it — checks see the answer "
                    f"as results.jsonl and cassettes keep it — {why}", hint)


def _own_secrets(doc: Document, suite: Suite | None, redact: Any, text: str) -> bool:
    """Every secret of ``text`` is one the scenario itself holds (what the person says, the
    system prompt, the world, the tools): the checks see those as they are (a record keeps
    which of them each mark stands for, dsl/compiler/redact.py)."""
    data = doc.data if isinstance(doc.data, dict) else {}
    told = {k: v for k, v in data.items() if k not in ("then", "id", "description")}
    if isinstance(told.get("when"), list):  # a turn's own checks are not what it was told
        told["when"] = [{k: v for k, v in t.items() if k != "then"} if isinstance(t, dict)
                        else t for t in told["when"]]
    source = (told, suite.world if suite is not None else {},
              suite.tools if suite is not None else {})
    _red, hints = redact.traced(text, redact.known(source))
    return bool(hints) and all(isinstance(h, int) for h in hints)


def _cannot_fail(offered: Offered, doc: Document, item: CheckItem, out: Collector) -> None:
    """W404 for checks that no attempt of this scenario can fail (each check type says
    when: :attr:`dsl.checks.CheckType.never_fails`)."""
    rule = REGISTRY[item.check].never_fails
    why = rule(item.param, offered) if rule is not None else None
    if why is None:
        return
    at = doc.span((*item.path, *why.at)) if why.at else _check_place(doc, item)
    out.warning(at, "W404", why.message, why.hint)


# W401: with more runs than this, a minimum of all of them is said to be fragile (with as
# few, asking every run to pass is a plain choice)
W401_MORE_THAN = 5
# W401's hint: what min_pass equal to runs means, and the way to say "this rule, every time".
ALWAYS_HINT = ("if one rule must hold in every attempt, mark that check always: true and "
               "leave min_pass room for a flaky answer in the others (e.g. {room}); see \"How "
               "many runs, and how many must pass\" in docs/guide.md")


def _flaky_minimum(s: Scenario, doc: Document, data: dict[str, Any], suite: Suite | None,
                   out: Collector) -> None:
    """W401: with more than :data:`W401_MORE_THAN` runs, a minimum of all of them fails
    the scenario on one attempt that fails any check — said plainly, with ``always`` as
    the way to ask for a rule that must never break. Not when every check is ``always``
    already."""
    runs, need = s.runs, s.min_pass
    checks = s.all_checks
    if runs <= W401_MORE_THAN or need < runs or (checks and all(c.always for c in checks)):
        return
    if _rounds_up_to_all(s, data, suite) is not None:
        return  # W411 says it: a share below 1 that means every run
    consequence = (f"the scenario fails as soon as one of the {runs} attempts fails any of "
                   "its checks")
    if "min_pass" in data:
        out.warning(doc.span(("min_pass",)), "W401",
                    f"min_pass is {need}, the same as runs: {consequence}",
                    ALWAYS_HINT.format(room=f"min_pass: {runs - max(1, runs // 10)}"))
    elif "min_pass_rate" in data:
        out.warning(doc.span(("min_pass_rate",)), "W401",
                    f"min_pass_rate {data['min_pass_rate']} of {runs} runs means all {runs} "
                    f"must pass: {consequence}",
                    ALWAYS_HINT.format(room=f"min_pass_rate: {_room_rate(runs)}"))
    elif "runs" in data:
        rate = (suite.defaults if suite else DEFAULTS).min_pass_rate
        out.warning(doc.span(("runs",)), "W401",
                    f"with runs {runs} and the suite's min_pass_rate {rate}, all {runs} runs "
                    f"must pass: {consequence}",
                    ALWAYS_HINT.format(room=f"min_pass: {runs - max(1, runs // 10)}"))
    # else: both come from the suite's defaults; suite_warnings reports it there, once


def _rounds_up_to_all(s: Scenario, data: dict[str, Any], suite: Suite | None
                      ) -> tuple[DataPath, float] | None:
    """Where a ``min_pass_rate`` below 1 that rounds up to every run is written in the
    scenario (its own, or the suite's with the scenario's ``runs``), and the rate; None
    when min_pass is a count, the rate is the suite's with its runs (:func:`suite_warnings`
    says it there) or it leaves room."""
    if "min_pass" in data:
        return None
    defaults = suite.defaults if suite else DEFAULTS
    if "min_pass_rate" in data:
        rate, path = data["min_pass_rate"], ("min_pass_rate",)
    elif "runs" in data and defaults.min_pass is None:
        rate, path = defaults.min_pass_rate, ("runs",)
    else:
        return None
    if not isinstance(rate, int | float) or not 0 < rate < 1:
        return None
    return (path, rate) if s.runs >= 2 and min_pass_for(rate, s.runs) >= s.runs else None


def rounds_up_words(rate: float, runs: int) -> tuple[str, str]:
    """W411's message and hint: ``min_pass_rate 0.67 of 3 runs means all 3 must pass``."""
    return (f"min_pass_rate {rate} of {runs} runs means all {runs} must pass ({rate} × "
            f"{runs} = {rate * runs:.4g}, rounded up to a whole run)",
            f"to let one run fail, write min_pass: {runs - 1} (a count of runs); or write "
            f"min_pass: {runs} if every run must pass")


def _rate_rounds_up(s: Scenario, doc: Document, data: dict[str, Any], suite: Suite | None,
                    out: Collector) -> None:
    """W411: a share below 1 that rounds up to every run (0.67 of 3 runs is 3 of 3)."""
    found = _rounds_up_to_all(s, data, suite)
    if found is None:
        return
    path, rate = found
    message, hint = rounds_up_words(rate, s.runs)
    if path == ("runs",):
        message += " (the suite's min_pass_rate, with this scenario's runs)"
    out.warning(doc.span(path), "W411", message, hint)


def _room_rate(runs: int) -> float:
    """The share (two decimals, rounded down) that leaves room for one flaky run in ten:
    0.87 of 8 runs is 7 (0.88 would round back up to 8)."""
    return math.floor((runs - max(1, runs // 10)) / runs * 100) / 100


def suite_warnings(suite: Suite, reports: Sequence[FileReport] | None) -> list[Diagnostic]:
    """W401 and W411 for the suite's defaults; W403 for library tools that no scenario uses
    (``reports`` is None when not every scenario of the suite was linted)."""
    out = Collector()
    doc = suite.doc
    if doc is None or not isinstance(doc.data, dict):
        return []
    d = suite.defaults
    need = min_pass_for(d.min_pass_rate, d.runs) if d.min_pass is None else d.min_pass
    defaults = doc.data.get("defaults") or {}
    if (d.min_pass is None and 0 < d.min_pass_rate < 1 and d.runs >= 2 and need >= d.runs
            and isinstance(defaults, dict)):
        message, hint = rounds_up_words(d.min_pass_rate, d.runs)
        out.warning(doc.span(("defaults", "min_pass_rate" if "min_pass_rate" in defaults
                              else "runs")), "W411", message, hint)
    elif d.runs > W401_MORE_THAN and need >= d.runs and isinstance(defaults, dict):
        key = ("min_pass" if "min_pass" in defaults else
               "min_pass_rate" if "min_pass_rate" in defaults else "runs")
        asked = (f"min_pass {d.min_pass}" if d.min_pass is not None
                 else f"min_pass_rate {d.min_pass_rate}")
        room = (f"min_pass: {d.runs - max(1, d.runs // 10)}" if d.min_pass is not None
                else f"min_pass_rate: {_room_rate(d.runs)}")
        out.warning(doc.span(("defaults", key)), "W401",
                    f"the defaults ask all {d.runs} runs to pass ({asked}): a scenario "
                    f"fails as soon as one of its {d.runs} attempts fails any of its checks",
                    ALWAYS_HINT.format(room=room))
    if reports is not None:
        used = {name for r in reports for name in r.uses}
        for name in suite.tools:
            if name not in used:
                out.warning(doc.key_span(("tools", name)), "W403",
                            f"no scenario uses the tool '{name}'",
                            f"remove it from {suite.file}, or add it to given.tools of "
                            "the scenarios that should offer it")
    return out.diagnostics


def target_warnings(suite: Suite, reports: Sequence[FileReport]) -> list[Diagnostic]:
    """What each target's kind warns about its settings, given what the linted scenarios
    need of it (``KINDS[...].warnings``: W430, W431 for an http agent's body)."""
    doc = suite.doc
    if doc is None or not reports:
        return []
    needs = AgentNeeds(tools=any(r.tools for r in reports), holds=any(r.holds for r in reports))
    out = Collector()
    for name, target in suite.targets.items():
        for w in kind_of(target).warnings(target.config, name, needs):
            at = ("targets", name, *w.at)
            out.warning(doc.span(at) if w.on_value else doc.key_span(at), w.code, w.message,
                        w.hint)
    return out.diagnostics


# ---------------------------------------------------------------- output


def summary_line(result: LintResult) -> str:
    return (f"{result.files} file(s): {result.errors} error(s), "
            f"{result.warnings} warning(s)")


def format_text(result: LintResult, *, color: bool = False, quiet: bool = False) -> str:
    """``file:line:col: error CODE message``, the source line, a caret and a hint; then
    a summary line. ``quiet``: the first lines only, no summary."""
    out = []
    for d in result.diagnostics:
        if quiet:
            out.append(render(d, None, color=color).split("\n", 1)[0])
        else:
            out.append(render(d, result.source_lines(d.span.file), color=color))
    if not quiet:
        out.append(summary_line(result))
    return "".join(line + "\n" for line in out)


def format_json(result: LintResult) -> str:
    """A stable shape (docs/lint.md): ``schema_version`` changes when it does."""
    doc = {
        "schema_version": JSON_SCHEMA_VERSION,
        "files": result.files,
        "errors": result.errors,
        "warnings": result.warnings,
        "diagnostics": [
            {
                "file": None if d.span.file == COMMAND_LINE else d.span.file,
                "line": d.span.line,
                "col": d.span.col,
                "severity": d.severity,
                "code": d.code,
                "name": CODES[d.code].name,
                "message": d.message,
                "hint": d.hint,
            }
            for d in result.diagnostics
        ],
    }
    return json.dumps(doc, ensure_ascii=False, indent=2) + "\n"


def format_github(result: LintResult) -> str:
    """GitHub Actions workflow commands: one ``::error`` or ``::warning`` annotation per
    diagnostic, shown on the pull request's lines; then the summary line."""
    out = []
    for d in result.diagnostics:
        props = []
        if d.span.file != COMMAND_LINE:
            props += [f"file={gh_property(d.span.file)}", f"line={d.span.line}",
                      f"col={d.span.col}"]
        props.append(f"title={gh_property(f'{d.code} {CODES[d.code].name}')}")
        message = d.message + (f"\nhint: {d.hint}" if d.hint else "")
        out.append(f"::{d.severity} {','.join(props)}::{gh_data(message)}")
    out.append(summary_line(result))
    return "".join(line + "\n" for line in out)


def format_result(result: LintResult, fmt: Format, *, color: bool = False,
                  quiet: bool = False) -> str:
    match fmt:
        case "json":
            return format_json(result)
        case "github":
            return format_github(result)
        case _:
            return format_text(result, color=color, quiet=quiet)
