"""Conformance: certify an endpoint before anyone relies on it (``scenarist conformance``).

::

    the built-in cases (dsl/assets/conformance/*.yaml) + the team's (--with PATH)
        ──compile against the suite of the current folder──▶ Plan (one target)
        ──dsl.pipeline.run_conformance: every planned attempt──▶ a normal run folder
        ──certify──▶ Certificate ──▶ conformance.json (and the terminal's table)

The cases are plain scenarios: each one's ``description`` says the behaviour it certifies,
and its ``runs`` and ``min_pass`` are the rule (9 of 10 for the built-in ones). They bring
their own fake tools, so they compile against any suite; the suite gives the target (and
the judge, the redaction and the history, as for any run).

A behaviour's status is its scenario's verdict (:class:`dsl.verdict.Tally`, read from the
summary) in the words of a certificate (:data:`CERTIFICATION`): a scenario that passes is
*certified*, one that fails is *not certified*, one without a verdict (endpoint errors,
an interrupted run) is *inconclusive*. The tool-call figures are the summary's
(:mod:`dsl.toolcalls`, :class:`dsl.results.stats.PRF`), the latency percentiles
:func:`dsl.results.stats.percentile` over the stored attempts, and the regressions against an
earlier conformance run :func:`dsl.results.baseline.compare`'s — with the baseline's rows put on
this run's target, since a certificate is about one endpoint whatever the suite calls it.

A conformance run runs every planned attempt (no early stop): the certificate rests on the
whole sample, a baseline compares like with like, and replaying a recording of the run
asks exactly the requests that were recorded.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence, Set
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..errors import Collector, Diagnostic, InputError, NotReady, RunDirError, Span
from ..model import SCHEMA_VERSION
from ..store import latest_records, read_json, write_json
from ..store.planfile import read_plan
from ..store.summaryfile import ToolCounts
from .baseline import load_summary
from .stats import PRF, percentile

if TYPE_CHECKING:
    from ..store.summaryfile import Summary
    from .baseline import Change, Comparison

CASES_DIR = Path(__file__).resolve().parent.parent / "assets" / "conformance"
CONFORMANCE = "conformance.json"  # the certificate, in the run folder

# A scenario's verdict, in the words of a certificate.
CERTIFICATION: dict[str, str] = {
    "pass": "certified",
    "fail": "not certified",
    "inconclusive": "inconclusive",
}


def certification(verdict: str) -> str:
    """The status of a behaviour whose scenario has this verdict."""
    return CERTIFICATION.get(verdict, "inconclusive")


class ConformanceRequest(msgspec.Struct, frozen=True):
    """What a person asked ``scenarist conformance`` for."""

    target: str
    with_paths: tuple[Path, ...] = ()  # --with: the team's own cases (files or folders)
    runs: int | None = None
    concurrency: int | None = None
    out: Path | None = None  # None: runs/ beside scenarist.yaml
    record: Path | None = None
    baseline: Path | None = None  # an earlier conformance run (its folder or summary.json)
    argv: tuple[str, ...] = ()


class Case(msgspec.Struct, frozen=True):
    """One canonical case, compiled: what ``--list`` prints."""

    id: str
    certifies: str  # the scenario's description
    runs: int
    min_pass: int
    file: str
    builtin: bool


class Behaviour(msgspec.Struct, frozen=True):
    """One case's result in a certificate."""

    case: str
    certifies: str
    builtin: bool
    status: str  # certified | not certified | inconclusive
    verdict: str  # the scenario's verdict: pass | fail | inconclusive
    passes: int
    decided: int
    planned: int
    min_pass: int
    errors: int
    ci_low: float
    ci_high: float
    p50_ms: float | None
    p95_ms: float | None

    def as_json(self) -> dict[str, Any]:
        return {"case": self.case, "certifies": self.certifies, "builtin": self.builtin,
                "status": self.status, "verdict": self.verdict, "passes": self.passes,
                "decided": self.decided, "planned": self.planned, "min_pass": self.min_pass,
                "errors": self.errors, "ci_low": self.ci_low, "ci_high": self.ci_high,
                "latency_ms": {"p50": self.p50_ms, "p95": self.p95_ms}}


