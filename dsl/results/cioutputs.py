"""What CI reads: ``junit.xml``, ``summary.md`` and GitHub workflow-command annotations,
all made from a run's summary (never from live objects).

* ``junit.xml`` — one ``<testsuite>`` per target, one ``<testcase>`` per scenario × target;
  a failed scenario carries a ``<failure>`` whose message says how many attempts passed
  against ``min_pass`` and which checks failed; a scenario left without a verdict by
  endpoint errors carries an ``<error>``.
* ``summary.md`` — a Markdown table for a pull-request comment or ``$GITHUB_STEP_SUMMARY``.
* ``--format github`` — ``::error file=…,line=…::…`` lines that GitHub turns into
  annotations on the scenario file.

Everything here is text from YAML authors and the summary's numbers; it is escaped for
each format (XML, Markdown, workflow commands) rather than trusted.
"""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ..errors import explain, gh_data, gh_property, said_label
from ..store import write_atomic
from ..store.summaryfile import Summary, SummaryRow
from ..targets.kinds import shown_settings
from ..verdict import check_title, words
from .baseline import Change, Comparison, describe_delta, pts
from .words import (
    check_text,
    missing_text,
    not_run_reason,
    outcome_text,
    pct,
    prf_text,
    rate_text,
    runs_needed_text,
    side_text,
    target_what,
    tokens_text,
    unseen_groups,
    unseen_why,
)

JUNIT = "junit.xml"
SUMMARY_MD = "summary.md"
MAX_MD_ROWS = 100  # a pull-request comment holds at most 65,536 characters
MAX_MD_FAILING_CHECKS = 3
STEP_SUMMARY_ENV = "GITHUB_STEP_SUMMARY"



def _ordered(rows: Sequence[SummaryRow],
             changes: Mapping[tuple[str, str], Change]) -> list[SummaryRow]:
    """Regressions first, then failures, rows without a verdict, and passes."""
    def rank(r: SummaryRow) -> int:
        c = changes.get(r.key)
        return -1 if c is not None and c.status == "regressed" else words(r.verdict).order

    return sorted(rows, key=rank)


# ---- junit.xml -----------------------------------------------------------------------------

# Characters XML 1.0 cannot hold at all (not even as references), and lone surrogates.
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def xml_text(text: str) -> str:
    """Text that XML 1.0 can hold: forbidden characters are shown as ``\\x01`` escapes."""
    return _XML_BAD.sub(lambda m: f"\\x{ord(m.group()):02x}" if ord(m.group()) < 0x100
                        else f"\\u{ord(m.group()):04x}", text)


def _el(parent: ET.Element, tag: str, text: str | None = None, **attrs: Any) -> ET.Element:
    el = ET.SubElement(parent, tag, {k: xml_text(str(v)) for k, v in attrs.items()})
    if text is not None:
        el.text = xml_text(text)
    return el


def _case_time(row: SummaryRow) -> float:
    mean = row.latency_ms.mean
    return 0.0 if mean is None else mean * row.decided / 1000


def _details(row: SummaryRow) -> str:
    lines = [f"{row.file}:{row.line}: {row.scenario} on {row.target}"]
    if row.description:
        lines.append(row.description)
    lines.append(outcome_text(row))
    if row.checks:
        lines.append("Checks:")
        for c in row.checks:
            rate = pct(c.pass_rate)
            unsure = f", {c.unsure} unsure" if c.unsure else ""
            unseen = (f", not evaluated in {c.not_evaluated}: {unseen_why([c])}"
                      if c.not_evaluated else "")
            lines.append(f"  {rate:>4}  {check_title(c)}  ({c.passes} of {c.evaluated} "
                         f"passed{unsure}{unseen})")
    for kind, n in row.problem_kinds.items():
        lines.append(f"{kind} ×{n}: {explain(kind)}")
        said = row.error_messages.get(kind)
        if said:
            lines.append(f"  {said_label(kind)}: {said}")
    return "\n".join(lines)


