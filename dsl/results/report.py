"""Report: a run folder becomes ``report.html`` — one self-contained file that anyone can
open, with no network request of any kind.

Renders a summary it is given (dsl.results.summarize makes it, the after-run chain in
dsl/pipeline/ chains them) with the stored attempts, so a report can be made again at any
time without calling a model. Three stages, each callable alone::

    build_view(plan, records, summary, run, comparison, trends) -> ReportView   # view model
    render(view) -> str                                                         # HTML text
    write_report(path, view) -> Path                                            # the file

:class:`Transcripts` keeps what the report shows of each attempt while the records stream
past the summary, so that results.jsonl is read once for both.

What is server-rendered (readable with JavaScript off): the headline, the scenario table,
and each scenario's pass-rate bar and per-check pass rates. What is rendered lazily, when a
scenario or an attempt is opened: the attempts and their transcripts, built by the inline
script with ``textContent`` only from JSON data, one blob per scenario row
(``<script type="application/json" id="attempts-N">``), so that opening a scenario parses
only its own attempts.

Model output is untrusted text. The HTML is autoescaped (nothing from a run is marked
safe); the JSON data has ``<``, ``>``, ``&``, U+2028 and U+2029 written as ``\\u`` escapes,
so no text from a run can close the script element or appear as markup anywhere in the
file; and the Content-Security-Policy allows only the report's own script (by its SHA-256
hash), inline styles and ``data:`` images — the images a scenario attached, which the run
folder keeps (``attachments/``) and the report embeds once per row, as thumbnails.
"""

from __future__ import annotations

import base64
import contextlib
import datetime as dt
import functools
import gc
import hashlib
import json
import marshal
import os
import pickle
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from ..compiler.moment import minute
from ..errors import SERVER_WORDS, explain
from ..model import ATTACHMENT_PART, Call, JudgeAnswer, Retried, attachment_refs
from ..store import AttemptRecord, CheckResult
from ..store.cachefile import Damaged, read_cache, remove_damaged, say_damaged
from ..store.jsonfile import create_new
from ..store.planfile import PlanFile, PlannedScenario
from ..store.runfile import RunInfo
from ..store.summaryfile import Summary, SummaryJudge, SummaryRow, ToolCounts
from ..verdict import VERDICTS, words
from .baseline import Change, Comparison, pts
from .words import (
    failed_before_checks,
    missing_text,
    not_evaluated_text,
    not_run_reason,
    pct,
    recall_text,
    side_text,
    target_what,
    unseen_why,
)

if TYPE_CHECKING:
    from ..history.store import TrendPoint

REPORT = "report.html"
MAX_REPORT_ATTEMPTS = 20_000  # transcripts embedded in one report (all are in results.jsonl)
MIN_PER_ROW = 50
ASSETS = Path(__file__).parent.parent / "assets"
DATA_VERSION = 1

# Limits on what is embedded for lazy rendering (the full text stays in results.jsonl).
MAX_TEXT = 100_000  # characters of one string: an answer, a tool output, a judge's reply
INTERN_MIN = 8  # strings at least this long are stored once and referred to by index

TRUNCATED_NOTE = ("\n\n[… cut here by the report: {n:,} characters in all. The full text is "
                  "in results.jsonl.]")
_MOMENT = re.compile(r"Current date and time: ([^\n]+?)\.?[ \t]*$", re.M)
# As report.js: C0 and C1 controls but tab and newline (and CR before LF), DEL, bidi overrides
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]"
                      "|\r(?!\n)")


# ---- the view model ------------------------------------------------------------------------

class Bar(msgspec.Struct, frozen=True):
    """A pass-rate bar: the rate, its 95% Wilson interval (whiskers), the min_pass mark.
    All in percent of the bar's width."""

    fill: float
    low: float
    high: float
    mark: float | None
    label: str  # what a screen reader says


class CheckRate(msgspec.Struct, frozen=True):
    label: str  # its readable name (name:) or the check as written
    named: bool  # the label is a name its author gave (shown as words, not as code)
    always: bool  # it must pass in every attempt (always: true)
    judge: bool
    passes: int
    unsure: int
    evaluated: int
    pass_rate: float | None
    bar: Bar
    ci_low: float = 0.0
    ci_high: float = 1.0
    not_evaluated: int = 0  # attempts in which it was not evaluated
    unseen_why: str = ""  # why (words.unseen_why)

    @property
    def flaky(self) -> bool:
        """Passes sometimes and fails sometimes: the expectation that makes a scenario flaky."""
        return self.pass_rate is not None and 0 < self.pass_rate < 1

    @property
    def never(self) -> bool:
        return self.pass_rate == 0


class FailingCheck(msgspec.Struct, frozen=True):
    label: str
    count: int
    named: bool
    always: bool


class Problem(msgspec.Struct, frozen=True):
    """One kind of endpoint error (or failure before the checks) of a row: how many, what it
    means in plain words (dsl/errors.py), and what the server said, for one click away."""

    kind: str
    count: int
    explanation: str
    said: str
    error: bool  # an endpoint error (counts neither way), not a failed attempt
    said_by: str = "What the server said"  # or "What happened": no server said it


class TrendBar(msgspec.Struct, frozen=True):
    """One earlier run in a row's trend: its pass rate and interval, as a small column."""

    run_id: str
    when: str
    verdict: str
    passes: int
    decided: int
    rate: float | None
    low: float
    high: float
    current: bool  # this run

    @property
    def label(self) -> str:
        return (f"{self.run_id}: {self.passes} of {self.decided} passed ({pct(self.rate)}, "
                f"95% interval {pct(self.low)} to {pct(self.high)})")