class Certificate(msgspec.Struct, frozen=True):
    """What a conformance run says about one endpoint."""

    run_id: str
    target: str
    endpoint: str  # what the target runs, in a few words
    behaviours: tuple[Behaviour, ...]
    tool_calls: PRF
    p50_ms: float | None  # over every attempt that reached the endpoint
    p95_ms: float | None
    timed: int  # how many attempts the percentiles are over
    errors: Mapping[str, int]  # endpoint errors by kind
    baseline: str | None = None  # the earlier conformance run's id, with --baseline
    regressions: tuple[Change, ...] = ()  # passed there, fails here
    changes: Mapping[str, int] | None = None  # every status of the comparison, counted

    def with_status(self, status: str) -> list[Behaviour]:
        return [b for b in self.behaviours if b.status == status]

    @property
    def certified(self) -> bool:
        return all(b.status == "certified" for b in self.behaviours)

    @property
    def conclusion(self) -> str:
        """One line: does the endpoint conform, and if not, where it fell short."""
        n = len(self.behaviours)
        failed = self.with_status("not certified")
        open_ = self.with_status("inconclusive")
        if self.certified:
            return f"{self.target} conforms: all {n} behaviours certified."
        if failed:
            line = (f"{self.target} does not conform: {len(failed)} of {n} behaviours not "
                    f"certified ({_ids(failed)})")
            if open_:
                line += f"; {len(open_)} inconclusive ({_ids(open_)})"
            return line + "."
        errors = sum(self.errors.values())
        why = (f"{errors} attempt{'s' if errors != 1 else ''} ended in an endpoint error"
               if errors else "attempts were not run")
        which = (f"all {n} behaviours are inconclusive" if len(open_) == n
                 else f"{len(open_)} of {n} behaviours are inconclusive ({_ids(open_)})")
        return (f"{self.target} is not certified: {which} because {why}; run it again once "
                "the endpoint answers.")

    def as_json(self) -> dict[str, Any]:
        return {
            "schema_version": SCHEMA_VERSION,
            "run_id": self.run_id,
            "target": self.target,
            "endpoint": self.endpoint,
            "certified": self.certified,
            "conclusion": self.conclusion,
            "behaviours": [b.as_json() for b in self.behaviours],
            "tool_calls": self.tool_calls.as_json(),
            "latency_ms": {"p50": self.p50_ms, "p95": self.p95_ms, "attempts": self.timed},
            "errors": dict(self.errors),
            "baseline": None if self.baseline is None else {
                "run_id": self.baseline,
                "regressed": [c.scenario for c in self.regressions],
                "counts": dict(self.changes or {})},
        }


def _ids(behaviours: Sequence[Behaviour]) -> str:
    return ", ".join(b.case for b in behaviours)


# ---- the cases -----------------------------------------------------------------------------

def builtin_cases() -> tuple[Path, ...]:
    """The built-in cases, in the order they are shown."""
    # why: discovery of a suite's files; report or merge load this module without it
    from ..compiler.discover import iter_yaml_files

    return tuple(iter_yaml_files(CASES_DIR))


def _problem(message: str, hint: str = "", code: str = "E212") -> Diagnostic:
    return Diagnostic(Span("<command line>", 1, 1), code, message, hint)


def team_cases(paths: Sequence[Path], suite_file: Path | None
               ) -> tuple[list[Path], list[Diagnostic]]:
    """The scenario files of ``--with`` PATHs: a file as it is, a folder searched as
    ``run`` searches one (``*.yaml`` and ``*.yml``, hidden folders and ``runs/`` left
    out). The suite's ``exclude:`` does not apply: a team may keep its canonical cases in
    the suite's folder and out of everyday runs. A file under another suite's
    ``scenarist.yaml`` is refused (E211): its library is not this suite's."""
    # why: discovery of a suite's files and more; report or merge load this module without it
    from ..compiler.discover import iter_yaml_files
    from ..compiler.suite import SUITE_FILE, display_path, find_suite_file

    files: list[Path] = []
    problems: list[Diagnostic] = []
    mine = suite_file.resolve() if suite_file is not None else None
    for p in paths:
        found = [p] if not p.is_dir() else list(iter_yaml_files(p))
        found = [f for f in found if f.name != SUITE_FILE]
        if not found:
            problems.append(_problem(f"--with {p}: no scenario files (*.yaml) there",
                                     "give a scenario file, or a folder that holds some"))
        for f in found:
            nearest = find_suite_file(f.parent)
            if nearest is not None and nearest.resolve() != mine:
                problems.append(_problem(
                    f"--with {p}: {display_path(f)} belongs to the suite "
                    f"{display_path(nearest)}, not to "
                    f"{display_path(suite_file) if suite_file else 'this folder (no suite)'}",
                    "run scenarist conformance from the folder of the suite the cases are "
                    "written for", "E211"))
                continue
            files.append(f)
    return files, problems


def _suite_file() -> Path | None:
    # why: the suite's reader; report or merge load this module without it
    from ..compiler.suite import find_suite_file

    return find_suite_file(Path.cwd())


def list_cases(with_paths: Sequence[Path] = (), runs: int | None = None) -> list[Case]:
    """``scenarist conformance --list``: the built-in cases and the team's, compiled (with
    ``runs``, min_pass scaled as for a run). Against the suite of the current folder when
    there is one (the team's cases may use its tool library); the built-in cases need none.
    Raises InputError."""
    # why: the compiler and more; report or merge load this module without it
    from ..compiler.compile import compile_files, compile_paths
    from ..compiler.discover import ScenarioFile
    from ..compiler.suite import display_path

    suite_file = _suite_file()
    team, problems = team_cases(with_paths, suite_file)
    if problems:
        raise InputError(problems)
    builtin = builtin_cases()
    files = (*builtin, *team)
    if suite_file is not None:
        compiled = compile_paths((suite_file,), runs=runs, extra_files=files)
        diagnostics, scenarios = compiled.diagnostics, compiled.scenarios
    else:
        diags = Collector()
        scenarios = compile_files([ScenarioFile(f.resolve(), display_path(f)) for f in files],
                                  None, diags, runs=runs).scenarios
        diagnostics = diags.diagnostics
    errors = [d for d in diagnostics if d.severity == "error"]
    if errors:
        raise InputError(errors)
    ours = {str(f.resolve()) for f in builtin}
    return [Case(s.id, s.description, s.runs, s.min_pass, s.file,
                 str(Path(s.file).resolve()) in ours) for s in scenarios]


