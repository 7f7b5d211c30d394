"""``scenarist judge-check LABELS.yaml``: is the judge good enough to trust?

Asks the suite's judge about hand-labelled examples — a message, the tool results, an
answer, a judge check and the verdict a person gave — and reports how often the judge
agrees, and Cohen's kappa (agreement beyond chance: 1 is perfect, 0 is no better than
chance). Unsure and failed questions are counted apart, never as agreement.

With ``--calibrate`` (:func:`calibrate`) it also measures how well the judge's
probabilities are calibrated (``dsl/judge/calibration.py``: the figures), fits the
temperatures of ``judge.calibration`` on the labels, and measures them honestly: fitted
on one half of the labels and measured on the other. The questions are asked once; every
other figure decides the same readings again (:func:`replay`), with the run's own rules.
"""

from __future__ import annotations

import asyncio
import dataclasses
import datetime as dt
import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from ..checks import REGISTRY, CheckContext
from ..checks.grounded import grounded
from ..clients.open import open_model
from ..compiler.moment import MomentError, parse_moment
from ..compiler.redact import redactor_for
from ..compiler.suite import display_path, find_suite_file, load_suite
from ..errors import Collector, Diagnostic, InputError, Span
from ..judge.ask import Judge
from ..judge.calibration import Case, Figures, cohen_kappa, figures, fit_temperature, log_loss
from ..judge.logprobs import MIN_ANSWER_MASS, probability_of_pass
from ..judge.validation import ValidationFileError, record_validation
from ..model import AttemptData, Calibration, Call, JudgeConfig, Kind, Target, Tokens
from ..source.load import read_file
from ..source.validate import validate
from ..targets.kinds import is_model

DEFAULT_AT = "2026-01-01T12:00:00Z"


@dataclass(frozen=True, slots=True)
class Example:
    id: str
    check: str
    params: Any
    label: str
    attempt: AttemptData
    expected: str
    span: Span


@dataclass(frozen=True, slots=True)
class Result:
    example: Example
    got: str  # pass | fail | unsure | error
    reason: str
    verdicts: tuple[Any, ...] = ()  # the judge's Verdicts, one per question of the check

    @property
    def p_pass(self) -> float | None:
        """The judge's probability that the check passes: every question of it passes
        (criteria's questions taken as independent)."""
        ps: list[float | None] = [v.p_pass for v in self.verdicts]
        known = [p for p in ps if p is not None]
        if not ps or len(known) < len(ps):
            return None
        return math.prod(known)

    @property
    def kind(self) -> Kind:
        return "digits" if self.example.check in DIGIT_CHECKS else "yes_no"

    def case(self) -> Case:
        verdict = self.got if self.got in ("pass", "fail") else "unsure"
        return Case(self.example.expected, verdict, self.p_pass)

    def p_pass_at(self, temperature: float) -> float | None:
        """P(pass) at another temperature, from the token probabilities; None when a
        question has none, or its first token was not an answer (never a verdict)."""
        if not self.verdicts:
            return None
        p = 1.0
        for v in self.verdicts:
            r = v.reading
            if r is None or r.mass < MIN_ANSWER_MASS:
                return None
            q = probability_of_pass(r, temperature, v.scale, v.threshold)
            if q is None:
                return None
            p *= q
        return p


DIGIT_CHECKS = ("judge", "criteria")  # scored with one digit in logprobs mode