class Row(msgspec.Struct, frozen=True):
    """One scenario × target, as the table and its detail show it."""

    index: int
    scenario: str
    target: str
    file: str
    line: int
    description: str
    tags: tuple[str, ...]
    at: str
    message: str
    verdict: str
    planned: int
    runs: int
    decided: int
    passes: int
    unsure: int
    errors: int
    not_run: int
    min_pass: int
    pass_rate: float | None
    ci_low: float
    ci_high: float
    bar: Bar
    checks: tuple[CheckRate, ...]
    failing_checks: tuple[FailingCheck, ...]
    error_kinds: tuple[Problem, ...]  # endpoint errors and failures before the checks
    verdict_reason: str  # min_pass, always_broken, always_unseen (dsl/verdict.py)
    always_broken: int
    has_always: bool
    latency_p50: float | None
    latency_p95: float | None
    tokens: int | None  # None: unknown (an agent that does not say them)
    change: Change | None
    search: str  # what the search box matches, lowercased
    pass_k: tuple[tuple[str, float, float], ...] = ()  # (k, pass@k, pass^k)
    tool_calls: ToolCounts | None = None  # tp, fp, fn, precision, recall, f1
    trend: tuple[TrendBar, ...] = ()  # this scenario × target over its last runs (history)
    # what really failed, when attempts failed before their checks could decide ("3 attempts
    # failed before their checks could decide: turn 1: reached max_steps ..."), and the
    # checks of turns never played (never a pass, a failure or a broken always check)
    failed_first: str = ""
    not_evaluated: str = ""

    @property
    def verdict_rank(self) -> int:
        return words(self.verdict).order

    @property
    def shown_failing(self) -> tuple[FailingCheck, ...]:
        """The failing checks the table's cell shows: the first two, and every broken
        ``always`` check (it decided the verdict: never among the "more")."""
        return tuple(fc for i, fc in enumerate(self.failing_checks) if i < 2 or fc.always)


class Headline(msgspec.Struct, frozen=True):
    scenarios: int
    passed: int
    failed: int
    inconclusive: int
    attempts: int
    passes: int
    unsure: int
    errors: int
    not_run: int
    pass_rate: float | None
    tokens: int | None  # None: no attempt's tokens are known
    tokens_unknown: tuple[str, ...]  # the targets whose tokens are unknown
    model_calls: int
    targets: tuple[tuple[str, str], ...]  # (name, what it runs: model, cassette, entry)
    started: str
    duration: str
    run_id: str
    suite: str
    interrupted: bool
    judge: str  # the judge and whether judge-check measured it ("" without a judge)


class BaselineView(msgspec.Struct, frozen=True):
    run_id: str
    started: str
    counts: tuple[tuple[str, int], ...]
    removed: tuple[tuple[str, str], ...]


class PairRow(msgspec.Struct, frozen=True):
    """One scenario in a target-against-target table."""

    scenario: str
    before: str  # "60% (23–88%)" or "–"
    now: str
    change: Change


class PairView(msgspec.Struct, frozen=True):
    """``run --compare old:new``: the new target against the old, scenario by scenario."""

    old: str
    new: str
    counts: tuple[tuple[str, int], ...]
    rows: tuple[PairRow, ...]


class ToolScore(msgspec.Struct, frozen=True):
    """Tool-call precision, recall and F1 of the suite or of one target."""

    name: str  # "all targets" or a target's name
    tp: int
    fp: int
    fn: int
    tn: int
    precision: float
    recall: float
    f1: float
    expected: int | None = None  # attempts that expected a tool call (words.recall_text)


class ReportView(msgspec.Struct, frozen=True):
    title: str
    headline: Headline
    rows: tuple[Row, ...]
    targets: tuple[str, ...]
    tags: tuple[str, ...]
    baseline: BaselineView | None
    blobs: tuple[str, ...]  # per row: its attempts, escaped for <script type=application/json>
    generated: str
    pairs: tuple[PairView, ...] = ()
    tool_scores: tuple[ToolScore, ...] = ()  # the suite's first, then per target
    has_trend: bool = False
    skipped: tuple[tuple[str, str, str], ...] = ()  # (scenario, target, why) not run
    # a merge without some shards: (what it left out, in a sentence; ((scenario, why), ...))
    missing: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    @property
    def not_run(self) -> int:
        """Scenarios of missing shards (a shard whose scenarios are unknown counts one)."""
        return sum(len(scenarios) or 1 for _, scenarios in self.missing)


def _judge_line(judge: SummaryJudge | None) -> str:
    if judge is None:
        return ""
    return visible(f"{judge.target or 'the judge'}: {judge.validation}")


def _bar(rate: float | None, low: float, high: float, mark: float | None, label: str) -> Bar:
    return Bar(round((rate or 0) * 100, 1), round(low * 100, 1), round(high * 100, 1),
               None if mark is None else round(min(1.0, mark) * 100, 1), label)


def visible(text: str) -> str:
    """Control characters (and bidi overrides) as escapes any font can show: ``\\x1b``,
    ``\\u202e``. They would otherwise vanish, or reorder the text around them."""
    def esc(m: re.Match[str]) -> str:
        c = ord(m.group())
        return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"
    return _CONTROL.sub(esc, text)


_when = functools.partial(minute, zone=" UTC")


def _duration(seconds: float | None) -> str:
    if not seconds:
        return ""
    if seconds < 60:
        return f"{seconds:.1f} s"
    m, s = divmod(round(seconds), 60)
    if m < 60:
        return f"{m} min {s} s"
    h, m = divmod(m, 60)
    return f"{h} h {m} min"


