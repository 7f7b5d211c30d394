"""Compile: validated scenario files and their suite become a :class:`~dsl.model.Plan`.

Here live the checks the JSON Schema cannot express: tools named by checks exist, min_pass
fits in runs, the moment has a UTC offset, patterns and templates compile, ids are unique.
Each problem is a located diagnostic; every file is compiled even when others fail.

A file with cases (``cases:`` or ``cases_file:``) is expanded first (:mod:`dsl.compiler.cases`):
:func:`compile_file` compiles each case's document as a scenario of its own, sharing with
the file's other cases every part that no template touches (a :class:`Shared`: the same
check, the same tool, compiled and reported once). The command line's selection
(:class:`~dsl.compiler.discover.Selection`) is applied here, before a scenario is compiled, so that
``run``, ``plan`` and ``lint`` select alike.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import functools
import gc
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

import msgspec

from ..checks import REGISTRY, CheckContext, label
from ..errors import Collector, Diagnostic, InputError, Span, did_you_mean, quoted_list
from ..model import (
    TURN_KINDS,
    Attachment,
    Call,
    CompiledCheck,
    Plan,
    Scenario,
    SimulatedUser,
    ToolSpec,
    TurnKind,
    TurnSpec,
    WorldTable,
)
from ..source.load import DataPath, Document, read_file
from ..source.schemawords import CHECK_MODIFIERS
from ..source.validate import (
    TEMPLATE_MAKES_TEXT,
    VALID,
    Shape,
    failing_paths,
    validate,
    validate_shape,
)
from ..targets.kinds import is_model
from ..verdict import min_pass_for, scaled_min_pass
from .attachments import compile_attachments, redact_attachments
from .cases import (
    CaseBinding,
    Expansion,
    Instance,
    case_sets,
    case_source,
    case_type,
    instance,
    plan_templates,
    read_table,
    template_paths,
    unused,
)
from .discover import EVERYTHING, Discovery, ScenarioFile, Selection, SuiteFiles, discover
from .faketools import bind_tool
from .moment import MomentError, parse_moment
from .suite import DEFAULTS, SUITE_FILE, Defaults, Suite, compile_tool, display_path
from .suite import select_targets as _select_targets
from .templates import as_tool_text

if TYPE_CHECKING:
    from .redact import Redactor


class Compiled(msgspec.Struct):
    """What compiling the paths gave: the suite, the scenarios that compiled, and every
    diagnostic."""

    suite: Suite | None
    scenarios: list[Scenario] = msgspec.field(default_factory=list)
    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)
    considered: int = 0  # scenarios the files hold (each case one), before the selection
    selection: Selection = EVERYTHING

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)


def _one_suite(found: Discovery, diags: Collector) -> SuiteFiles | None:
    """The group a run or a plan works on: every path named and every scenario file found
    must belong to one suite (E211). None when no path is under a suite."""
    suites = sorted({f for f in found.named if f is not None})
    if len(suites) > 1:
        _mixed_suites(suites, diags)
        return None
    if len(suites) == 1 and None in found.named:
        diags.error(
            Span("<command line>", 1, 1),
            "E211",
            f"some paths are outside the suite {display_path(suites[0])}",
            "run each suite separately",
        )
        return None
    if not suites:
        return None
    chosen = next(g for g in found.groups if g.suite_file == suites[0])
    others = sorted({g.suite_file for g in found.groups
                     if g is not chosen and g.files and g.suite_file is not None})
    if others:  # a folder named holds another suite's folder
        _mixed_suites(sorted([suites[0], *others]), diags)
        return None
    return chosen


def _mixed_suites(suites: list[Path], diags: Collector) -> None:
    diags.error(
        Span("<command line>", 1, 1),
        "E211",
        "these paths belong to different suites: "
        + quoted_list([display_path(f) for f in suites], "and"),
        "run each suite separately",
    )


def compile_paths(
    paths: Sequence[Path],
    *,
    runs: int | None = None,
    judge_target: str | None = None,
    extra_files: Sequence[Path] = (),
    selection: Selection = EVERYTHING,
) -> Compiled:
    """Load, validate and compile every scenario under ``paths`` (found by
    :func:`dsl.compiler.discover.discover`; they must belong to one suite). Never raises on bad
    input: the diagnostics are in the result. ``judge_target`` overrides the suite's judge
    target (``scenarist run --judge NAME``). ``extra_files`` are scenario files compiled against
    the suite of ``paths`` wherever they are (``scenarist conformance``'s cases, which
    ship in the package); ``paths`` may then be the suite file alone. ``selection``: only
    the scenarios it selects are compiled (``--tag``, ``-k``)."""
    paused = gc.isenabled()
    gc.disable()  # many objects, no cycles: collections would cost ~40% (bench/lint_bench.py)
    try:
        return _compile_paths(paths, runs=runs, judge_target=judge_target,
                              extra_files=extra_files, selection=selection)
    finally:
        if paused:
            gc.enable()


def _compile_paths(paths: Sequence[Path], *, runs: int | None,
                   judge_target: str | None, extra_files: Sequence[Path],
                   selection: Selection) -> Compiled:
    diags = Collector()
    for p in paths:
        if not p.exists():
            diags.error(Span("<command line>", 1, 1), "E216", f"'{p}' does not exist",
                        "check the path: it is relative to the current folder")
    if diags.has_errors:
        return Compiled(None, diagnostics=diags.diagnostics)
    found = discover(paths)
    group = _one_suite(found, diags)
    if diags.diagnostics:  # paths of several suites: nothing sensible to compile against
        return Compiled(None, diagnostics=diags.diagnostics)
    if group is None or group.suite is None:
        where = display_path(paths[0]) if paths else "."
        diags.error(
            Span("<command line>", 1, 1),
            "E210",
            f"no {SUITE_FILE} found in '{where}' or its parent folders",
            f"create {SUITE_FILE} next to your scenarios with at least one target "
            "(see docs/suite.md)",
        )
        return Compiled(None, diagnostics=diags.diagnostics)
    diags.extend(group.diagnostics)
    suite = group.suite
    if judge_target is not None:
        suite = _override_judge(suite, judge_target, diags)
    result = Compiled(suite, selection=selection)
    if not group.files and not extra_files and not diags.has_errors:
        diags.error(Span("<command line>", 1, 1), "E212",
                    f"no scenario files (*.yaml) in {quoted_list([str(p) for p in paths])}")
    extra = tuple(ScenarioFile(p.resolve(), display_path(p)) for p in extra_files)
    of_files = compile_files((*group.files, *extra), suite, diags, runs=runs,
                             selection=selection)
    result.scenarios, result.considered = of_files.scenarios, of_files.considered
    result.diagnostics = diags.diagnostics
    return result


def compile_files(files: Sequence[ScenarioFile], suite: Suite | None, diags: Collector, *,
                  runs: int | None = None, selection: Selection = EVERYTHING
                  ) -> FileScenarios:
    """Each scenario file compiled against ``suite`` (None: no suite, no tool library), in
    order, its cases expanded (:func:`compile_file`); a scenario id used twice is E205.
    Diagnostics go to ``diags``."""
    root = suite.root if suite is not None else Path.cwd().resolve()
    out: list[Scenario] = []
    considered = 0
    ids: dict[str, Span] = {}
    for f in files:
        doc = read_file(f.path, f.name)
        of_file = compile_file(doc, suite, root, diags, runs=runs, selection=selection)
        considered += of_file.considered
        for scenario in of_file.scenarios:
            first = ids.get(scenario.id)
            if first is not None:
                diags.error(id_span(doc, scenario), "E205",
                            f"the scenario id '{scenario.id}' is already used by {first.file}",
                            "give one of them a different 'id'")
                continue
            ids[scenario.id] = scenario.span
            out.append(scenario)
    return FileScenarios(out, considered)


def id_span(doc: Document, scenario: Scenario) -> Span:
    """Where a duplicate id is reported: the scenario's ``id``, or its case's id."""
    if scenario.case is not None and "id" in scenario.case.values:
        return scenario.case.span
    data = doc.data if isinstance(doc.data, dict) else {}
    return doc.span(("id",)) if "id" in data else Span(doc.path, 1, 1)


class FileScenarios(msgspec.Struct, frozen=True):
    """What one file compiled into: its scenarios (one, or one per case) that the
    selection kept, and how many it holds."""

    scenarios: list[Scenario]
    considered: int


Compiled_ = Callable[[Scenario, Document], None]


def compile_file(doc: Document, suite: Suite | None, root: Path, diags: Collector, *,
                 runs: int | None = None, selection: Selection = EVERYTHING,
                 each: Compiled_ | None = None) -> FileScenarios:
    """One scenario file → its scenarios: one, or one per case (``cases:``,
    ``cases_file:``: expanded by :mod:`dsl.compiler.cases`). Only the scenarios ``selection``
    selects are compiled (a file it leaves out reports nothing); every problem goes to
    ``diags``. ``each(scenario, document)`` is called for every scenario compiled (lint's
    warnings)."""
    data = doc.data
    if data is None and isinstance(doc.salvaged, dict) and case_source(doc.salvaged):
        diags.extend(doc.diagnostics)  # duplicate keys: its cases cannot be trusted
        return FileScenarios([], 1)
    if not isinstance(data, dict) or case_source(data) is None:
        if selection.active and not selection.selects(_plain_id(doc, root), _tags_of(data)):
            return FileScenarios([], 1)
        scenario = compile_document(doc, suite, root, diags, runs=runs)
        if scenario is not None and each is not None:
            each(scenario, doc)
        return FileScenarios([scenario] if scenario is not None else [], 1)
    diags.extend(doc.diagnostics)
    problems = validate(doc, "scenario.schema.json", "the scenario", checks=REGISTRY)
    # a template where the schema wants something else (a check's name, a number) is
    # checked once rendered: each case's document is then validated whole
    deferred = bool(problems) and failing_paths(doc, "scenario.schema.json") <= \
        template_paths(data)
    if problems and not deferred:
        diags.extend(problems)
        return FileScenarios([], 1)
    table = read_table(doc, root, diags)
    if table is None:
        return FileScenarios([], 1)
    expansion = plan_templates(doc, table, diags)
    if expansion is None:
        return FileScenarios([], len(table.cases))
    shared = Shared(expansion.touched, expansion.bound)
    shape = case_type(table)
    programs: dict[str, Any] = {}  # the file's expressions, compiled for its cases
    base_id = _plain_id(doc, root)
    reads: set[str] = set()
    out: list[Scenario] = []
    reported: set[Diagnostic] = set()
    compiled_any = False
    for case in table.cases:
        if selection.active and not _case_selected(expansion, case, base_id, selection):
            continue
        local = Collector()
        inst = instance(expansion, case, local)
        if inst is None:
            diags.extend(local.diagnostics)
            continue
        binding = CaseBinding(case.info(), shape, base_id, programs=programs)
        scenario = compile_document(inst.doc, suite, root, local, runs=runs, case=binding,
                                    shared=shared)
        compiled_any = True
        reads |= binding.reads
        diags.extend(_about_case(expansion, inst, local.diagnostics, reported))
        if scenario is not None:
            out.append(scenario)
            if each is not None:
                each(scenario, inst.doc)
    if compiled_any:
        unused(expansion, reads, diags)
    return FileScenarios(out, len(table.cases))


def _plain_id(doc: Document, root: Path) -> str:
    data = doc.data if isinstance(doc.data, dict) else {}
    given = data.get("id")
    return given if isinstance(given, str) and given else scenario_id(Path(doc.path), root)


def _tags_of(data: Any) -> list[str]:
    tags = data.get("tags") if isinstance(data, dict) else None
    return [t for t in tags if isinstance(t, str)] if isinstance(tags, list) else []


def _case_selected(exp: Expansion, case: Any, base_id: str, selection: Selection) -> bool:
    """Whether the selection keeps a case — known before its templates render, unless its
    id or tags are templates themselves."""
    if ("id",) in exp.touched or ("tags",) in exp.touched:
        inst = instance(exp, case, Collector())
        if inst is None:
            return True  # its problems are reported when it is compiled
        data = inst.doc.data
        sid = f"{data.get('id') or base_id}[{case.id}]"
        return selection.selects(sid, _tags_of(data))
    tags = case.overrides.get("tags")
    return selection.selects(f"{base_id}[{case.id}]",
                             tags if tags is not None else _tags_of(exp.base))


def _about_case(exp: Expansion, inst: Instance, found: list[Diagnostic],
                seen: set[Diagnostic]) -> list[Diagnostic]:
    """A case's diagnostics, each saying which case it is about when it sits in a
    template string (the value came from the case): there, and at the case. One beside
    the templates (a key, a value no case changes) is the same mistake for every case
    compiled on its own: reported once (``seen``: those reported already)."""
    case = inst.case
    out = []
    for d in found:
        if d.code == "E227" or not exp.in_template(d.span):
            if d not in seen:
                seen.add(d)
                out.append(d)
            continue
        hint = TEMPLATE_MAKES_TEXT if d.code == "S103" else d.hint
        out.append(Diagnostic(d.span, d.code,
                              f"with {case.named} ({case.span.file}:{case.span.line}): "
                              f"{d.message}", hint, d.severity))
        out.append(Diagnostic(case.span, d.code,
                              f"{case.named} gives the template at {d.span.file}:"
                              f"{d.span.line}:{d.span.col} a value that does not work: "
                              f"{d.message}", hint, d.severity))
    return out


class Shared:
    """What the cases of one scenario file share: each part of the scenario that no
    template touches (a check, a tool, the moment, a turn, the attachments) is compiled —
    and its problems reported — once, by the first case; the others reuse it. A part a
    case's values reach (``touched``), or that took the case's values (an expression that
    reads ``case.NAME``), is compiled for each case."""

    def __init__(self, touched: frozenset[DataPath],
                 bound: frozenset[DataPath] = frozenset()) -> None:
        self.touched = touched
        self.bound = bound  # a fake tool's answers read the case: shared, then rebound
        self.done: dict[DataPath, Any] = {}

    def get(self, path: DataPath, binding: CaseBinding | None,
            make: Callable[[], Any]) -> Any:
        if path in self.touched:
            return make()
        if path in self.done:
            return self.done[path]
        if binding is None:
            return make()
        bound, binding.bound = binding.bound, False
        value = make()
        if not binding.bound:
            self.done[path] = value
        binding.bound = bound or binding.bound
        return value


def _shared(shared: Shared | None, path: DataPath, binding: CaseBinding | None,
            make: Callable[[], Any]) -> Any:
    return make() if shared is None else shared.get(path, binding, make)


def _override_judge(suite: Suite, name: str, diags: Collector) -> Suite:
    target = suite.targets.get(name)
    if target is None or not is_model(target):
        why = f"is a {target.kind} agent" if target else "is not defined"
        diags.error(Span("<command line>", 1, 1), "E219",
                    f"--judge {name}: the target {why}{did_you_mean(name, suite.targets)}",
                    "the judge must be a kind: openai or replay target of the suite")
        return suite
    return msgspec.structs.replace(suite, judge=suite.judge_with(target))


def scenario_id(path: Path, root: Path) -> str:
    try:
        rel = path.resolve().relative_to(root)
    except ValueError:
        rel = Path(path.name)
    return ".".join(rel.with_suffix("").parts)


class CheckItem(NamedTuple):
    """One item of a ``then`` list, read: the check's key and parameter, where the
    parameter is, and the modifiers written beside it —
    ``- {not_calls: create_refill_request, always: true, name: never refills an empty one}``.
    (A named tuple: as frozen as a dataclass, and quicker to build — lint reads every item
    of every file.)
    """

    check: str  # the check's key: not_calls
    param: Any  # its parameter (true for a bare name: ``- non_empty``)
    at: DataPath  # the item's place in the data: ("then", 3)
    path: DataPath  # its parameter's: ("then", 3, "not_calls"); the item's when bare
    span: Span  # where the item starts in the file
    always: bool = False  # `always: true`: it must pass in every attempt
    title: str = ""  # `name: TEXT`: how people see it ("" when not given)
    allow: frozenset[str] = frozenset()  # `allow: {W414: why}`: warnings it is meant to have


# built from a tuple of every field: a named tuple's own __new__ costs twice as much
_new = tuple.__new__
_NONE: frozenset[str] = frozenset()


def read_check_item(item: Any, path: DataPath, span: Span) -> CheckItem | None:
    """A ``then`` item at ``path`` (starting at ``span``) as a :class:`CheckItem`; None
    when it is not one check (the schema says why: two checks, none, an unknown one)."""
    if isinstance(item, str):
        return _new(CheckItem, (item, True, path, path, span, False, "", _NONE)) \
            if item in REGISTRY else None
    if not isinstance(item, dict):
        return None
    if len(item) == 1:  # the usual item: one check, no modifier
        ((name, param),) = item.items()
        return _new(CheckItem, (name, param, path, (*path, name), span, False, "",
                                    _NONE)) \
            if name in REGISTRY else None
    keys = [k for k in item if k not in CHECK_MODIFIERS]
    if len(keys) != 1 or keys[0] not in REGISTRY:
        return None
    (name,) = keys
    title = item.get("name")
    allow = item.get("allow")
    return CheckItem(name, item[name], path, (*path, name), span, item.get("always") is True,
                     " ".join(title.split()) if isinstance(title, str) else "",
                     frozenset(map(str, allow)) if isinstance(allow, dict) else _NONE)


def compile_check(item: CheckItem, doc: Document, tools: Mapping[str, ToolSpec],
                  diags: Collector, *, suite: Suite | None,
                  broken_tools: frozenset[str] = frozenset(), turn: int | None = None,
                  extra: Mapping[str, Any] | None = None) -> CompiledCheck | None:
    """One check item → a CompiledCheck (or None, with its diagnostics in ``diags``).
    Every ``then`` list — the scenario's and each turn's — is compiled item by item through
    here, so the modifiers mean the same wherever a check is written. A check of turn
    ``turn`` says so in its label (``turn 2 · contains: "sábado"``)."""
    ctype = REGISTRY[item.check]
    ctx = CheckContext(doc, item.path, tools, diags, suite.checks if suite else {},
                       extra if extra is not None else {}, broken_tools, item.allow)
    prepared = ctype.prepare(item.param, ctx)
    if prepared is None:
        return None
    if ctype.judge and (suite is None or suite.judge is None):
        diags.error(doc.key_span(item.path), "E218",
                    f"the check '{item.check}' needs the LLM judge, and "
                    f"{suite.file if suite else 'the suite'} has no judge",
                    "add judge: {target: NAME} to scenarist.yaml, naming an openai target")
        return None
    return CompiledCheck(
        item.check, functools.partial(_label, item, turn), prepared,
        ctype.evaluate, item.span, ctype.judge, ctype.evaluate_async,
        ctype.judge_calls(prepared) if ctype.judge_calls else 0, turn=turn,
        always=item.always, named=bool(item.title), item=item)


def _label(item: CheckItem, turn: int | None) -> str:
    """How people see a compiled check (made when it is first shown: CompiledCheck.label);
    a check of turn ``turn`` says so: ``turn 2 · contains: "sábado"``."""
    text = label(item.check, item.param, item.title)
    return text if turn is None else f"turn {turn} · {text}"


def compile_document(
    doc: Document,
    suite: Suite | None,
    root: Path,
    diags: Collector,
    *,
    runs: int | None = None,
    case: CaseBinding | None = None,
    shared: Shared | None = None,
) -> Scenario | None:
    """One scenario file → a Scenario (or None, with its diagnostics in ``diags``). For a
    case of a file with cases (:func:`compile_file`), ``doc`` is the case's document
    (validated whole: jsonschema-rs takes a few microseconds), ``case`` the case and
    ``shared`` what its cases share.

    A file with mistakes is compiled as far as it can be, so that one pass reports every
    independent one: the schema says which places are wrong (:class:`dsl.source.validate.Shape`),
    and every part that is sound — the moment, each tool, each check, runs and min_pass —
    is still checked for what the schema cannot see. A check naming a tool whose own
    definition is wrong says nothing about that tool (the tool's mistake is reported).
    Each part has a function of its own below, in the order they are compiled here."""
    diags.extend(doc.diagnostics)
    loaded_wrong = bool(doc.diagnostics) and any(d.severity == "error" for d in doc.diagnostics)
    mapping = _scenario_mapping(doc, diags)
    if mapping is None:
        return None
    doc = mapping
    shape = validate_shape(doc, "scenario.schema.json", "the scenario", checks=REGISTRY)
    diags.extend(shape.diagnostics)
    data: dict[str, Any] = doc.data
    local = Collector()  # the scenario's own problems: it compiles when there is no error
    given = data.get("given")
    given = given if isinstance(given, dict) else {}

    at = _shared(shared, ("given", "at"), case,
                 functools.partial(_moment, doc, given, shape, local))
    tools, broken_tools = _tools(doc, suite, given.get("tools"), local, shape, shared, case)
    by_name = {t.name: t for t in tools}
    history, history_calls = _shared(
        shared, ("given", "history"), case,
        functools.partial(_history, doc, given.get("history"), by_name, local, shape,
                          broken_tools))
    attachments = _given_attachments(doc, given, root, local, shape, shared, case)
    world = _world(doc, given, suite, root, local, shape, shared, case, tools)
    when = data.get("when")
    extra = {"simulated_user": isinstance(when, dict), "case": case, "world": world,
             "at": at}
    message, turns, user = _when(doc, when, by_name, suite, local, root, shape, broken_tools,
                                 shared, extra)
    checks = compile_checks(doc, ("then",), data.get("then"), by_name, suite, local,
                            shape=shape, broken_tools=broken_tools, extra=extra,
                            shared=shared)
    targets = _targets(doc, data.get("targets"), suite, local, shape)
    defaults = suite.defaults if suite else DEFAULTS
    file_runs, min_pass = _runs(doc, data, shape, defaults, local)

    diags.extend(local.diagnostics)
    if (loaded_wrong or shape.diagnostics or at is None or file_runs is None
            or min_pass is None or local.has_errors):
        return None
    final_runs, min_pass = _rerun(file_runs, min_pass, runs)
    return Scenario(
        id=_scenario_id(doc, root, case),
        file=doc.path,
        span=doc.span(("id",)) if "id" in data else Span(doc.path, 1, 1),
        description=data.get("description", ""),
        tags=tuple(data.get("tags", ())),
        at=at,
        system=given.get("system", ""),
        tools=tuple(tools),
        message=message,
        checks=tuple(checks),
        runs=final_runs,
        min_pass=min_pass,
        max_steps=data.get("max_steps", defaults.max_steps),
        turns=turns,
        user=user,
        history=history,
        history_calls=history_calls,
        file_runs=file_runs if final_runs != file_runs else None,
        attachments=attachments,
        targets=targets,
        case=case.info if case is not None else None,
        world=tuple(world.values()),
    )


def _scenario_mapping(doc: Document, diags: Collector) -> Document | None:
    """The document to compile: with its salvaged data when a key is written twice (the
    rest is still checked); None when it holds nothing, or not a mapping (Y108)."""
    if doc.data is None and doc.salvaged is not None:
        doc = dataclasses.replace(doc, data=doc.salvaged)
    if doc.data is None:
        return None
    if not isinstance(doc.data, dict):
        kind = "a list" if isinstance(doc.data, list) else "a single value"
        diags.error(
            Span(doc.path, 1, 1),
            "Y108",
            f"the file holds {kind}, but a scenario must be a mapping with given, when and then",
            "start the file with 'given:' (see docs/guide.md for a complete example)",
        )
        return None
    return doc


def _moment(doc: Document, given: Mapping[str, Any], shape: Shape,
            diags: Collector) -> dt.datetime | None:
    """``given.at``; None when it is missing (the schema says so) or wrong."""
    if not isinstance(given.get("at"), str) or not shape.sound(("given", "at")):
        return None
    try:
        return parse_moment(given["at"])
    except MomentError as exc:
        diags.error(doc.span(("given", "at")), exc.code, str(exc), exc.hint)
        return None


def _given_attachments(doc: Document, given: Mapping[str, Any], root: Path,
                       diags: Collector, shape: Shape, shared: Shared | None,
                       case: CaseBinding | None) -> tuple[Attachment, ...]:
    """``given.attachments``: the files that go with the first thing the person says."""
    listed = given.get("attachments")
    path: DataPath = ("given", "attachments")
    if not isinstance(listed, list) or not shape.sound(path):
        return ()
    attachments: tuple[Attachment, ...] = _shared(
        shared, path, case,
        functools.partial(compile_attachments, doc, path, listed, root, diags))
    return attachments


def _world(doc: Document, given: Mapping[str, Any], suite: Suite | None, root: Path,
           diags: Collector, shape: Shape, shared: Shared | None, case: CaseBinding | None,
           tools: Sequence[ToolSpec]) -> dict[str, WorldTable]:
    """The scenario's world: the suite's ``world:`` tables, each replaced by the
    scenario's ``given.world`` table of the same name; a suite table's ``{{ name }}``
    read from the case. Its table tools are checked against it (dsl/compiler/world.py)."""
    own = "world" in given and shape.sound(("given", "world"))
    base = suite.world if suite is not None else {}
    if not own and not base and not any(t.table is not None for t in tools):
        return {}
    # why: the world, only for a suite with one; not for plan, lint, run or recheck
    from .world import check_tools, compile_world, render_cases

    tables = dict(base)
    if case is not None:
        tables = {n: render_cases(t, case.info.values) for n, t in tables.items()}
    if own:
        tables.update(_shared(shared, ("given", "world"), case,
                              functools.partial(compile_world, doc, ("given", "world"),
                                                given["world"], root, diags)))
    check_tools(tools, tables, diags)
    return tables


def _runs(doc: Document, data: Mapping[str, Any], shape: Shape, defaults: Defaults,
          diags: Collector) -> tuple[int | None, int | None]:
    """``runs``, and ``min_pass`` (or ``min_pass_rate`` as a number of runs), the suite's
    defaults where the file says nothing (the scenario's own min_pass, then its own
    min_pass_rate, then the suite's defaults.min_pass, then its defaults.min_pass_rate);
    None for one written wrong (its mistake is reported) or that cannot be met (E202)."""
    runs = _number(data, "runs", shape, defaults.runs)
    if "min_pass" in data and "min_pass_rate" in data:
        diags.error(doc.key_span(("min_pass_rate",)), "S105",
                    "use either min_pass or min_pass_rate, not both",
                    "min_pass is a number of runs; min_pass_rate a share of them")
    min_pass = _number(data, "min_pass", shape, None)
    if min_pass is not None:
        if runs is not None and min_pass > runs:
            # where the author fixes it: the case's runs, when the case set only those
            fix = "runs" if case_sets(doc, "runs") and not case_sets(doc, "min_pass") \
                else "min_pass"
            diags.error(
                doc.span((fix,)),
                "E202",
                f"min_pass is {min_pass} but runs is {runs}: the scenario could "
                "never pass",
                f"lower min_pass to at most {runs}, or raise runs",
            )
    elif "min_pass" not in data and runs is not None:
        if "min_pass_rate" not in data and defaults.min_pass is not None:
            # the suite's defaults.min_pass, a count: the scenario's own runs must allow it
            min_pass = defaults.min_pass
            if min_pass > runs:
                if "runs" not in data:
                    return runs, None  # the suite's defaults themselves: reported there
                diags.error(
                    doc.span(("runs",)), "E202",
                    f"the suite's defaults.min_pass is {min_pass} but runs is {runs}: the "
                    "scenario could never pass",
                    f"raise runs to at least {min_pass}, or give the scenario its own "
                    "min_pass")
                return runs, None
            return runs, min_pass
        rate = data.get("min_pass_rate", defaults.min_pass_rate)
        if isinstance(rate, int | float) and shape.sound(("min_pass_rate",)):
            min_pass = min_pass_for(rate, runs)
    return runs, min_pass


def _rerun(file_runs: int, min_pass: int, runs: int | None) -> tuple[int, int]:
    """``runs`` and ``min_pass`` with ``--runs`` (``runs``) applied: min_pass scaled to keep
    its share."""
    if runs is None or runs == file_runs:
        return file_runs, min_pass
    return runs, scaled_min_pass(min_pass, file_runs, runs)


def _scenario_id(doc: Document, root: Path, case: CaseBinding | None) -> str:
    """``id``, or the file's path below the suite's folder; a case's adds ``[its id]``."""
    given = doc.data.get("id")
    if case is not None:
        return f"{given or case.base_id}[{case.info.id}]"
    return given or scenario_id(Path(doc.path), root)


def _targets(doc: Document, names: Any, suite: Suite | None, diags: Collector,
             shape: Shape) -> tuple[str, ...]:
    """``targets:`` — the suite's targets the scenario is meant for (others skip it)."""
    if not isinstance(names, list) or not shape.sound(("targets",)):
        return ()
    known = suite.targets if suite else {}
    for i, name in enumerate(names):
        if name not in known:
            diags.error(doc.span(("targets", i)), "E206",
                        f"the scenario is meant for the target '{name}', which "
                        f"{suite.file if suite else 'the suite'} does not define"
                        f"{did_you_mean(name, known)}",
                        f"the targets are {quoted_list(sorted(known), 'and') or 'none'}")
    return tuple(dict.fromkeys(names))


def compile_checks(doc: Document, path: DataPath, items: Any,
                   tools: Mapping[str, ToolSpec], suite: Suite | None, diags: Collector,
                   *, shape: Shape = VALID, broken_tools: frozenset[str] = frozenset(),
                   turn: int | None = None, extra: Mapping[str, Any] | None = None,
                   shared: Shared | None = None) -> tuple[CompiledCheck, ...]:
    """The checks of one ``then`` list at ``path``: the scenario's own (the whole
    attempt), or turn ``turn``'s (its label says the turn). Each item is read by
    :func:`read_check_item` and compiled by :func:`compile_check`; items the schema found
    wrong (``shape``) and those with problems are left out, their diagnostics in
    ``diags``. ``shared``: what the cases of a file share (:class:`Shared`)."""
    if not isinstance(items, list):
        return ()
    binding = (extra or {}).get("case")
    spans: list[Span] = []

    def make(i: int, raw: Any, at: DataPath) -> CompiledCheck | None:
        if not spans:  # a case that shares every check never needs them
            spans.extend(doc.item_spans(path))
        item = read_check_item(raw, at, spans[i])
        if item is None:
            return None
        return compile_check(item, doc, tools, diags, suite=suite, broken_tools=broken_tools,
                             turn=turn, extra=extra)

    out = []
    wrong = shape.broken_items(path)
    for i, raw in enumerate(items):
        if i in wrong:
            continue
        at: DataPath = (*path, i)
        check = _shared(shared, at, binding, functools.partial(make, i, raw, at))
        if check is not None:
            out.append(check)
    return tuple(out)


# ---- conversations -------------------------------------------------------------------------

DEFAULT_MAX_TURNS = 5
_TURN_KEYS: tuple[TurnKind, ...] = TURN_KINDS


def _when(doc: Document, when: Any, tools: Mapping[str, ToolSpec], suite: Suite | None,
          diags: Collector, root: Path, shape: Shape = VALID,
          broken_tools: frozenset[str] = frozenset(), shared: Shared | None = None,
          extra: Mapping[str, Any] | None = None,
          ) -> tuple[str, tuple[TurnSpec, ...], SimulatedUser | None]:
    """``when``: what the person says (one turn), a list of turns, or a simulated user.
    Gives the first thing the person says, the turns and the simulated user. Parts the
    schema found wrong are left out; every sound turn, and every sound check of a turn, is
    still compiled (one pass reports every independent mistake)."""
    if isinstance(when, str):
        return when, (), None
    if isinstance(when, dict):
        if not shape.sound(("when",)):
            return "", (), None
        return "", (), _simulated_user(doc, when["user"], suite, diags)
    if not isinstance(when, list):
        return "", (), None
    turns: list[TurnSpec] = []
    binding = (extra or {}).get("case")
    for i, item in enumerate(when):
        path: DataPath = ("when", i)
        turn = _shared(shared, path, binding,
                       functools.partial(_turn, doc, path, i, item, tools, suite, diags, root,
                                         shape, broken_tools, extra))
        if turn is not None:
            turns.append(turn)
    message = next((t.text for t in turns if t.kind == "say"), "")
    return message, tuple(turns), None


def _turn(doc: Document, path: DataPath, i: int, item: Any, tools: Mapping[str, ToolSpec],
          suite: Suite | None, diags: Collector, root: Path, shape: Shape,
          broken_tools: frozenset[str], extra: Mapping[str, Any] | None) -> TurnSpec | None:
    """Turn ``i`` of a conversation (None when it is wrong: its checks are still checked)."""
    if isinstance(item, str):
        return TurnSpec("say", item, doc.span(path))
    if not isinstance(item, dict):
        return None
    kinds = [k for k in _TURN_KEYS if k in item]
    if len(kinds) != 1:
        _turn_shape(doc, path, i, kinds, diags)
        return None
    kind = kinds[0]
    text = item[kind]
    usable = isinstance(text, str) and shape.sound((*path, kind))
    if usable and kind != "say":
        usable = _decidable(doc, (*path, kind), i, kind, text, tools, broken_tools, diags)
    attachments: tuple[Attachment, ...] = ()
    listed = item.get("attachments")
    if listed is not None:
        if kind != "say":
            diags.error(doc.key_span((*path, "attachments")), "S107",
                        f"turn {i + 1} presses {kind} and has attachments: only what the "
                        "person says can carry attachments",
                        "move the attachments to a turn that says something")
            usable = False
        elif isinstance(listed, list) and shape.sound((*path, "attachments")):
            attachments = compile_attachments(doc, (*path, "attachments"), listed, root,
                                              diags)
    checks = compile_checks(doc, (*path, "then"), item.get("then"), tools, suite, diags,
                            shape=shape, broken_tools=broken_tools, turn=i + 1, extra=extra)
    return TurnSpec(kind, text, doc.span(path), checks, attachments) if usable else None


def _turn_shape(doc: Document, path: DataPath, i: int, kinds: Sequence[str],
                diags: Collector) -> None:
    if not kinds:
        diags.error(doc.span(path), "S104",
                    f"turn {i + 1} says nothing: a turn needs say, confirm or cancel",
                    "write what the person does, e.g. say: \"Sí, cambialo\", or "
                    "confirm: set_business_hours")
        return
    diags.error(doc.key_span((*path, kinds[1])), "S107",
                f"turn {i + 1} has both '{kinds[0]}' and '{kinds[1]}': a turn is one thing "
                "the person does",
                "put each in a turn of its own (its own '-' line), in the order they happen")


def _decidable(doc: Document, path: DataPath, i: int, kind: str, text: str,
               tools: Mapping[str, ToolSpec], broken_tools: frozenset[str],
               diags: Collector) -> bool:
    """A confirm or cancel turn names a tool with confirm: true (or all), after a turn in
    which the agent could have asked."""
    ok = True
    if i == 0:
        diags.error(doc.key_span(path), "E224",
                    f"the conversation starts with {kind}, but nothing can be waiting for "
                    "confirmation before the agent has answered",
                    "start with what the person says, e.g. - say: \"Cambiá el horario del "
                    "sábado\"")
        ok = False
    if text == "all":
        if not any(t.confirm for t in tools.values()):
            diags.error(doc.span(path), "E213",
                        f"{kind}: all, but no tool of the scenario has confirm: true, so no "
                        "call ever waits for the person's yes",
                        "add 'confirm: true' to the tool that needs the person's yes")
            ok = False
        return ok
    tool = tools.get(text)
    if tool is None:
        if text in broken_tools:  # defined, but wrongly: its own mistake is reported
            return False
        have = quoted_list(sorted(tools), "and") or "none"
        diags.error(doc.span(path), "E201",
                    f"the scenario has no tool '{text}'{did_you_mean(text, tools)}",
                    f"the scenario's tools are {have}; {kind} names a tool of given.tools, "
                    "or all")
        return False
    if not tool.confirm:
        diags.error(doc.span(path), "E213",
                    f"the tool '{text}' does not need confirmation, so no call to it ever "
                    f"waits for the person to {kind} it",
                    f"add 'confirm: true' to the tool '{text}'")
        return False
    return ok


def _simulated_user(doc: Document, data: Mapping[str, Any], suite: Suite | None,
                    diags: Collector) -> SimulatedUser | None:
    path: DataPath = ("when", "user")
    name = data["target"]
    targets = suite.targets if suite else {}
    target = targets.get(name)
    if target is None:
        diags.error(doc.span((*path, "target")), "E206",
                    f"the simulated user's target '{name}' is not defined"
                    f"{did_you_mean(name, targets)}",
                    f"the targets are {quoted_list(sorted(targets), 'and') or 'none'}")
        return None
    if not is_model(target):
        diags.error(doc.span((*path, "target")), "E225",
                    f"the simulated user's target '{name}' is a {target.kind} agent; a "
                    "simulated user is played by a model",
                    "name a kind: openai (or replay) target of the suite")
        return None
    return SimulatedUser(goal=data["goal"], persona=data.get("persona", ""), target=target,
                         max_turns=data.get("max_turns", DEFAULT_MAX_TURNS),
                         span=doc.span(path))


def _history(doc: Document, items: Any, tools: Mapping[str, ToolSpec], diags: Collector,
             shape: Shape = VALID, broken_tools: frozenset[str] = frozenset()
             ) -> tuple[tuple[dict[str, Any], ...], tuple[Call, ...]]:
    """``given.history`` as OpenAI messages (an assistant's tool calls with their ids, each
    followed by its tool result), and those calls. Messages the schema found wrong are left
    out (the scenario does not compile; the others are still checked)."""
    messages: list[dict[str, Any]] = []
    calls: list[Call] = []
    wrong = shape.broken_items(("given", "history"))
    for i, item in enumerate(items if isinstance(items, list) else ()):
        if i in wrong:
            continue
        if "user" in item:
            messages.append({"role": "user", "content": item["user"]})
            continue
        said = item["assistant"]
        if isinstance(said, str):
            messages.append({"role": "assistant", "content": said})
            continue
        made: list[Call] = []
        for j, c in enumerate(said.get("calls") or ()):
            name = c["name"]
            tool = tools.get(name)
            if tool is None:
                if name in broken_tools:  # defined, but wrongly: its own mistake is reported
                    continue
                have = quoted_list(sorted(tools), "and") or "none"
                diags.error(doc.span(("given", "history", i, "assistant", "calls", j, "name")),
                            "E201",
                            f"the history calls '{name}', which is not one of the scenario's "
                            f"tools{did_you_mean(name, tools)}",
                            f"the scenario's tools are {have}; add '{name}' to given.tools or "
                            "fix the name")
                continue
            args = c.get("args") or {}
            output = as_tool_text(c.get("returns", "OK"))
            made.append(Call(f"history_{i + 1}_{j + 1}", name, args,
                             json.dumps(args, ensure_ascii=False), output, tool.action,
                             False, None, 0))
        if not made and not said.get("text"):
            continue
        message: dict[str, Any] = {"role": "assistant", "content": said.get("text") or None}
        if made:
            message["tool_calls"] = [{"id": c.id, "type": "function",
                                      "function": {"name": c.name, "arguments": c.raw_args}}
                                     for c in made]
        messages.append(message)
        messages.extend({"role": "tool", "tool_call_id": c.id, "content": c.output}
                        for c in made)
        calls.extend(made)
    return tuple(messages), tuple(calls)


def _number(data: Mapping[str, Any], key: str, shape: Shape, default: int | None) -> int | None:
    """A whole number the schema found sound, the default when it is not written, and
    None when it is written wrong (its mistake is reported already)."""
    if key not in data:
        return default
    value = data[key]
    ok = isinstance(value, int) and not isinstance(value, bool) and shape.sound((key,))
    return value if ok else None


# What checks rely on in a tool's definition: when these are sound, a tool with another
# mistake (an unknown key, an action misspelt) is still compiled, so that checks naming it
# are checked against it too.
_TOOL_ESSENTIALS = ("name", "input_schema", "confirm")


def _usable_tool(item: Any, path: DataPath, shape: Shape) -> bool:
    return (isinstance(item, dict) and isinstance(item.get("name"), str)
            and all(shape.sound((*path, k)) for k in _TOOL_ESSENTIALS))


def _sound_part(item: dict[str, Any], path: DataPath, shape: Shape) -> dict[str, Any]:
    """A usable tool's definition without what the schema found wrong in it (its answers
    one by one: a wrong one becomes None, so the others keep their places), for the checks
    that name it: its mistakes are reported already."""
    out = {k: v for k, v in item.items() if k == "answers" or shape.sound((*path, k))}
    answers = out.get("answers")
    if isinstance(answers, list):
        out["answers"] = [a if shape.sound((*path, "answers", i)) else None
                          for i, a in enumerate(answers)]
    else:
        out.pop("answers", None)
    return out


def _tools(doc: Document, suite: Suite | None, items: Any, diags: Collector,
           shape: Shape, shared: Shared | None = None, case: CaseBinding | None = None
           ) -> tuple[list[ToolSpec], frozenset[str]]:
    """``given.tools``: the scenario's tools, and the names of those whose definition is
    wrong (checks that name them are not checked against them). For a case (``case``), an
    inline tool no template touches is compiled once for the file (``shared``)."""
    out: list[ToolSpec] = []
    broken: set[str] = set()
    seen: dict[str, Span] = {}
    library = suite.tools if suite else {}
    values = dict(case.info.values) if case is not None else None
    wrong = shape.broken_items(("given", "tools"))
    for i, item in enumerate(items if isinstance(items, list) else ()):
        path = ("given", "tools", i)
        if i in wrong:
            if not _usable_tool(item, path, shape):
                name = item.get("name") if isinstance(item, dict) else item
                if isinstance(name, str):
                    broken.add(name)
                continue
            item = _sound_part(item, path, shape)
        if isinstance(item, str):
            tool = library.get(item)
            if tool is None:
                where = (f"the suite's tool library ({suite.file})" if suite
                         else "the suite's tool library (no scenarist.yaml was found)")
                have = quoted_list(sorted(library), "and") or "none"
                diags.error(doc.span(path), "E201",
                            f"there is no tool '{item}' in {where}{did_you_mean(item, library)}",
                            f"the library has {have}; or define the tool here with name, "
                            "description and returns")
                continue
        else:
            tool = _shared(shared, path, case,
                           functools.partial(compile_tool, doc, path, item["name"], item,
                                             diags, values))
            if shared is not None and path in shared.bound and values is not None:
                tool = bind_tool(tool, values)
        if tool.name in seen:
            first = seen[tool.name]
            diags.error(doc.span(path), "E215",
                        f"the tool '{tool.name}' is given twice (first at line {first.line}, "
                        f"column {first.col})", "remove one of them")
            continue
        seen[tool.name] = doc.span(path)
        out.append(tool)
    return out, frozenset(broken - seen.keys())


def build_plan(
    paths: Sequence[Path],
    *,
    targets: Sequence[str] = (),
    runs: int | None = None,
    concurrency: int | None = None,
    shard: tuple[int, int] | None = None,
    judge_target: str | None = None,
    compare: Sequence[tuple[str, str]] = (),
    extra_files: Sequence[Path] = (),
    selection: Selection = EVERYTHING,
) -> tuple[Plan, Compiled]:
    """Compile ``paths`` into a Plan for the chosen targets; raises InputError.

    With ``shard=(i, n)`` the plan keeps every n-th scenario (by id), starting at the i-th:
    the same files give the same split on every machine. ``compare``: target pairs to
    compare (``--compare old:new``; each must be among the chosen targets); without it, the
    suite's ``compare:`` pairs whose two targets are both chosen. ``extra_files``: scenario files
    compiled against the suite wherever they are (:func:`compile_paths`). ``selection``:
    the scenarios ``--tag`` and ``-k`` select (E220 when it selects none)."""
    compiled = compile_paths(paths, runs=runs, judge_target=judge_target,
                             extra_files=extra_files, selection=selection)
    errors = [d for d in compiled.diagnostics if d.severity == "error"]
    if errors:
        raise InputError(errors)
    if selection.active and not compiled.scenarios:
        raise InputError([nothing_selected(selection, compiled.considered)])
    assert compiled.suite is not None  # compile_paths reports a missing suite as an error
    suite = compiled.suite
    chosen, problems = _select_targets(suite, targets)
    if problems:
        raise InputError(problems)
    names = [t.name for t in chosen]
    pairs = tuple(compare)
    for old, new in pairs:
        for name in (old, new):
            if name not in names:
                problems.append(Diagnostic(
                    Span("<command line>", 1, 1), "E206",
                    f"--compare {old}:{new}: '{name}' is not a target of this run"
                    f"{did_you_mean(name, suite.targets) if name not in suite.targets else ''}",
                    f"run it too: --target {old} --target {new} --compare {old}:{new}"))
    if problems:
        raise InputError(problems)
    if not pairs:
        pairs = tuple(p for p in suite.compare if p[0] in names and p[1] in names)
    plan = Plan(
        suite_root=str(suite.root),
        suite_file=suite.file,
        scenarios=tuple(compiled.scenarios),
        targets=tuple(chosen),
        concurrency=concurrency or suite.defaults.concurrency,
        suite_targets=tuple(suite.targets.values()),
        judge=suite.judge,
        redact=suite.redact,
        compare=pairs,
        history=suite.history,
    )
    if compiled.scenarios:  # a text attachment that holds a secret is kept redacted

        def redactor() -> Redactor:
            from .redact import redactor_for  # why: regex, only for a text attachment

            return redactor_for(suite.redact, suite.targets.values())

        plan = msgspec.structs.replace(plan, scenarios=redact_attachments(plan.scenarios,
                                                                             redactor))
    if shard is not None:
        # why: plan.json's contents; lint loads this module without it
        from ..store.planfile import shard_ids
        from .plan import plan_hash, plan_json

        plan = msgspec.structs.replace(plan, full_hash=plan_hash(plan_json(plan)))
        i, n = shard
        ordered = sorted(s.id for s in plan.scenarios)
        mine = set(shard_ids(ordered, i, n))
        plan = msgspec.structs.replace(
            plan, scenarios=tuple(s for s in plan.scenarios if s.id in mine), shard=shard,
            full_scenarios=tuple(ordered))
        if not plan.scenarios:
            raise InputError([Diagnostic(
                Span("<command line>", 1, 1), "E220",
                f"the shard {i}/{n} holds no scenario: the suite has {len(ordered)} "
                f"scenario{'s' if len(ordered) != 1 else ''}, fewer than {n} shards",
                f"split it into at most {len(ordered)} shards")])
    return plan, compiled


def nothing_selected(selection: Selection, considered: int) -> Diagnostic:
    """E220: the selection keeps no scenario (``run``, ``plan`` and ``lint`` alike)."""
    held = f"{considered:,} scenario{'s' if considered != 1 else ''}"
    return Diagnostic(Span("<command line>", 1, 1), "E220",
                      f"{selection.flags()} selects none of the {held} found",
                      "check the tag or the pattern: scenarist plan lists every scenario's "
                      "id; -k matches part of an id, or a glob such as 'clinic.*'")