def load_examples(path: Path) -> tuple[list[Example], Any, str | None]:
    """The labelled examples, the suite, and the judge target the file names."""
    diags = Collector()
    name = display_path(path)
    doc = read_file(path, name)
    diags.extend(doc.diagnostics)
    diags.raise_if_errors()
    if not isinstance(doc.data, dict):
        raise InputError([Diagnostic(Span(name, 1, 1), "Y108", "a labels file must be a "
                                     "mapping with 'examples'")])
    diags.extend(validate(doc, "labels.schema.json", "the labels file"))
    diags.raise_if_errors()
    suite_file = find_suite_file(path)
    if suite_file is None:
        raise InputError([Diagnostic(Span(name, 1, 1), "E210", "no scenarist.yaml found next "
                                     "to the labels file or in its parent folders",
                                     "the judge is configured in the suite's scenarist.yaml")])
    suite = load_suite(suite_file, diags)
    diags.raise_if_errors()
    out = []
    for i, ex in enumerate(doc.data["examples"]):
        path_i = ("examples", i)
        check = ex["check"]
        cname, param = (check, True) if isinstance(check, str) else next(iter(check.items()))
        ctype = REGISTRY.get(cname)
        if ctype is None or not ctype.judge:
            judged = sorted(n for n, c in REGISTRY.items() if c.judge)
            diags.error(doc.span((*path_i, "check")), "S101",
                        f"'{cname}' is not a judge check; use one of {', '.join(judged)}")
            continue
        ctx = CheckContext(doc, (*path_i, "check", cname), {}, diags)
        prepared = ctype.prepare(param, ctx)
        try:
            at = parse_moment(ex.get("at", DEFAULT_AT))
        except MomentError as exc:
            diags.error(doc.span((*path_i, "at")), exc.code, str(exc), exc.hint)
            continue
        calls = tuple(
            Call(f"call_{j}", t["name"], t.get("args", {}), json.dumps(t.get("args", {})),
                 t["output"] if isinstance(t["output"], str) else json.dumps(t["output"],
                                                                             ensure_ascii=False),
                 "read")
            for j, t in enumerate(ex.get("tool_results") or []))
        attempt = AttemptData(ex["message"], ex["answer"], calls, at, (), 1, 0.0, Tokens())
        out.append(Example(str(ex.get("id", f"example {i + 1}")), cname, prepared,
                           cname if param is True else f"{cname}: {json.dumps(param)}",
                           attempt, ex["expected"], doc.span(path_i)))
    diags.raise_if_errors()
    return out, suite, doc.data.get("judge")


class _Listening:
    """The judge, as one check sees it: every verdict it gives is kept."""

    def __init__(self, judge: Any) -> None:
        self.judge = judge
        self.verdicts: list[Any] = []

    async def ask(self, *args: Any, **kwargs: Any) -> Any:
        v = await self.judge.ask(*args, **kwargs)
        self.verdicts.append(v)
        return v


async def ask_all(examples: Sequence[Example], judge: Judge, concurrency: int = 4
                  ) -> list[Result]:
    limit = asyncio.Semaphore(concurrency)

    async def one(e: Example) -> Result:
        evaluate = REGISTRY[e.check].evaluate_async
        assert evaluate is not None  # only judge checks are loaded
        listening = _Listening(judge)
        async with limit:
            o = await evaluate(e.params, e.attempt, listening)
        return Result(e, o.status, o.reason, tuple(listening.verdicts))

    return list(await asyncio.gather(*(one(e) for e in examples)))


async def replay(results: Sequence[Result], judge: Judge, calibration: Calibration
                 ) -> list[Result]:
    """The same questions decided again under another calibration, from the readings the
    judge kept in its memory: nothing is asked."""

    config = msgspec.structs.replace(judge.config, calibration=calibration)
    again = Judge(config, judge.model, judge.redact, use_cache=False, memory=judge.memory)
    return await ask_all([r.example for r in results], again)


# ----------------------------------------------------------------------- calibration


@dataclass(frozen=True, slots=True)
class CrossFit:
    """Temperatures fitted on one half of the labels, measured on the other."""

    fitted_on: str  # "A" or "B"
    calibration: Calibration
    figures: Figures


@dataclass(frozen=True, slots=True)
class Calibrated:
    mode: str
    min_confidence: float
    questions: Mapping[str, int]  # yes_no / digits: labelled questions (endpoint errors out)
    before: Figures  # with the configured calibration
    configured: Calibration
    fitted: Calibration | None = None  # None in json mode: nothing to fit
    after: Figures | None = None
    cross: tuple[CrossFit, ...] = ()
    cross_pooled: Figures | None = None  # every question, with the other half's fit


def fitted_temperature(results: Sequence[Result], kind: Kind, default: float) -> float:
    """The temperature of one kind of question that minimises the log loss of the labels
    (rounded to 2 decimals, as it will be pasted); ``default`` when no question of that
    kind has token probabilities."""
    usable = [r for r in results if r.kind == kind and r.p_pass_at(1.0) is not None]
    if not usable:
        return default

    def loss(t: float) -> float:
        return log_loss([(r.p_pass_at(t) or 0.0, r.example.expected == "pass")
                         for r in usable])

    return round(fit_temperature(loss), 2)