# ---- the run -------------------------------------------------------------------------------

def cases_of(request: ConformanceRequest) -> tuple[Path, tuple[Path, ...]]:
    """The suite file of the current folder, the built-in cases and the team's (--with): a
    conformance run's files. InputError when there is no suite here, or a --with path is
    wrong."""
    # why: the suite's reader; report or merge load this module without it
    from ..compiler.suite import SUITE_FILE

    suite_file = _suite_file()
    if suite_file is None:
        raise InputError([_problem(
            f"no {SUITE_FILE} in the current folder or its parents: the target to certify "
            "is one of a suite's targets",
            f"run scenarist conformance from your suite's folder, or create {SUITE_FILE} "
            "with the target (see docs/conformance.md)", "E210")])
    team, problems = team_cases(request.with_paths, suite_file)
    if problems:
        raise InputError(problems)
    return suite_file, (*builtin_cases(), *team)


def earlier_run(path: Path, target: str) -> Summary:
    """``--baseline``: the summary of an earlier conformance run, its rows put on
    ``target`` (a certificate is about one endpoint, whatever the suite named it). NotReady
    when the folder is not a conformance run."""
    folder = path if path.is_dir() else path.parent
    if not (folder / CONFORMANCE).is_file():
        raise NotReady(f"--baseline {path} is not a conformance run (it has no {CONFORMANCE}); "
                       "give the folder of an earlier scenarist conformance run")
    try:
        summary = load_summary(path)
    except RunDirError as exc:
        raise NotReady(f"--baseline {path}: {exc}") from None
    targets = sorted({r.target for r in summary.scenarios})
    if len(targets) != 1:
        raise NotReady(f"--baseline {path} ran {len(targets)} targets; a conformance run "
                       "certifies one")
    return summary.replace(scenarios=tuple(msgspec.structs.replace(r, target=target)
                                           for r in summary.scenarios))


def certify(run_dir: Path, summary: Summary, comparison: Comparison | None,
            endpoint: str, builtin: Set[str] = frozenset()) -> Certificate:
    """The certificate of a conformance run folder, from its summary (and its comparison
    with the baseline, when there was one). ``builtin``: the ids of the built-in cases."""
    plan = read_plan(run_dir)
    (target,) = plan.target_names
    rows = {r.scenario: r for r in summary.scenarios}
    behaviours = []
    for spec in plan.scenarios:
        r = rows[spec.id]
        behaviours.append(Behaviour(
            spec.id, spec.description, spec.id in builtin, certification(r.verdict),
            r.verdict, r.passes, r.decided, r.planned, r.min_pass, r.errors,
            r.ci_low, r.ci_high, r.latency_ms.p50, r.latency_ms.p95))
    latencies = [r.latency_ms for r in latest_records(run_dir)
                 if r.status != "error" and r.latency_ms is not None]
    t = summary.tool_calls.by_target.get(target) or ToolCounts()
    errors: dict[str, int] = {}
    for r in summary.scenarios:
        for kind, n in r.error_kinds.items():
            errors[kind] = errors.get(kind, 0) + n
    regressions: tuple[Change, ...] = ()
    baseline: str | None = None
    counts: dict[str, int] | None = None
    if comparison is not None:
        baseline = comparison.before
        regressions = comparison.regressions
        counts = {k: n for k, n in comparison.counts().items() if n}
    return Certificate(summary.run_id or run_dir.name, target, endpoint,
                       tuple(behaviours), PRF(t.tp, t.fp, t.fn, t.tn),
                       percentile(latencies, 50), percentile(latencies, 95), len(latencies),
                       errors, baseline, regressions, counts)


def refresh_certificate(run_dir: Path, summary: Summary,
                        comparison: Comparison | None) -> Certificate | None:
    """The certificate of a conformance run folder, made again after its summary was
    (``scenarist report``, ``scenarist run --resume``) and kept in place of the old one;
    None, and nothing written, when the folder is not a conformance run."""
    path = run_dir / CONFORMANCE
    if not path.is_file():
        return None
    try:
        old = read_json(path)
    except RunDirError:
        return None
    builtin = {str(b.get("case")) for b in old.get("behaviours") or () if b.get("builtin")}
    cert = certify(run_dir, summary, comparison, str(old.get("endpoint") or ""), builtin)
    write_json(path, cert.as_json())
    return cert


__all__ = ["CASES_DIR", "CERTIFICATION", "CONFORMANCE", "Behaviour", "Case", "Certificate",
           "ConformanceRequest", "builtin_cases", "cases_of", "certification", "certify",
           "earlier_run", "list_cases", "refresh_certificate", "team_cases"]