def _row(i: int, r: SummaryRow, spec: PlannedScenario | None, change: Change | None,
         models: Mapping[str, str], trend: tuple[TrendBar, ...] = ()) -> Row:
    """One summary row as the page shows it. Text is passed through :func:`visible` here,
    once, so the table, its data attributes and the filters' options all agree."""
    planned = r.planned or 1
    rate = r.pass_rate
    label = (f"pass rate {pct(rate)}, 95% interval {pct(r.ci_low)} to {pct(r.ci_high)}, "
             f"needs {r.min_pass} of {r.planned}")
    checks = []
    named = spec.named_labels if spec is not None else frozenset()
    for c in r.checks:
        cr = c.pass_rate
        name = visible(c.label)
        low, high = c.ci_low, c.ci_high
        checks.append(CheckRate(
            name, c.label in named, c.always, c.judge, c.passes, c.unsure, c.evaluated, cr,
            _bar(cr, low, high, None, f"{name}: passed {pct(cr)}, 95% interval {pct(low)} "
                 f"to {pct(high)}"), low, high, c.not_evaluated,
            unseen_why([c]) if c.not_evaluated else ""))
    said = r.error_messages
    problems = [Problem(visible(k), n, explain(k), visible(said.get(k, "")), error,
                        "What the server said" if k in SERVER_WORDS else "What happened")
                for kinds, error in ((r.error_kinds, True), (r.failure_kinds, False))
                for k, n in sorted(kinds.items(), key=lambda kv: -kv[1])]
    tags = tuple(visible(t) for t in r.tags)
    scenario, target = visible(r.scenario), visible(r.target)
    file, description = visible(r.file), visible(r.description)
    search = " ".join([scenario, target, visible(models.get(r.target, "")), file,
                       description, *tags]).lower()
    at_k, hat_k = r.pass_at_k, r.pass_hat_k
    return Row(
        index=i, scenario=scenario, target=target, file=file, line=r.line,
        description=description, tags=tags, at=visible(spec.at if spec else ""),
        message=visible(spec.message if spec else ""), verdict=r.verdict,
        planned=r.planned, runs=r.runs, decided=r.decided, passes=r.passes,
        unsure=r.unsure, errors=r.errors, not_run=r.not_run,
        min_pass=r.min_pass, pass_rate=rate, ci_low=r.ci_low, ci_high=r.ci_high,
        bar=_bar(rate, r.ci_low, r.ci_high, r.min_pass / planned, label),
        checks=tuple(checks),
        failing_checks=tuple(FailingCheck(visible(fc.label), fc.count, fc.label in named,
                                          fc.always)
                             for fc in r.failing_checks),
        error_kinds=tuple(problems),
        verdict_reason=r.verdict_reason or "min_pass",
        always_broken=r.always_broken,
        has_always=any(c.always for c in checks),
        latency_p50=r.latency_ms.p50, latency_p95=r.latency_ms.p95,
        tokens=r.tokens.total if r.tokens is not None else None, change=change,
        search=search,
        pass_k=tuple((k, at_k[k], hat_k.get(k, 0.0)) for k in at_k),
        tool_calls=r.tool_calls, trend=trend,
        failed_first=visible(failed_before_checks(r)),
        not_evaluated=visible(not_evaluated_text(r)))


def _trend(points: Iterable[TrendPoint], row: SummaryRow, run_id: str,
           started: str | None) -> tuple[TrendBar, ...]:
    """A row's earlier runs (oldest first, as the history gave them), then this run; empty
    when the history has no earlier run of it."""
    earlier = [TrendBar(visible(p.run_id), _when(p.started_at), p.verdict, p.passes,
                        p.decided, p.pass_rate, p.ci_low, p.ci_high, False)
               for p in points if p.run_id != run_id]
    if not earlier:
        return ()
    now = TrendBar(visible(run_id), _when(started), row.verdict, row.passes, row.decided,
                   row.pass_rate, row.ci_low, row.ci_high, True)
    return (*earlier, now)


def _pairs(summary: Summary) -> tuple[PairView, ...]:
    out = []
    for data in summary.compare:
        c = Comparison.from_json(data)
        rows = tuple(PairRow(visible(ch.scenario), side_text(ch.before), side_text(ch.now), ch)
                     for ch in c.ordered())
        out.append(PairView(visible(c.before), visible(c.after),
                            tuple((k, n) for k, n in c.counts().items() if n), rows))
    return tuple(out)


def _tool_scores(summary: Summary) -> tuple[ToolScore, ...]:
    scores = summary.tool_calls
    named = [("all targets", scores.all)]
    if len(scores.by_target) > 1:
        named += list(scores.by_target.items())
    return tuple(ToolScore(visible(n), d.tp, d.fp, d.fn, d.tn, d.precision, d.recall,
                           d.f1, d.expected)
                 for n, d in named if d.relevant)


# The data for lazy rendering: one blob per table row i (<tbody data-row="i">), in
# <script type="application/json" id="attempts-i">, so that opening a scenario parses only
# its own attempts: {"version", "strings", "attempts"}, the attempts in run order. Arrays,
# not objects, keep it small and quick to write at 10,000 attempts; report.js names the
# positions again. A text field is a string, or an index into that blob's "strings".
#
#   attempt  [run, status, reason, started_at, latency_ms, steps, tokens, retries,
#             error: [kind, message, http_status, explanation] | null, events, checks,
#             failure: [kind, explanation] (only when it failed before its checks),
#             world: the changes it made to its world (_world_changes; only with some),
#             stderr: what an agent program wrote on its standard error (kind: command;
#             only when it wrote any)] — the optional tail padded with nulls
#   event    ["s", system, moment]      ["u", user]         ["a", assistant text]
#            ["A", the answer]          ["t", tool name, tool result]
#            ["c", tool name, raw arguments, action, pending (0/1), error, decision]
#                                                  (the last three optional)
#            ["e", how the attempt ended, when not with an answer]  ["o", role, text]
#            ["H", messages]  the messages of given.history follow, up to ["h"]
#            ["T", turn number, kind (say | confirm | cancel), text, simulated (0/1)]
#                             a conversation's turn starts (its events follow)
#            ["U", text, last (0/1)]  what the simulated user wrote and the agent was not
#                             sent: its confirm or cancel (after the "T"), or its last
#                             message, stop marker included (last: 1, at the end)
#            ["I", label, MIME type, sha256, path]   an image the person attached
#            ["F", label, sha256, path]              a text file the person attached
#            (after the "u" they came with; the blob's "files" maps each sha256 to the
#            image's data: URL or the file's text, when the run folder keeps the file)
#   check    [label, status, reason, score (only when not 0 or 1), evidence | null,
#             turn | null, 1 (only when it is an always check)]
#                             (turn only for a check of one turn, or before the 1)
#   evidence [reason, raw_reply, prompt, confidence]  (the judge's; any may be null)