def junit_xml(summary: Summary) -> ET.ElementTree[ET.Element]:
    rows = summary.scenarios
    skips = summary.skipped
    t = summary.totals
    root = ET.Element("testsuites", {
        "name": "scenarist",
        "tests": str(len(rows) + len(skips)),
        "failures": str(t.failed),
        "errors": str(t.inconclusive),
        "skipped": str(len(skips)),
        "time": f"{summary.duration_s or 0:.3f}",
    })
    for target in summary.targets:
        name = target.name
        mine = [r for r in rows if r.target == name]
        skipped = [k for k in skips if k.target == name]
        suite = _el(root, "testsuite", name=name, tests=len(mine) + len(skipped),
                    failures=sum(r.verdict == "fail" for r in mine),
                    errors=sum(r.verdict == "inconclusive" for r in mine),
                    skipped=len(skipped),
                    time=f"{sum(_case_time(r) for r in mine):.3f}",
                    timestamp=summary.started_at or "")
        props = _el(suite, "properties")
        for key, value in shown_settings(target):
            _el(props, "property", name=key, value=value)
        if summary.run_id:
            _el(props, "property", name="run_id", value=summary.run_id)
        for r in mine:
            case = _el(suite, "testcase", name=r.scenario, classname=name, file=r.file,
                       line=r.line, time=f"{_case_time(r):.3f}")
            if r.verdict == "fail":
                _el(case, "failure", _details(r), message=outcome_text(r), type="fail")
            elif r.verdict == "inconclusive":
                _el(case, "error", _details(r), message=outcome_text(r), type="inconclusive")
        for k in skipped:
            case = _el(suite, "testcase", name=k.scenario, classname=name, file=k.file,
                       line=k.line, time="0.000")
            _el(case, "skipped", message=k.reason)
    _not_run(root, summary)
    ET.indent(root)
    return ET.ElementTree(root)


def _not_run(root: ET.Element, summary: Summary) -> None:
    """The scenarios of shards a merge was not given: one testsuite, ``not run``, with a
    skipped testcase for each (one for the shard when its scenarios are not known), so that
    a test report shows them and their count."""
    missing = summary.missing_shards
    if not missing:
        return
    cases = [(sid, m) for m in missing
             for sid in (m.scenarios if m.scenarios is not None else (f"shard {m.name}",))]
    suite = _el(root, "testsuite", name="not run", tests=len(cases), failures=0, errors=0,
                skipped=len(cases), time="0.000", timestamp=summary.started_at or "")
    props = _el(suite, "properties")
    for m in missing:
        _el(props, "property", name="missing_shard", value=m.name)
    for sid, m in cases:
        case = _el(suite, "testcase", name=sid, classname="not run", time="0.000")
        _el(case, "skipped", missing_text(m), message=not_run_reason(m))
    root.set("tests", str(int(root.get("tests", "0")) + len(cases)))
    root.set("skipped", str(int(root.get("skipped", "0")) + len(cases)))


def write_junit(path: Path, summary: Summary) -> None:
    root = junit_xml(summary).getroot()
    write_atomic(path, ET.tostring(root, encoding="utf-8", xml_declaration=True))


# ---- summary.md ----------------------------------------------------------------------------

_MD_SPACE = re.compile(r"[\x00-\x1f\x7f\u2028\u2029]+")


def md_code(text: str) -> str:
    """Text as a Markdown code span that is safe inside a table cell."""
    text = _MD_SPACE.sub(" ", text).replace("|", "\\|")
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    if text.startswith("`") or text.endswith("`") or longest:
        text = f" {text} "
    return f"{fence}{text}{fence}"


def _md_status(c: Change) -> str:
    return {"regressed": "🔻 ", "improved": "🔺 "}.get(c.status, "") + c.status


def _md_change(c: Change | None) -> str:
    if c is None:
        return ""
    delta = f" {pts(c.delta)} pts" if c.delta is not None else ""
    return f"{_md_status(c)}{delta}"


def _md_failing(row: SummaryRow) -> str:
    failing = row.failing_checks
    checks = {c.label: c for c in row.checks}
    cells = [f"{kind} ×{n}: {md_code(row.error_messages.get(kind, kind))}"
             for kind, n in row.failure_kinds.items()]  # what failed before the checks
    # an always check that broke is never among the "more": it decided the verdict
    shown = [fc for i, fc in enumerate(failing) if i < MAX_MD_FAILING_CHECKS or fc.always]
    cells += [f"{md_code(fc.label)}{' (always)' if fc.always else ''} ×{fc.count}"
              + (f" (pass rate {check_text(checks[fc.label])})" if fc.label in checks
                 else "")
              for fc in shown]
    if len(failing) > len(shown):
        cells.append(f"+{len(failing) - len(shown)} more")
    for why, group in unseen_groups(row.checks):
        short = ("turn never played" if why == "their turn was never played" else
                 "failed before it could decide")
        cells.append(f"not evaluated ({short}): " + ", ".join(
            f"{md_code(c.label)}{' (always)' if c.always else ''} ×{n}" for c, n in group))
    if row.errors:
        cells.append(f"{row.errors} endpoint errors")
    return ", ".join(cells)


