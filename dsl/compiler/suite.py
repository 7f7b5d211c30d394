"""The suite: ``scenarist.yaml`` — targets, defaults, the shared tool library and named
checks (expressions written once, used by name in scenarios: ``- expect: books_a_weekday``).

Found in a scenario's folder or the nearest parent folder that has one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import Collector, Diagnostic, Span, did_you_mean, quoted_list
from ..model import (
    Calibration,
    History,
    JudgeConfig,
    RedactConfig,
    Target,
    ToolSpec,
    WorldTable,
)
from ..source.load import DataPath, Document, load_bytes, read_file
from ..source.load import display_path as display_path  # paths in messages: load names them
from ..source.saferegex import PatternError, compile_pattern
from ..source.suitefile import SUITE_FILE as SUITE_FILE  # where the suite is: there
from ..source.suitefile import find_suite_file as find_suite_file
from ..source.validate import validate
from ..targets.kinds import KINDS, is_model
from .faketools import compile_tool as compile_tool  # tools are compiled there

if TYPE_CHECKING:
    from ..expr import NamedCheck

DEFAULT_JUDGE_CACHE = ".scenarist/judge-cache"


class Defaults(msgspec.Struct, frozen=True):
    """``defaults:`` of scenarist.yaml. The values written here are Scenarist's own, and
    this is the one place they are written: a suite without ``defaults:``, and a scenario
    compiled without a suite, get :data:`DEFAULTS` (the schemas' docs quote them)."""

    target: str | None = None
    runs: int = 5
    min_pass_rate: float = 0.8
    # defaults.min_pass: a count of runs, instead of min_pass_rate (never both)
    min_pass: int | None = None
    concurrency: int = 8
    max_steps: int = 6  # model calls per turn


DEFAULTS = Defaults()


class Suite(msgspec.Struct, frozen=True):
    root: Path
    file: str  # as shown in messages
    doc: Document | None
    targets: Mapping[str, Target] = msgspec.field(default_factory=dict)
    defaults: Defaults = DEFAULTS
    tools: Mapping[str, ToolSpec] = msgspec.field(default_factory=dict)
    exclude: tuple[str, ...] = ()
    judge: JudgeConfig | None = None
    redact: RedactConfig = msgspec.field(default_factory=lambda: RedactConfig())
    checks: Mapping[str, NamedCheck] = msgspec.field(default_factory=dict)
    history: History = None  # history: as written (a URL, a file, false); None: the default
    compare: tuple[tuple[str, str], ...] = ()  # compare: target pairs (old, new)
    world: Mapping[str, WorldTable] = msgspec.field(default_factory=dict)  # world: its tables

    def span(self, path: DataPath) -> Span:
        return self.doc.span(path) if self.doc else Span(self.file, 1, 1)

    def judge_with(self, target: Target) -> JudgeConfig:
        """The suite's judge settings with ``target`` judging (``--judge NAME``); the
        defaults when the suite has no ``judge:``."""
        base = self.judge or JudgeConfig(target=target,
                                         cache_dir=self.root / DEFAULT_JUDGE_CACHE)
        return msgspec.structs.replace(base, target=target)




def load_suite(file: Path, diags: Collector, text: str | None = None) -> Suite:
    """Load, validate and compile ``scenarist.yaml`` (or ``text``, read as that file: an
    editor's unsaved text). Problems go to ``diags``."""
    name = display_path(file)
    doc = read_file(file, name) if text is None else load_bytes(text.encode("utf-8"), name)
    diags.extend(doc.diagnostics)
    if doc.data is None:
        return Suite(file.parent.resolve(), name, doc)
    if not isinstance(doc.data, dict):
        diags.error(Span(name, 1, 1), "Y108",
                    f"{name} holds {_kind(doc.data)}, but it must be a mapping with targets, "
                    "defaults and tools")
        return Suite(file.parent.resolve(), name, None)
    problems = validate(doc, "suite.schema.json", name)
    diags.extend(problems)
    if problems:
        # One mistake, reported once: the library's tools still exist for the scenarios
        # that name them, even though the suite cannot run.
        return Suite(file.parent.resolve(), name, doc, tools=_tools_as_named(doc))
    data: dict[str, Any] = doc.data
    root = file.parent.resolve()
    tools = {
        tname: compile_tool(doc, ("tools", tname), tname, tdata, diags)
        for tname, tdata in (data.get("tools") or {}).items()
    }
    targets = {
        tname: _target(doc, root, tname, tdata, diags)
        for tname, tdata in (data.get("targets") or {}).items()
    }
    d = data.get("defaults") or {}
    defaults = Defaults(
        target=d.get("target"),
        runs=d.get("runs", DEFAULTS.runs),
        min_pass_rate=float(d.get("min_pass_rate", DEFAULTS.min_pass_rate)),
        min_pass=d.get("min_pass"),
        concurrency=d.get("concurrency", DEFAULTS.concurrency),
        max_steps=d.get("max_steps", DEFAULTS.max_steps),
    )
    if "min_pass" in d and "min_pass_rate" in d:
        diags.error(doc.key_span(("defaults", "min_pass_rate")), "S105",
                    "use either min_pass or min_pass_rate in defaults, not both",
                    "min_pass is a number of runs; min_pass_rate a share of them: keep one")
    elif defaults.min_pass is not None and defaults.min_pass > defaults.runs:
        diags.error(doc.span(("defaults", "min_pass")), "E202",
                    f"defaults.min_pass is {defaults.min_pass} but defaults.runs is "
                    f"{defaults.runs}: a scenario with the default runs could never pass",
                    f"lower min_pass to at most {defaults.runs}, or raise runs")
    if defaults.target is not None and defaults.target not in targets:
        diags.error(
            doc.span(("defaults", "target")),
            "E206",
            f"the default target '{defaults.target}' is not defined"
            f"{did_you_mean(defaults.target, targets)}",
            f"the targets are {quoted_list(sorted(targets), 'and') or 'none'}",
        )
    judge = _judge(doc, root, data.get("judge"), targets, diags)
    redact = _redact(doc, data.get("redact") or {}, diags)
    world = {}
    if "world" in data:
        from .world import check_tools, compile_world  # only a suite with a world

        world = compile_world(doc, ("world",), data["world"], root, diags)
        # the library's table tools against the suite's own tables, used or not (a
        # scenario checks them again against its world, which may replace a table)
        check_tools((t for t in tools.values() if t.table is not None
                     and t.table.table in world), world, diags)
    checks = named_checks(doc, data.get("checks") or {}, diags, world)
    history = data.get("history")
    if history is not None:  # the history's package only when the suite names one (plan)
        # why: the history; plan or lint load this module without it
        from ..history.locate import setting_problem

        problem = setting_problem(history)
        if problem is not None:
            diags.error(doc.span(("history",)), "E221", problem)
            history = None
    pairs = _compare(doc, data.get("compare"), targets, diags)
    return Suite(root, name, doc, targets, defaults, tools, tuple(data.get("exclude") or ()),
                 judge, redact, checks, history, pairs, world)


def parse_pair(text: str) -> tuple[str, str] | None:
    """``old:new`` as (old, new); None when it is not two names around one colon."""
    old, sep, new = text.partition(":")
    old, new = old.strip(), new.strip()
    if not sep or not old or not new or ":" in new or old == new:
        return None
    return old, new


def _compare(doc: Document, data: Any, targets: Mapping[str, Target],
             diags: Collector) -> tuple[tuple[str, str], ...]:
    """``compare: old:new`` (or a list of pairs): the targets compared within a run."""
    if data is None:
        return ()
    items = [data] if isinstance(data, str) else list(data)
    out = []
    for i, item in enumerate(items):
        path: DataPath = ("compare",) if isinstance(data, str) else ("compare", i)
        pair = parse_pair(str(item))
        if pair is None:
            diags.error(doc.span(path), "E221",
                        f"'{item}' is not a pair of targets: write old:new, two different "
                        "target names around a colon")
            continue
        ok = True
        for n in pair:
            if n not in targets:
                ok = False
                diags.error(doc.span(path), "E206",
                            f"compare names the target '{n}', which is not defined"
                            f"{did_you_mean(n, targets)}",
                            f"the targets are {quoted_list(sorted(targets), 'and') or 'none'}")
        if ok:
            out.append(pair)
    return tuple(out)


def _judge(doc: Document, root: Path, data: Mapping[str, Any] | None,
           targets: Mapping[str, Target], diags: Collector) -> JudgeConfig | None:
    if data is None:
        return None
    from ..judge.ask import PROMPT_NAMES, prompt_from_source  # why: Jinja, for a judge only

    name = data["target"]
    target = targets.get(name)
    if target is None:
        diags.error(doc.span(("judge", "target")), "E206",
                    f"the judge's target '{name}' is not defined{did_you_mean(name, targets)}",
                    f"the targets are {quoted_list(sorted(targets), 'and') or 'none'}")
        return None
    if not is_model(target):
        diags.error(doc.span(("judge", "target")), "E219",
                    f"the judge's target '{name}' is a python agent; the judge must be a "
                    "model (kind: openai or replay)")
        return None
    prompts = {}
    for pname, file in (data.get("prompts") or {}).items():
        path = (root / file).resolve()
        where = doc.span(("judge", "prompts", pname))
        if pname not in PROMPT_NAMES:
            diags.error(doc.key_span(("judge", "prompts", pname)), "E219",
                        f"there is no judge prompt '{pname}'{did_you_mean(pname, PROMPT_NAMES)}",
                        f"the prompts are {quoted_list(PROMPT_NAMES, 'and')}")
            continue
        try:
            prompts[pname] = prompt_from_source(pname, path.read_text("utf-8"), str(path))
        except OSError as exc:
            diags.error(where, "E219", f"cannot read the judge prompt {file}: {exc.strerror}")
        except ValueError as exc:
            diags.error(where, "E208", str(exc))
    cache = data.get("cache", DEFAULT_JUDGE_CACHE)
    calibration = data.get("calibration") or {}
    return JudgeConfig(
        target=target,
        model=data.get("model"),
        temperature=float(data.get("temperature", 0.0)),
        seed=int(data.get("seed", 0)),
        min_confidence=float(data.get("min_confidence", 0.8)),
        max_attempts=int(data.get("max_attempts", 3)),
        cache_dir=(root / cache).resolve() if cache else None,
        prompts=prompts,
        mode=data.get("mode", "json"),
        calibration=Calibration(float(calibration.get("yes_no", 1.0)),
                                float(calibration.get("digits", 1.0))),
    )


def _redact(doc: Document, data: Mapping[str, Any], diags: Collector) -> RedactConfig:
    patterns = {}
    for name, source in (data.get("patterns") or {}).items():
        compiled = compile_pattern(source)
        if isinstance(compiled, PatternError):
            diags.error(doc.span_in_string(("redact", "patterns", name), compiled.offset),
                        "E204", f"{compiled.message} in the redact pattern '{name}'")
            continue
        patterns[name] = source
    return RedactConfig(tuple(data.get("env") or ()), patterns,
                        bool(data.get("default_patterns", True)))


def named_checks(doc: Document, data: Mapping[str, str], diags: Collector,
                 world: Mapping[str, WorldTable] | None = None) -> dict[str, NamedCheck]:
    """Compile the suite's ``checks:``; problems are reported at scenarist.yaml's line and
    column (once, even when many scenarios use the check). With the suite's ``world``,
    they may read ``world`` and ``world_before``."""
    out: dict[str, NamedCheck] = {}
    if not data:
        return out
    # the expression language, imported when a suite names checks (issue 27)
    from ..expr import RESERVED, NamedCheck, ProblemsFound, compile_expression, constant

    typed = None
    if world:
        # why: the world, only for a suite with one; not for plan, lint, run or recheck
        from .world import world_type

        typed = world_type(world)
    for cname, source in data.items():
        path: DataPath = ("checks", cname)
        if cname in RESERVED:
            diags.error(doc.key_span(path), "S105",
                        f"'{cname}' cannot name a check: in an expression it already means "
                        "something else",
                        f"choose another name, e.g. {cname}_ok")
            continue
        program = None
        try:
            program = compile_expression(source, data.keys(), world=typed)
            same = constant(program)
            if same is not None:
                diags.warning(doc.span_in_string(path, same.offset), same.code, same.message,
                              same.hint)
        except ProblemsFound as exc:
            for p in exc.problems:
                at = doc.span_in_string(path, p.offset)
                if p.severity == "warning":
                    diags.warning(at, p.code, p.message, p.hint)
                else:
                    diags.error(at, p.code, p.message, p.hint)
        out[cname] = NamedCheck(cname, source, program)
    return out


def _tools_as_named(doc: Document) -> dict[str, ToolSpec]:
    """The library of a suite that failed validation: each tool's name, action and
    confirm as written (when they make sense), nothing compiled."""
    data = doc.data.get("tools") if isinstance(doc.data, dict) else None
    if not isinstance(data, dict):
        return {}
    out = {}
    for tname, tdata in data.items():
        t = tdata if isinstance(tdata, dict) else {}
        action = t.get("action", "read")
        out[tname] = ToolSpec(
            name=tname, description="", input_schema={"type": "object", "properties": {}},
            action=action if action in ("read", "create", "update", "delete") else "read",
            confirm=t.get("confirm") is True, returns="OK", span=doc.key_span(("tools", tname)),
            args_declared=None,
        )
    return out


def _kind(data: Any) -> str:
    if isinstance(data, list):
        return "a list"
    if isinstance(data, str):
        return "a single text"
    return "a single value"


def _target(doc: Document, root: Path, name: str, data: Mapping[str, Any],
            diags: Collector) -> Target:
    path: DataPath = ("targets", name)
    kind = KINDS[data["kind"]]
    return Target(name=name, kind=kind.name, span=doc.key_span(path),
                  config=kind.compile(doc, path, name, data, root, diags),
                  concurrency=data.get("concurrency"),
                  attempt_timeout_ms=data.get("attempt_timeout_ms"))


def select_targets(suite: Suite, names: Iterable[str]) -> tuple[list[Target], list[Diagnostic]]:
    """The targets a run uses: those named, else the default, else the only one."""
    wanted = list(names)
    problems: list[Diagnostic] = []
    available = sorted(suite.targets)
    if not wanted:
        if suite.defaults.target:
            wanted = [suite.defaults.target]
        elif len(available) == 1:
            wanted = available
        elif not available:
            problems.append(Diagnostic(
                suite.span(()), "E206", f"{suite.file} defines no targets",
                "add one under 'targets:', e.g. a kind: openai target with base_url and model",
            ))
            return [], problems
        else:
            problems.append(Diagnostic(
                suite.doc.key_span(("targets",)) if suite.doc else Span(suite.file, 1, 1),
                "E207",
                f"{suite.file} defines several targets ({quoted_list(available, 'and')}) and "
                "no default one",
                "choose one with --target NAME, or set defaults.target in scenarist.yaml",
            ))
            return [], problems
    out = []
    for n in wanted:
        if n in suite.targets:
            out.append(suite.targets[n])
        else:
            problems.append(Diagnostic(
                Span("<command line>", 1, 1), "E206",
                f"there is no target '{n}' in {suite.file}{did_you_mean(n, available)}",
                f"the targets are {quoted_list(available, 'and') or 'none'}",
            ))
    return out, problems