Ref = Callable[[Any], "str | int"]
Loader = Callable[[str], "bytes | None"]  # a kept attachment's bytes, by its hash


class _Files:
    """The attachments one blob shows, by hash: an image as its ``data:`` URL (PNG, JPEG
    or WebP whose bytes say so; nothing else becomes a URL), a text file as its text
    (cut at MAX_TEXT). Each is read from the run folder once."""

    def __init__(self, load: Loader | None) -> None:
        self.load = load
        self.table: dict[str, str] = {}
        self._seen: set[str] = set()

    def add(self, part: Mapping[str, Any]) -> None:
        sha = str(part.get("sha256") or "")
        if sha in self._seen or self.load is None:
            return
        self._seen.add(sha)
        data = self.load(sha)
        if data is None:
            return
        if part.get("kind") == "image":
            mime = str(part.get("mime_type") or "")
            if _looks_like(data, mime):
                self.table[sha] = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
            return
        text = data.decode("utf-8-sig", errors="replace")
        if len(text) > MAX_TEXT:
            text = text[:MAX_TEXT] + TRUNCATED_NOTE.format(n=len(text))
        self.table[sha] = visible(text)


def _looks_like(data: bytes, mime: str) -> bool:
    if mime == "image/png":
        return data.startswith(b"\x89PNG\r\n\x1a\n")
    if mime == "image/jpeg":
        return data.startswith(b"\xff\xd8\xff")
    if mime == "image/webp":
        return data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    return False


class _Strings:
    """The blob's string table: a text of ``INTERN_MIN`` characters or more is stored once and
    referred to by its index (the same system prompt, user message, tool outputs and check
    reasons recur in every attempt). Texts longer than ``MAX_TEXT`` are cut, with a note."""

    def __init__(self) -> None:
        self.table: list[str] = []
        self.index: dict[str, int] = {}

    def __call__(self, value: Any) -> str | int:
        if type(value) is not str:  # the fast path first: called for every text field
            if value is None:
                return ""
            value = json.dumps(value, ensure_ascii=False)
        text: str = value
        n = len(text)
        if n < INTERN_MIN:
            return text
        if n > MAX_TEXT:
            text = text[:MAX_TEXT] + TRUNCATED_NOTE.format(n=n)
        i = self.index.get(text)
        if i is None:
            i = self.index[text] = len(self.table)
            self.table.append(text)
        return i


def _content(content: Any) -> str:
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI's list-of-parts form (attachments apart)
        return "".join(str(p.get("text", "")) if isinstance(p, dict) else str(p)
                       for p in content
                       if not (isinstance(p, dict) and p.get("type") == ATTACHMENT_PART))
    return json.dumps(content, ensure_ascii=False)


@functools.lru_cache(maxsize=256)  # one system prompt per scenario, in every attempt
def moment(system: str) -> str:
    """The moment the model was told (``Current date and time: …``), or ``""``."""
    m = _MOMENT.search(system)
    return m.group(1) if m else ""


def _call_event(name: Any, args: Any, call: Call | None, ref: Ref) -> list[Any]:
    ev = ["c", ref(name or (call.name if call else "")),
          ref(args if type(args) is str else json.dumps(args, ensure_ascii=False)),
          (call.action or "") if call else ""]  # read, create, update, delete: short
    pending, error, decision = (call.pending, call.error, call.decision) if call else \
        (False, None, None)
    if pending or error or decision:
        ev.append(1 if pending else 0)
        if error or decision:
            ev.append(ref(error) if error else "")
        if decision:
            ev.append(decision)
    return ev