def _md_targets(summary: Summary) -> str:
    out = []
    for t in summary.targets:
        what = target_what(t)
        out.append(f"{md_code(t.name)} ({md_code(what)})" if what else md_code(t.name))
    return ", ".join(out)


def summary_markdown(summary: Summary, comparison: Comparison | None = None) -> str:
    t = summary.totals
    rows = summary.scenarios
    changes = comparison.by_key() if comparison else {}
    not_passed = t.failed + t.inconclusive
    title = (f"all {t.scenarios} passed" if not not_passed
             else f"{not_passed} of {t.scenarios} did not pass")
    missing = summary.missing_shards
    if missing:
        title += " · shards missing: " + ", ".join(m.name for m in missing)
    out = [f"## Scenarist: {title}", ""]
    for m in missing:  # what never ran, before anything that ran
        out += [f"⚠️ **Not run:** {missing_text(m, md_code)}.", ""]
    stats = [f"✅ {t.passed} passed", f"❌ {t.failed} failed"]
    if t.inconclusive:
        stats.append(f"⚠️ {t.inconclusive} without a verdict")
    line = (f"**{' · '.join(stats)}** (scenario × target) · {pct(t.pass_rate)} of "
            f"{t.attempts} attempts passed")
    if t.unsure:
        line += f" · {t.unsure} unsure"
    if t.errors:
        line += f" · {t.errors} endpoint errors"
    out.append(line)
    meta = [f"Targets: {_md_targets(summary)}"]
    if summary.run_id:
        meta.append(f"run {md_code(summary.run_id)}")
    meta.append(tokens_text(t.tokens, t.tokens_unknown))
    if summary.duration_s:
        meta.append(f"{summary.duration_s:.1f} s")
    out += ["", " · ".join(meta)]
    tools = summary.tool_calls.all
    if tools.relevant:
        line = f"Tool calls: {prf_text(tools)}"
        by_target = summary.tool_calls.by_target
        if len(by_target) > 1:
            line += " · " + " · ".join(f"{md_code(n)} F1 {pct(c.f1)}"
                                       for n, c in by_target.items())
        out += ["", line]
    if comparison is not None:
        base = md_code(comparison.baseline_run_id or "baseline")
        out += ["", f"Against {base}: {counts_text(comparison)}"]
    head = ["Verdict", "Scenario", "Target", "Passed", "Pass rate (95% CI)"]
    align = [":--", ":--", ":--", "--:", ":--"]
    if comparison is not None:
        head.append("Change")
        align.append(":--")
    head.append("Failing checks")
    align.append(":--")
    out += ["", "| " + " | ".join(head) + " |", "|" + "|".join(align) + "|"]
    ordered = _ordered(rows, changes)
    for r in ordered[:MAX_MD_ROWS]:
        cells = [words(r.verdict).markdown, md_code(r.scenario), md_code(r.target),
                 f"{r.passes}/{r.decided} (min {r.min_pass})",
                 rate_text(r)]
        if comparison is not None:
            cells.append(_md_change(changes.get(r.key)))
        cells.append(_md_failing(r))
        out.append("| " + " | ".join(cells) + " |")
    if len(ordered) > MAX_MD_ROWS:
        out += ["", f"… and {len(ordered) - MAX_MD_ROWS} more (all passed); "
                    "the full list is in report.html."]
    skips = summary.skipped
    if skips:
        shown = ", ".join(f"{md_code(k.scenario)} on {md_code(k.target)}"
                          for k in skips[:MAX_MD_ROWS])
        more = f" and {len(skips) - MAX_MD_ROWS} more" if len(skips) > MAX_MD_ROWS else ""
        out += ["", f"Skipped (meant for other targets): {shown}{more}."]
    for pair in summary.compare:
        out += ["", *pair_markdown(Comparison.from_json(pair))]
    return "\n".join(out) + "\n"


MD_ORDER = ("regressed", "improved", "unchanged", "inconclusive", "new", "removed")


def counts_text(c: Comparison) -> str:
    """``1 regressed · 2 unchanged``: the statuses that occur."""
    counts = c.counts()
    return " · ".join(f"{counts[s]} {s}" for s in MD_ORDER if counts[s]) or "nothing to compare"


def _md_delta(c: Change) -> str:
    if c.delta is None or c.interval is None:
        return _md_status(c)
    return f"{_md_status(c)} {describe_delta(c.delta, c.interval)}"