def fit_both(results: Sequence[Result], configured: Calibration) -> Calibration:
    return Calibration(fitted_temperature(results, "yes_no", configured.yes_no),
                       fitted_temperature(results, "digits", configured.digits))


def halves(results: Sequence[Result]) -> tuple[list[Result], list[Result]]:
    """Two halves, alike: within each kind of question and label, in the order of a hash
    of the example's id, alternately A and B (the same split on every run)."""
    def order(r: Result) -> tuple[str, str, str]:
        return (r.kind, r.example.expected,
                hashlib.sha256(r.example.id.encode()).hexdigest())

    a: list[Result] = []
    b: list[Result] = []
    stratum: tuple[str, str] | None = None
    i = 0
    for r in sorted(results, key=order):
        if (r.kind, r.example.expected) != stratum:
            stratum = (r.kind, r.example.expected)
            i = 0 if len(a) <= len(b) else 1  # keep the halves even across strata
        (a if i % 2 == 0 else b).append(r)
        i += 1
    return a, b


def cases(results: Sequence[Result]) -> list[Case]:
    return [r.case() for r in results]


async def calibrate(results: Sequence[Result], judge: Judge, *, fit: bool = True
                    ) -> Calibrated:
    """Before/after figures, the fitted calibration and the cross-fitted figures (with
    ``fit=False``, only the figures of the judge as configured). ``judge`` is the one that
    asked the questions (its memory holds the readings)."""
    usable = [r for r in results if r.got != "error"]
    config = judge.config
    count = {k: sum(r.kind == k for r in usable) for k in ("yes_no", "digits")}
    before = figures(cases(usable))
    base = Calibrated(config.mode, config.min_confidence, count, before, config.calibration)
    if config.mode != "logprobs" or not fit:
        return base
    fitted = fit_both(usable, config.calibration)
    after = figures(cases(await replay(usable, judge, fitted)))
    a, b = halves(usable)
    cross = []
    pooled: list[Result] = []
    for name, fit_on, measure in (("A", a, b), ("B", b, a)):
        c = fit_both(fit_on, config.calibration)
        measured = await replay(measure, judge, c)
        pooled += measured
        cross.append(CrossFit(name, c, figures(cases(measured))))
    return dataclasses.replace(base, fitted=fitted, after=after, cross=tuple(cross),
                               cross_pooled=figures(cases(pooled)))


def calibration_block(c: Calibration) -> str:
    """What to paste under ``judge:`` in scenarist.yaml."""
    return f"calibration:\n  yes_no: {c.yes_no:g}\n  digits: {c.digits:g}\n"


def _cal(x: Calibration | None) -> dict[str, float] | None:
    return None if x is None else {"yes_no": x.yes_no, "digits": x.digits}


def calibration_json(c: Calibrated) -> dict[str, Any]:
    return {
        "mode": c.mode, "min_confidence": c.min_confidence, "questions": dict(c.questions),
        "configured": _cal(c.configured), "before": c.before.as_json(),
        "fitted": _cal(c.fitted), "after": c.after.as_json() if c.after else None,
        "cross_fitted": [{"fitted_on": x.fitted_on,
                          "measured_on": "B" if x.fitted_on == "A" else "A",
                          "calibration": _cal(x.calibration), "figures": x.figures.as_json()}
                         for x in c.cross],
        "cross_fitted_pooled": c.cross_pooled.as_json() if c.cross_pooled else None,
    }


def grounded_figures(examples: Sequence[Example]) -> Figures | None:
    """The deterministic ``grounded`` check on the labelled ``faithful`` questions: how
    often it agrees with the people, with no judge at all."""

    faithful = [e for e in examples if e.check == "faithful"]
    if not faithful:
        return None
    out = []
    for e in faithful:
        o = grounded(True, e.attempt)
        out.append(Case(e.expected, o.status, 1.0 if o.status == "pass" else 0.0))
    return figures(out)