def transcript(rec: AttemptRecord, ref: Ref, files: _Files | None = None) -> list[list[Any]]:
    """An attempt's transcript as events for the script to draw (see the blob's layout):
    system, user (and what they attached: ``files`` keeps what the blob shows of each),
    assistant text, tool calls (flagged from ``calls``: pending, error, what the person
    decided), tool results, the answer, and how the attempt ended when it did not end with
    an answer. A conversation's turns and its given history are marked."""
    messages = rec.messages
    calls = rec.calls
    out: list[list[Any]] = []
    if not messages:  # no transcript was kept: show what the record has
        for c in calls:
            out.append(_call_event(c.name, c.raw_args if c.args is None else c.args, c, ref))
            if c.output is not None:
                out.append(["t", ref(c.name), ref(c.output)])
        if rec.answer:
            out.append(["A", ref(rec.answer)])
        return out
    # the messages are objects (the record's reader checks it); their fields are not
    last = -1
    for i in range(len(messages) - 1, -1, -1):
        if messages[i].get("role") == "assistant":
            last = i
            break
    names: dict[str, Any] = {}
    pending: list[str] = []
    append = out.append
    n = 0
    # a model's transcript starts with its system prompt; an own-loop agent's does not
    first = 1 if messages[0].get("role") == "system" else 0
    history_end = first + rec.history if rec.history else 0
    marks = _marks(rec, history_end, first, ref) \
        if history_end or rec.turns or rec.retried else None
    reruns = _reruns(rec, history_end or first)
    retried_once = [] if rec.turns else [_retried(t, ref) for t in rec.retried]
    for i, m in enumerate(messages):
        if marks:
            out.extend(marks.pop(i, ()))
        role = m.get("role")
        content = m.get("content")
        text = content if type(content) is str else _content(content)
        if role == "tool":
            append(["t", ref(names.get(str(m.get("tool_call_id")), "")), ref(text)])
        elif role == "assistant":
            tool_calls = m.get("tool_calls")
            if not tool_calls:
                if i == last or text:
                    append(["A" if i == last else "a", ref(text)])
                continue
            if text:  # beside the last message's calls (one held for confirmation): the answer
                append(["A" if i == last else "a", ref(text)])
            if i in reruns:  # held calls run at the person's word: their results follow
                for tc in tool_calls:
                    tc = tc if type(tc) is dict else {}
                    fn = tc.get("function")
                    names[str(tc.get("id"))] = fn.get("name") if type(fn) is dict else None
                continue
            given = first <= i < history_end  # given.history: not the agent's calls
            for tc in tool_calls:
                tc = tc if type(tc) is dict else {}
                fn = tc.get("function")
                fn = fn if type(fn) is dict else {}
                call = None
                if not given:
                    call = calls[n] if n < len(calls) else None
                    n += 1
                name = fn.get("name") or (call.name if call else None)
                names[str(tc.get("id"))] = name
                ev = _call_event(name, fn.get("arguments", ""), call, ref)
                if len(ev) > 4 and ev[4]:
                    pending.append(str(name))
                append(ev)
        elif role == "user":
            append(["u", ref(text)])
            out.extend(retried_once)  # one message sent again: after it
            retried_once = []
            if type(content) is list:
                for part in attachment_refs(content):
                    if files is not None:
                        files.add(part)
                    label = ref(visible(str(part.get("label") or "")))
                    sha, path = str(part.get("sha256") or ""), ref(visible(str(part.get(
                        "path") or "")))
                    if part.get("kind") == "image":
                        append(["I", label, str(part.get("mime_type") or ""), sha, path])
                    else:
                        append(["F", label, sha, path])
        elif role == "system":
            append(["s", ref(text), ref(moment(text))])
        else:
            append(["o", ref(role), ref(text)])
    if marks:  # what comes after the last message: a turn that added none, its failure
        for i in sorted(marks):
            out.extend(marks[i])
    pending = [c.name for c in calls if c.pending] if rec.turns else pending
    if pending:
        out.append(["e", ref(f"The attempt ended here: {', '.join(pending)} waits for the "
                             "person's confirmation, so it was not run.")])
    if len(rec.user_messages) > len(rec.turns):  # its last message, which no one was sent
        out.append(["U", ref(rec.user_messages[-1]), 1])
    if rec.ended_by is not None:
        append(["e", ref(f"The conversation ended: the agent called {rec.ended_by}, which "
                         "ends the conversation (ends_conversation: true).")])
    if rec.goal_reached is not None:
        said = "said its goal was reached" if rec.goal_reached else \
            "did not say its goal was reached"
        append(["e", ref(f"The simulated user {said}.")])
    return out


def _retried(t: Retried, ref: Ref) -> list[Any]:
    """The note that a turn was sent again, why, and what its failed try did."""
    gone = [str(c.get("name")) for c in t.discarded]
    did = (f"the {len(gone)} call{'s' if len(gone) != 1 else ''} of that try "
           f"({', '.join(gone)}) {'were' if len(gone) != 1 else 'was'} discarded and the "
           "world put back as the turn found it") if gone else "that try made no tool call"
    return ["e", ref(f"Turn {t.turn} was sent again after a try that failed ({t.kind}: "
                     f"{t.reason}); {did}.")]


def _reruns(rec: AttemptRecord, start: int) -> set[int]:
    """The messages of an own-loop agent's transcript that are calls held at its endpoint,
    run at the person's word in a later turn (dsl/clients/ownloop.py): the call again, its
    result after it — not a call the agent made again. Only a transcript that holds more
    calls than the record has them."""
    if not any(t.decided for t in rec.turns):  # most attempts: no held call was decided
        return set()
    messages = rec.messages
    made = sum(len(m.get("tool_calls") or ()) for m in messages[start:]
               if m.get("role") == "assistant" and type(m.get("tool_calls")) is list)
    if made <= len(rec.calls):
        return set()
    out: set[int] = set()
    for k, t in enumerate(rec.turns):
        if not t.decided:
            continue
        ids = {rec.calls[j].id for j in t.decided if j < len(rec.calls)}
        i = rec.turns[k - 1].messages if k else start
        while i < min(t.messages, len(messages)):
            m = messages[i]
            if m.get("role") == "assistant":
                tcs = m.get("tool_calls")
                if type(tcs) is list and tcs and all(
                        type(tc) is dict and tc.get("id") in ids for tc in tcs):
                    out.add(i)
                break
            i += 1
    return out