def pair_markdown(c: Comparison) -> list[str]:
    """``run --compare old:new``: one table, the new target against the old."""
    old, new = md_code(c.before), md_code(c.after)
    out = [f"### {new} against {old}", "", counts_text(c), "",
           f"| Scenario | {old} | {new} | Change (95% CI) |", "|:--|:--|:--|:--|"]
    for ch in c.ordered()[:MAX_MD_ROWS]:
        out.append(f"| {md_code(ch.scenario)} | {side_text(ch.before)} | {side_text(ch.now)} | "
                   f"{_md_delta(ch)} |")
    return out


def comparison_markdown(c: Comparison) -> str:
    """``scenarist diff --format markdown``: the changes, what needs a look first."""
    before = md_code(c.before or "the baseline")
    after = md_code(c.after or "the new run")
    regressed = len(c.regressions)
    title = (f"{regressed} regression{'s' if regressed != 1 else ''}" if regressed
             else "no regression")
    out = [f"## Scenarist diff: {title}", "", f"{after} against {before}: {counts_text(c)}", "",
           "| Change | Scenario | Target | Before | Now | Delta (95% CI) |",
           "|:--|:--|:--|:--|:--|:--|"]
    for ch in c.ordered()[:MAX_MD_ROWS]:
        delta = describe_delta(ch.delta, ch.interval) if ch.delta is not None else "–"
        out.append(f"| {_md_status(ch)} | {md_code(ch.scenario)} | {md_code(ch.target)} | "
                   f"{side_text(ch.before)} | {side_text(ch.now)} | {delta} |")
    if len(c.changes) > MAX_MD_ROWS:
        out += ["", f"… and {len(c.changes) - MAX_MD_ROWS} more."]
    unseen = [ch for ch in c.ordered()[:MAX_MD_ROWS] if _spans_zero(ch)]
    if unseen:
        out += ["", "Changes the interval cannot yet tell from chance:"]
        out += [f"- {md_code(ch.scenario)} on {md_code(ch.target)}: "
                f"{runs_needed_text(ch.rate_before or 0.0, ch.rate_now or 0.0)} (this "
                f"comparison had {ch.before.decided if ch.before else 0} and "
                f"{ch.now.decided if ch.now else 0})" for ch in unseen]
    return "\n".join(out) + "\n"


def _spans_zero(ch: Change) -> bool:
    """A change of rate whose 95% interval still spans 0: too few runs to tell."""
    return (ch.rate_before is not None and ch.rate_now is not None
            and ch.rate_before != ch.rate_now and ch.interval is not None
            and not ch.interval.excludes_zero())


# ---- GitHub workflow commands --------------------------------------------------------------

def github_annotations(summary: Summary, comparison: Comparison | None = None) -> list[str]:
    """One ``::error`` (failed) or ``::warning`` (no verdict) line per scenario × target
    that did not pass, pointing at the scenario's file and line."""
    changes = comparison.by_key() if comparison else {}
    out = []
    for r in _ordered(summary.scenarios, changes):
        if r.verdict == "pass":
            continue
        level, title = (("error", f"Scenario {r.scenario} failed on {r.target}")
                        if r.verdict == "fail" else
                        ("warning", f"Scenario {r.scenario} has no verdict on {r.target}"))
        message = outcome_text(r)
        c = changes.get(r.key)
        if c is not None and c.status == "regressed":
            message += f" Regressed against the baseline: {c.note}."
        out.append(f"::{level} file={gh_property(r.file)},line={r.line},"
                   f"title={gh_property(title)}::{gh_data(message)}")
    return out


# ---- all of it -----------------------------------------------------------------------------

def write_ci_outputs(run_dir: Path, summary: Summary,
                     comparison: Comparison | None = None) -> tuple[Path, Path]:
    """Write junit.xml and summary.md into the run folder; returns their paths."""
    junit = run_dir / JUNIT
    write_junit(junit, summary)
    md = run_dir / SUMMARY_MD
    write_atomic(md, summary_markdown(summary, comparison).encode("utf-8"))
    return junit, md


def emit_github(summary: Summary, run_dir: Path, comparison: Comparison | None,
                echo: Callable[[str], None], warn: Callable[[str], None] = print) -> None:
    """``--format github``: print the annotations, and append summary.md to the job's
    summary page when ``$GITHUB_STEP_SUMMARY`` names one."""
    for line in github_annotations(summary, comparison):
        echo(line)
    step_summary = os.environ.get(STEP_SUMMARY_ENV)
    if step_summary:
        try:
            md = (run_dir / SUMMARY_MD).read_text("utf-8")
            with open(step_summary, "a", encoding="utf-8") as f:
                f.write(md + "\n")
        except OSError as exc:  # the run's results are safe; only the job summary is lost
            warn(f"warning: cannot append the summary to ${STEP_SUMMARY_ENV} "
                 f"({step_summary}): {exc.strerror or exc}")