def report(results: list[Result]) -> dict[str, Any]:
    decided = [(r.example.expected, r.got) for r in results if r.got in ("pass", "fail")]
    agree = sum(a == b for a, b in decided)
    by_check: dict[str, list[tuple[str, str]]] = {}
    for r in results:
        if r.got in ("pass", "fail"):
            by_check.setdefault(r.example.check, []).append((r.example.expected, r.got))
    matrix = {f"{e}->{g}": sum(1 for a, b in decided if (a, b) == (e, g))
              for e in ("pass", "fail") for g in ("pass", "fail")}
    return {
        "schema_version": 1,
        "examples": len(results),
        "decided": len(decided),
        "unsure": sum(r.got == "unsure" for r in results),
        "errors": sum(r.got == "error" for r in results),
        "agreement": round(agree / len(decided), 4) if decided else None,
        "kappa": None if (k := cohen_kappa(decided)) is None else round(k, 4),
        "confusion": matrix,
        "by_check": {c: {"decided": len(p), "agreement": round(sum(a == b for a, b in p)
                                                                / len(p), 4),
                         "kappa": None if (k := cohen_kappa(p)) is None else round(k, 4)}
                     for c, p in sorted(by_check.items())},
        "results": [{"id": r.example.id, "check": r.example.label,
                     "expected": r.example.expected, "judge": r.got, "reason": r.reason}
                    for r in results],
        "checked_at": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
    }


# ----------------------------------------------------------------------- the command


class NoJudge(ValueError):
    """judge-check has no model target to judge with (a usage error: name one)."""


@dataclass(frozen=True, slots=True)
class JudgeCheck:
    """What a person asked ``scenarist judge-check`` for."""

    labels: Path
    judge_target: str | None = None  # --judge (else the labels file's, else the suite's)
    use_cache: bool = True
    concurrency: int | None = None
    calibrate: bool = False
    mode: str | None = None  # --mode: json or logprobs instead of judge.mode


@dataclass(frozen=True, slots=True)
class JudgeChecked:
    """What ``scenarist judge-check`` measured, and where it was kept."""

    report: dict[str, Any]  # what --json prints (with the calibration when asked)
    target: Target
    config: JudgeConfig
    calibrated: Calibrated
    grounded: Figures | None  # the grounded check on the faithful questions (--calibrate)
    suite_root: Path
    kept: Path | None  # .scenarist/judge-validation.json, where reports find it
    not_kept: str | None  # why it was not kept (a file that cannot be written)


def check_judge(request: JudgeCheck) -> JudgeChecked:
    """``scenarist judge-check``: ask the judge every labelled question, measure it (and,
    with ``calibrate``, fit and measure its calibration), and keep the measurement beside
    scenarist.yaml. Raises InputError (the labels file), NoJudge."""
    # why: the judge, only when used
    from ..judge.ask import Judge

    examples, suite, file_judge = load_examples(request.labels)
    name = (request.judge_target or file_judge
            or (suite.judge.target.name if suite.judge else None))
    target = suite.targets.get(name) if name else None
    if target is None or not is_model(target):
        raise NoJudge(f"no judge: name a kind: openai target with --judge (the suite's "
                      f"targets: {', '.join(sorted(suite.targets)) or 'none'})")
    config = suite.judge_with(target)
    if request.mode is not None:
        config = msgspec.structs.replace(config, mode=request.mode)

    async def ask() -> tuple[list[Result], Calibrated]:
        model = open_model(target, 4)
        judge = Judge(config, model, redactor_for(suite.redact, suite.targets.values()),
                      use_cache=request.use_cache, memory={})
        try:
            results = await ask_all(examples, judge,
                                    request.concurrency or target.concurrency or 4)
            return results, await calibrate(results, judge, fit=request.calibrate)
        finally:
            await model.aclose()

    results, calibrated = asyncio.run(ask())
    data = report(results)
    kept: Path | None = None
    not_kept: str | None = None
    try:
        kept = record_validation(suite.root, config, request.labels,
                                 calibrated.before.questions, calibrated.before.as_json())
    except ValidationFileError as exc:
        not_kept = str(exc)
    grounded = None
    if request.calibrate:
        grounded = grounded_figures(examples)
        data["calibration"] = calibration_json(calibrated)
        data["grounded"] = grounded.as_json() if grounded else None
    return JudgeChecked(data, target, config, calibrated, grounded, suite.root, kept, not_kept)