def _marks(rec: AttemptRecord, history_end: int, first: int,
           ref: Ref) -> dict[int, list[list[Any]]]:
    """The events that mark a conversation, by the index of the message they come before:
    where given.history starts and ends, where each turn starts (and when it was sent
    again, why), and — after its last message — why a turn failed. ``first``: the index of
    the first message after a system prompt."""
    out: dict[int, list[list[Any]]] = {}
    if history_end:
        out.setdefault(first, []).append(["H", rec.history])
        out.setdefault(history_end, []).append(["h"])
    start = history_end or first
    for k, t in enumerate(rec.turns, 1):
        head = ["T", k, t.kind, ref(t.text), 1 if t.simulated else 0]
        out.setdefault(start, []).append(head)
        out[start].extend(_retried(r, ref) for r in rec.retried if r.turn == k)
        if t.simulated and t.kind != "say" and k <= len(rec.user_messages):
            out[start].append(["U", ref(rec.user_messages[k - 1]), 0])
        end = max(start, t.messages)
        if t.failure:
            out.setdefault(end, []).append(["e", ref(f"Turn {k} failed: {t.failure}")])
        start = end
    return out


def _check(c: CheckResult, ref: Ref) -> list[Any]:
    score = c.score
    if score == 0 or score == 1:  # says no more than the status
        score = None
    ev = c.evidence
    evidence = None
    if ev is not None:
        # The judge's reason and its raw reply(ies). The prompt stays in results.jsonl: it
        # repeats the whole transcript and would dominate the report's size.
        confidence: float | None = None
        raw: str | None
        reason: str
        if ev.per_item:
            raw = "\n\n".join(f"{n}. {(a.replies or ('',))[-1]}"
                               for n, a in enumerate(ev.answers, 1))
            reason = "; ".join(a.reason for a in ev.answers)
        else:
            one = ev.answers[0] if ev.answers else JudgeAnswer()
            raw = one.replies[-1] if one.replies else None
            reason, confidence = one.reason, one.confidence
        evidence = [ref(reason), ref(raw), None, confidence]
    out = [ref(c.label or c.check), c.status, ref(c.reason), score, evidence]
    if c.turn is not None or c.always:
        out.append(c.turn)
    if c.always:
        out.append(1)
    return out


def attempt(rec: AttemptRecord, ref: Ref, files: _Files | None = None) -> list[Any]:
    """One attempt record, reduced to what the report shows (see the blob's layout)."""
    err = rec.error
    out: list[Any] = [
        # started_at is the one text no two attempts share: kept inline, not in the table
        rec.run, rec.status, ref(rec.reason), rec.started_at, rec.latency_ms, rec.steps,
        rec.tokens.total if rec.tokens is not None else None, rec.retries,
        [ref(err.kind), ref(err.message), err.status, ref(explain(err.kind))]
        if err is not None else None,
        transcript(rec, ref, files),
        [_check(c, ref) for c in rec.counted_checks],
    ]
    if rec.failure:
        kind = rec.failure_kind or "model_output"
        out.append([ref(kind), ref(explain(kind))])
    # the optional tail: each at its position, the ones before it padded with nulls
    if rec.world:
        _at(out, 12, _world_changes(rec.world, ref))
    if rec.stderr:  # what an agent program (kind: command) wrote on its standard error
        _at(out, 13, ref(rec.stderr))
    return out


def _at(out: list[Any], position: int, value: Any) -> None:
    out.extend([None] * (position - len(out)))
    out.append(value)


def _world_changes(made: Sequence[Mapping[str, Any]], ref: Ref) -> list[list[Any]]:
    """What an attempt changed in its world, as the script draws it beside the transcript
    (a small before/after table per table, changed cells marked): one ``[table, id, kind,
    [[column, before, after], ...]]`` per row, kind ``set``, ``added`` or ``removed``; the
    values as text (the script shows them as text, never as markup)."""
    def text(v: Any) -> str:
        return v if isinstance(v, str) else json.dumps(v, ensure_ascii=False, default=str)

    out: list[list[Any]] = []
    for ch in made:
        if "added" in ch or "removed" in ch:
            kind = "added" if "added" in ch else "removed"
            row = ch[kind] if isinstance(ch[kind], Mapping) else {}
            cells = [[ref(str(c)), None if kind == "added" else ref(text(v)),
                      ref(text(v)) if kind == "added" else None] for c, v in row.items()]
        else:
            kind = "set"
            given = ch.get("set")
            cells = [[ref(str(c)), ref(text(b)), ref(text(a))]
                     for c, (b, a) in (given.items() if isinstance(given, Mapping) else ())]
        out.append([ref(str(ch.get("table"))), ref(str(ch.get("id"))), kind, cells])
    return out


def script_json(data: Any) -> str:
    """JSON for a ``<script type="application/json">`` element: ``<``, ``>`` and ``&``
    (and the JavaScript line separators) escaped, as jinja2's ``tojson`` does, so that no
    text can end the element or read as markup."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
    return (text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


class Transcripts:
    """The attempts a report embeds, reduced as they stream past: at most
    MAX_REPORT_ATTEMPTS, shared by the scenario × target rows; within a row, attempts that
    did not pass come first. Memory stays bounded however large the run."""

    def __init__(self, plan: PlanFile, load: Loader | None = None) -> None:
        rows = len(plan.scenarios) * max(1, len(plan.targets))
        self.quota = max(MIN_PER_ROW, MAX_REPORT_ATTEMPTS // max(1, rows))
        self.load = load
        self.files: dict[tuple[Any, Any], _Files] = {}
        self.strings: dict[tuple[Any, Any], _Strings] = {}
        self.bad: dict[tuple[Any, Any], list[list[Any]]] = {}
        self.good: dict[tuple[Any, Any], list[list[Any]]] = {}
        self.seen: dict[tuple[Any, Any], int] = {}

    def add(self, rec: AttemptRecord) -> None:
        key = (rec.scenario, rec.target)
        self.seen[key] = self.seen.get(key, 0) + 1
        buckets = self.good if rec.status == "pass" else self.bad
        bucket = buckets.setdefault(key, [])
        if len(bucket) < self.quota:
            files = self.files.get(key)
            if files is None:
                files = self.files[key] = _Files(self.load)
            bucket.append(attempt(rec, self.strings.setdefault(key, _Strings()), files))

    def tap(self, records: Iterable[AttemptRecord]) -> Iterator[AttemptRecord]:
        """Pass the records on (to the summary) while keeping what the report needs."""
        for rec in records:
            self.add(rec)
            yield rec

    def blob(self, key: tuple[Any, Any]) -> str:
        bad = self.bad.get(key, [])
        mine = bad + self.good.get(key, [])[: max(0, self.quota - len(bad))]
        mine.sort(key=lambda x: x[0] if isinstance(x[0], int) else 0)
        table = self.strings.get(key) or _Strings()
        data: dict[str, Any] = {"version": DATA_VERSION, "strings": table.table,
                                "attempts": mine, "omitted": self.seen.get(key, 0) - len(mine)}
        files = self.files.get(key)
        if files is not None and files.table:
            data["files"] = files.table
        return script_json(data)


Trends = Mapping[tuple[str, str], Sequence["TrendPoint"]]  # (scenario, target) → its runs


def build_view(plan: PlanFile, records: Iterable[AttemptRecord] | Transcripts,
               summary: Summary, run: RunInfo | None = None,
               comparison: Comparison | None = None, trends: Trends | None = None,
               load: Loader | None = None) -> ReportView:
    """The report's view model of a summary, with the attempts of ``records`` (or those
    a :class:`Transcripts` kept while the summary was made from the same records: one pass
    over results.jsonl). ``load``: an attachment's bytes by hash (the report shows them)."""
    if isinstance(records, Transcripts):
        transcripts = records
    else:
        transcripts = Transcripts(plan, load)
        for rec in records:
            transcripts.add(rec)
    return _view(plan, transcripts, summary, run, comparison, trends)


def _view(plan: PlanFile, transcripts: Transcripts, summary: Summary, run: RunInfo | None,
          comparison: Comparison | None, trends: Trends | None = None) -> ReportView:
    specs = {s.id: s for s in plan.scenarios}
    models = {t.name: target_what(t) for t in summary.targets}
    changes = comparison.by_key() if comparison else {}
    trends = trends or {}
    this_run = summary.run_id or ""
    rows = tuple(_row(i, r, specs.get(r.scenario), changes.get(r.key), models,
                      _trend(trends.get(r.key, ()), r, this_run, summary.started_at))
                 for i, r in enumerate(summary.scenarios))
    blobs = [transcripts.blob((r.scenario, r.target)) for r in rows]
    t = summary.totals
    headline = Headline(
        scenarios=t.scenarios, passed=t.passed, failed=t.failed,
        inconclusive=t.inconclusive, attempts=t.attempts, passes=t.passes,
        unsure=t.unsure, errors=t.errors, not_run=t.not_run, pass_rate=t.pass_rate,
        tokens=t.tokens, tokens_unknown=tuple(map(visible, t.tokens_unknown)),
        model_calls=t.model_calls,
        targets=tuple((visible(tg.name), visible(target_what(tg))) for tg in summary.targets),
        started=_when(summary.started_at), duration=_duration(summary.duration_s),
        run_id=visible(summary.run_id or (run.run_id if run is not None else "")),
        suite=visible(summary.suite or ""),
        interrupted=summary.interrupted,
        judge=_judge_line(summary.judge))
    baseline = None
    if comparison is not None:
        baseline = BaselineView(
            visible(comparison.baseline_run_id or ""), _when(comparison.baseline_started_at),
            tuple(comparison.counts().items()),
            tuple((visible(s), visible(t)) for s, t in comparison.removed))
    tags = sorted({tag for r in rows for tag in r.tags})
    title = "Scenarist report" + (f" — {headline.run_id}" if headline.run_id else "")
    return ReportView(
        title=title, headline=headline, rows=rows,
        targets=tuple(visible(tg.name) for tg in summary.targets), tags=tuple(tags),
        baseline=baseline, blobs=tuple(blobs),
        generated=dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        pairs=_pairs(summary), tool_scores=_tool_scores(summary),
        has_trend=any(r.trend for r in rows),
        skipped=tuple((visible(k.scenario), visible(k.target), visible(k.reason))
                      for k in summary.skipped),
        missing=tuple((visible(missing_text(m)),
                       tuple((visible(sid), not_run_reason(m)) for sid in m.scenarios or ()))
                      for m in summary.missing_shards))


# ---- rendering -----------------------------------------------------------------------------

@functools.cache
def _assets() -> tuple[str, str, str]:
    """The inline stylesheet, the inline script and the script's CSP hash source."""
    css = (ASSETS / "report.css").read_text("utf-8")
    js = (ASSETS / "report.js").read_text("utf-8")
    if "</" in js or "<!--" in js or "</" in css:
        raise RuntimeError("report assets must not contain '</' or '<!--' (they are inlined)")
    digest = base64.b64encode(hashlib.sha256(js.encode("utf-8")).digest()).decode("ascii")
    return css, js, f"'sha256-{digest}'"


@functools.cache
def _env() -> Any:
    # why: Jinja, only when a template is rendered
    from jinja2 import Environment, FileSystemLoader, StrictUndefined

    # Compiling report.html.j2 is most of the report's time on a small run (issue 27):
    # Jinja keeps the compiled code in a folder of the temp folder that only this user may
    # use (it checks), keyed by the template's checksum; no cache when that cannot be.
    try:
        cache: Any = _checked_bytecode_cache()
    except (OSError, RuntimeError):
        cache = None
    env = Environment(
        loader=FileSystemLoader(str(ASSETS)),
        autoescape=True,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        bytecode_cache=cache,
    )
    env.filters["pct"] = pct
    env.filters["recall"] = recall_text
    env.filters["pts"] = pts
    env.filters["num"] = lambda x: f"{x:,}"
    env.globals["VERDICT_WORDS"] = {v: w.word for v, w in VERDICTS.items()}
    env.globals["TERMS"] = TERMS
    return env


MAX_BYTECODE_BYTES = 64 * 2**20  # the compiled report template is ~1 MB
# how any Jinja 3 starts a bytecode file: "j2", its bytecode version and Python's, pickled
_JINJA_MAGIC = re.compile(rb"j2\x80\x02K.\.\x80\x02J.{4}\.", re.DOTALL)


def _checked_bytecode_cache() -> Any:
    """Jinja's bytecode cache, each file checked before it is used (dsl/store/cachefile.py):
    a damaged one — Jinja unpickled it, and died with ``UnpicklingError`` at every run and
    report — is ignored and written again, with one line that says so. Nothing is
    unpickled: the header is compared with the one Jinja writes, the code is unmarshalled
    and must be a code object. A file another Jinja or Python wrote, or of an older
    template, is simply not used (Jinja writes it again), as Jinja does."""
    # why: Jinja, only when a template is rendered
    from jinja2 import FileSystemBytecodeCache
    from jinja2.bccache import Bucket, bc_magic

    what = "the report's compiled template in the cache"
    code_type = type(_checked_bytecode_cache.__code__)

    class CheckedBytecodeCache(FileSystemBytecodeCache):
        def load_bytecode(self, bucket: Bucket) -> None:
            path = Path(self._get_cache_filename(bucket))
            try:
                data = read_cache(path, MAX_BYTECODE_BYTES)
                if data is None:
                    return
                if not data.startswith(bc_magic):
                    if not _JINJA_MAGIC.match(data):  # not even another Jinja's: damaged
                        raise Damaged("it does not start as a Jinja bytecode file")
                    return  # another Jinja or Python wrote it: not this one's to use
                head = pickle.dumps(bucket.checksum, 2)  # how Jinja writes the checksum
                start, end = len(bc_magic), len(bc_magic) + len(head)
                if data[start:end] != head:
                    older = data[start:end]
                    if (len(older) == len(head) and older[:7] == head[:7]
                            and older[-3:] == head[-3:]):
                        return  # the template changed since: written again once compiled
                    raise Damaged("its header is not one Jinja writes")
                try:
                    code = marshal.loads(data[end:])  # noqa: S302 (this user's own folder)
                except (EOFError, ValueError, TypeError) as exc:
                    raise Damaged(f"its compiled code cannot be read: {exc}") from None
                if type(code) is not code_type:
                    raise Damaged("it holds no compiled code")
                bucket.code = code
            except Damaged as exc:
                bucket.reset()
                remove_damaged(path)
                say_damaged(what, path, str(exc))

    return CheckedBytecodeCache()


# What the report's statistics mean, in plain words: each shown beside its word on hover and
# on keyboard focus (the template's ``term``).
TERMS = {
    "ci": "95% interval (CI): the range the agent's true pass rate very likely lies in, "
          "given these attempts. Few attempts leave it wide; more runs narrow it. When it "
          "straddles min_pass, more runs are needed to be sure which side the agent is on.",
    "change_ci": "95% interval (CI) of the change: the range the true difference between "
                 "the two pass rates very likely lies in. A change whose interval holds 0 "
                 "may be chance.",
    "pass_k": "pass@k: the chance that at least one of k attempts passes — can the agent do "
              "it at all? pass^k: the chance that all k attempts pass — can you count on it "
              "every time? Both estimated from these attempts.",
    "f1": "Tool-call F1, from 0% to 100%: how well the calls the agent made match the calls "
          "the scenarios expected. Precision is the share of its calls that were expected, "
          "recall the share of expected calls it made; F1 combines the two.",
}


def render(view: ReportView) -> str:
    return "".join(_chunks(view))


def _chunks(view: ReportView) -> Iterator[str]:
    """The report's text, in the pieces Jinja makes it in."""
    # why: Jinja's markupsafe, only for a report
    from markupsafe import Markup

    css, js, script_hash = _assets()
    csp = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; "
           f"script-src {script_hash}; base-uri 'none'; form-action 'none'")
    # Markup marks only our own assets and the blob that script_json escaped; every value
    # from a run goes through the view model as plain text and is autoescaped.
    for chunk in _env().get_template("report.html.j2").generate(
            view=view, h=view.headline, csp=csp,
            css=Markup(css), js=Markup(js),  # noqa: S704
            blobs=[Markup(b) for b in view.blobs]):  # noqa: S704
        yield str(chunk)


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Building the view allocates a few hundred thousand small containers and frees none of
    them; the cyclic garbage collector would walk them over and over (measured: a third of
    the write time at 10,000 attempts). Nothing built here forms a cycle worth collecting."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def write_report(path: Path, view: ReportView) -> Path:
    """Render the view into ``path`` (atomically); returns it."""
    # Written as it renders, a megabyte at a time: the whole text, its pieces and its bytes
    # at once were three copies of a report (issue 27: 100,000 attempts peaked at 290 MiB).
    # A lone surrogate (JSON text can hold one) cannot be written as UTF-8; in the data it
    # becomes a \\udXXX escape, which JSON reads back (a code point at a time, so pieces
    # encode as the whole would).
    tmp = path.with_name(path.name + ".tmp")
    try:
        with create_new(tmp) as f:  # never written through a planted report.html.tmp link
            pending: list[str] = []
            size = 0
            for chunk in _chunks(view):
                pending.append(chunk)
                size += len(chunk)
                if size >= 1 << 20:
                    f.write("".join(pending).encode("utf-8", "backslashreplace"))
                    pending.clear()
                    size = 0
            f.write("".join(pending).encode("utf-8", "backslashreplace"))
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
    return path
