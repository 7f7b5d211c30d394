"""Everything that can go wrong, and where.

Two families of problems reach a user, and they never mix:

* **Input problems** — something in a scenario file or ``scenarist.yaml`` is wrong. They are
  collected as :class:`Diagnostic` values (a :class:`Span`, a severity, a stable code, a
  message written for the person who wrote the file, and a hint), never raised one by one.
  A stage that finds errors raises :class:`InputError` carrying *all* of them; the CLI prints
  them with :func:`render` and exits with code 2 (``lint`` exits with 1).

* **Run-time problems** — the world misbehaved while a plan ran::

      ScenaristError
      ├── InputError           the user's files are wrong (carries Diagnostics)
      ├── EndpointError        a target's endpoint failed; the attempt ends with status
      │                        "error" (never a model failure, never an aborted run)
      │   └── CassetteMiss     a replay target has no recorded answer for a request
      ├── RunDirError          a run folder is missing, unreadable or of another version
      └── NotReady             what was asked cannot start as things are: an API key
                               variable that is not set, a run that cannot be resumed

Checks never raise because a model answered badly: they return an outcome (see
``dsl.checks``). An exception that is none of the above is a bug in Scenarist.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from typing import Literal

import msgspec
from msgspec.structs import force_setattr

Severity = Literal["error", "warning"]


class Span(msgspec.Struct, frozen=True, order=True):
    """A place in a user's file: 1-based line and column, as editors count."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class Code(msgspec.Struct, frozen=True):
    """A stable diagnostic code (``S101``) with its short name (``unknown-check``)."""

    id: str
    name: str
    summary: str


# Every diagnostic code Scenarist can emit. Codes are stable: docs/lint.md documents each.
CODES: dict[str, Code] = {
    c.id: c
    for c in (
        # Y: the file itself (reading, YAML syntax)
        Code("Y101", "yaml-syntax", "The file is not valid YAML."),
        Code("Y102", "duplicate-key", "A key appears twice in the same mapping."),
        Code("Y103", "tab-indent", "A tab character is used for indentation."),
        Code("Y104", "file-too-large", "The file is larger than Scenarist reads."),
        Code("Y105", "not-utf8", "The file is not UTF-8 text."),
        Code("Y106", "binary-file", "The file contains binary data."),
        Code("Y107", "empty-file", "The file is empty."),
        Code("Y108", "not-a-mapping", "The file's top level is not a mapping."),
        Code("Y109", "alias-bomb", "Aliases expand to too many values."),
        Code("Y110", "unsupported-yaml", "A YAML feature Scenarist does not accept."),
        Code("Y111", "string-too-long", "A string (or a number) is longer than Scenarist "
                                        "accepts."),
        Code("Y112", "unreadable-file", "The file cannot be read."),
        # S: the shape of the data (JSON Schema)
        Code("S101", "unknown-check", "A check name that Scenarist does not know."),
        Code("S102", "unknown-key", "A key that is not allowed at this place."),
        Code("S103", "wrong-type", "A value of the wrong type."),
        Code("S104", "missing-key", "A required key is missing."),
        Code("S105", "invalid-value", "A value outside what is allowed."),
        Code("S106", "check-shape", "A check written in a shape Scenarist cannot read."),
        Code("S107", "conflicting-keys", "Keys that cannot be used together (say and "
                                         "confirm in one turn; returns and error)."),
        # E: meaning (what the schema cannot see)
        Code("E201", "unknown-tool", "A check or scenario names a tool that does not exist."),
        Code("E202", "min-pass-above-runs", "min_pass is larger than runs."),
        Code("E203", "moment-without-offset", "given.at has no UTC offset."),
        Code("E204", "invalid-regex", "A regular expression that does not compile."),
        Code("E205", "duplicate-id", "Two scenarios have the same id."),
        Code("E206", "unknown-target", "A target name that the suite does not define."),
        Code("E207", "no-default-target", "Several targets and no default one."),
        Code("E208", "invalid-template", "A Jinja template that does not compile or passes "
                                         "a template limit."),
        Code("E209", "invalid-moment", "given.at is not a date and time."),
        Code("E210", "no-suite", "No scenarist.yaml was found."),
        Code("E211", "mixed-suites", "The paths belong to different suites."),
        Code("E212", "no-scenarios", "No scenario files were found."),
        Code("E213", "not-confirmable", "asks_to_confirm, or a confirm or cancel turn, names "
                                        "a tool without confirm: true."),
        Code("E214", "invalid-schema", "A tool's input_schema is not a valid JSON Schema."),
        Code("E215", "duplicate-tool", "Two tools in one scenario have the same name."),
        Code("E216", "missing-path", "A path given on the command line does not exist."),
        Code("E217", "unknown-check-name", "expect names a check the suite does not define."),
        Code("E218", "no-judge", "A judge check in a suite without a judge."),
        Code("E219", "bad-judge", "The judge's configuration cannot be used."),
        Code("E220", "nothing-selected", "What the command line selects holds no scenario."),
        Code("E221", "bad-history-or-compare", "history: or compare: in scenarist.yaml cannot "
             "be used."),
        Code("E224", "nothing-to-confirm", "A conversation confirms or cancels before the "
                                           "agent could ask for anything."),
        Code("E225", "bad-simulated-user", "The simulated user's target cannot play the "
                                           "person."),
        Code("E226", "no-simulated-user", "goal_reached in a scenario without a simulated "
                                          "user."),
        Code("E227", "case-lacks-value", "A template (or case.NAME) reads a value that a case "
                                         "does not have."),
        Code("E228", "bad-cases-file", "A cases_file that does not exist, is outside the "
                                       "suite, is not .csv or .jsonl, or holds no case."),
        Code("E229", "bad-case", "A case that cannot be read: a JSONL line that is not an "
                                 "object, a CSV row with the wrong number of fields, a bad "
                                 "id, runs, min_pass or tags."),
        Code("E230", "duplicate-case-id", "Two cases of one scenario have the same id."),
        Code("E231", "bad-attachment", "An attachment that cannot be sent: an absolute path "
                                       "or '..', a missing file, over 5 MiB, or a type "
                                       "Scenarist cannot send."),
        Code("E232", "unknown-argument", "A check or a fake tool's answer names an argument "
             "the tool does not have."),
        Code("E233", "argument-type", "A check or a fake tool's answer gives an argument a "
             "value of the wrong type."),
        Code("E234", "credentials-in-url", "A URL holds a user name or password (user:password@"
             "); name the key's variable with api_key_env instead."),
        Code("E240", "unknown-table", "A tool's table, or a world check's, that no world "
                                      "defines."),
        Code("E241", "unknown-column", "A table tool's where, set, row or fields, or a world "
                                       "check, names a column the table does not have."),
        Code("E242", "bad-world-table", "A world table that cannot be read (a file that is "
                                        "missing, outside the suite, not .csv or .jsonl), or "
                                        "has no id column where a world check needs one."),
        Code("E244", "table-action-mismatch", "set or row on a tool whose action does not "
                                              "fit (set: update; row: create; one: read)."),
        Code("E245", "duplicate-row-id", "Two rows of one world table have the same id."),
        Code("E246", "append-not-list", "A table tool's append adds to a column whose values "
                                        "are not lists."),
        Code("E247", "reference-call-refused", "A call of same_world_as that the scenario's "
                                               "tools refuse, or that matches no row."),
        Code("E248", "reference-call-arguments", "A call of same_world_as whose arguments do "
                                                 "not fit its tool's input_schema (one it "
                                                 "requires is missing)."),
        # X: the expression language
        Code("X301", "expr-syntax", "An expression that cannot be parsed."),
        Code("X302", "expr-unknown-name", "An expression uses a name that does not exist."),
        Code("X303", "expr-type", "An expression combines values of the wrong types."),
        Code("X304", "expr-arguments", "A function is called with the wrong arguments."),
        Code("X305", "expr-limit", "An expression is longer or deeper than allowed."),
        # W: legal, but likely wrong
        Code("W401", "min-pass-equals-runs", "Every run must pass every check."),
        Code("W402", "no-checks", "A scenario with no checks always passes."),
        Code("W403", "unused-tool", "A tool in the suite's library that no scenario uses."),
        Code("W404", "check-cannot-fail", "A check that can never fail in this scenario."),
        Code("W405", "single-run-judge", "A judge check on a single run."),
        Code("W406", "duplicate-check", "The same check appears twice."),
        Code("W407", "unused-case-value", "A column (or value) of the cases that no template "
                                          "reads."),
        Code("W409", "duplicate-check-name", "Two checks have the same name."),
        Code("W410", "arguments-without-schema", "Arguments for a tool with no input_schema."),
        Code("W411", "rate-means-every-run", "A min_pass_rate below 1 that rounds up to "
                                             "every run."),
        Code("W420", "unknown-row", "A world check names a row id the table does not have at "
                                    "the start."),
        Code("W412", "redacted-literal", "A check's text would be redacted before the check "
                                         "sees it."),
        Code("W414", "live-only-value", "An expression reads a value only a live attempt "
                                        "measures (latency_ms)."),
        Code("W430", "agent-without-tools", "An http agent's body never sends {{ mcp_url }}, "
                                            "so the agent never reaches the fake tools."),
        Code("W431", "agent-without-confirmations", "An http agent's body never sends "
                                                    "{{ confirmed }} or {{ cancelled }}, while "
                                                    "the scenarios hold calls."),
        Code("W413", "not-offered-tool", "A check names a tool the scenario does not offer "
                                         "the agent (often a misspelt name)."),
    )
}


class Diagnostic(msgspec.Struct, frozen=True):
    """One problem in a user's file, located and explained."""

    span: Span
    code: str
    message: str
    hint: str = ""
    severity: Severity = "error"

    def __post_init__(self) -> None:
        if self.code not in CODES:  # a bug in Scenarist, not a user error
            raise ValueError(f"unknown diagnostic code {self.code!r}")
        # No diagnostic ever echoes a credential, whichever stage wrote its words.
        force_setattr(self, "message", mask_credentials(self.message))
        force_setattr(self, "hint", mask_credentials(self.hint))

    @property
    def name(self) -> str:
        return CODES[self.code].name

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.span.file, self.span.line, self.span.col, self.code)


class ScenaristError(Exception):
    """Base of every error Scenarist raises on purpose."""


class InputError(ScenaristError):
    """The user's files are wrong; carries every diagnostic found."""

    def __init__(self, diagnostics: Sequence[Diagnostic]) -> None:
        self.diagnostics = tuple(sorted(diagnostics, key=Diagnostic.sort_key))
        first = self.diagnostics[0] if self.diagnostics else None
        super().__init__(f"{first.span}: {first.message}" if first else "invalid input")


class EndpointError(ScenaristError):
    """A target's endpoint failed. ``kind`` classifies it for summaries and reports.

    Kinds: ``connection`` (refused, reset, DNS), ``timeout``, ``status`` (an HTTP error
    status after retries), ``malformed`` (a reply that is not a chat completion),
    ``cassette`` (replay has no answer), ``agent`` (a ``kind: python`` agent raised, a
    ``kind: command`` program failed),
    ``unsupported_tools`` (the server refuses tool definitions for this model),
    ``tool_call_as_text`` (the server returned a tool call as plain text: it does not parse
    the model's tool calls — check its chat template or tool-call parser), ``template``
    (the target's system prompt passed a template limit while it rendered),
    ``simulated_user`` (the model playing the person wrote nothing it could say). A redirect is
    a ``status`` error; ``malformed`` covers every reply that cannot be used (see
    ``dsl.targets.base``).
    One kind is the model's fault, not the endpoint's: ``model_output`` (the server could
    not parse what the model wrote, e.g. llama.cpp's HTTP 500 for a malformed tool call) —
    the agent loop turns it into a failed attempt. :data:`EXPLANATIONS` says what each kind
    means in one sentence for the person reading the terminal or the report.

    ``maybe_processed``: the request (or one of its tries) may have reached the endpoint and
    been acted on — it was written before the failure (a timeout, a connection lost after
    the request went out, an error status, a reply that cannot be read). False only when it
    provably never left (no connection). An agent that runs its own loop must not send
    such a turn again by itself (dsl/clients/transport.py). ``retry_after``: the seconds
    the server asked to wait before trying again (its ``Retry-After``), when it said.
    """

    def __init__(self, kind: str, message: str, *, status: int | None = None,
                 retries: int = 0, maybe_processed: bool = False,
                 retry_after: float | None = None) -> None:
        self.kind = kind
        self.status = status
        self.retries = retries
        self.maybe_processed = maybe_processed
        self.retry_after = retry_after
        super().__init__(message)

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else self.kind


# What each kind of endpoint failure (and each way the model failed an attempt before its
# checks could decide) means, in one sentence for someone who does not program. The
# terminal and the report show it beside the count; the server's own words stay one click
# away (the report's "What the server said"). Every kind an EndpointError, an attempt's
# record or a recorded cassette can carry has its sentence here (a test checks it).
NEITHER = "it says nothing about the model, so it counts neither as a pass nor as a failure"
EXPLANATIONS: dict[str, str] = {
    "connection": "Scenarist could not reach the endpoint — it is not running, or the "
                  f"address in scenarist.yaml is wrong; {NEITHER}.",
    "timeout": "The endpoint took longer to answer than the target allows (timeout_ms, or "
               f"attempt_timeout_ms for the whole attempt); {NEITHER}.",
    "status": "The endpoint answered with an error (or sent Scenarist elsewhere) instead of "
              f"a reply — a server that is overloaded, or set up wrong; {NEITHER}.",
    "malformed": "The endpoint's reply was not a chat answer Scenarist could read — the "
                 "wrong kind of server, a reply that breaks HTTP, or one cut short or too "
                 f"large; {NEITHER}.",
    "unsupported_tools": "The endpoint refuses to give this model tools, so the agent could "
                         f"not be given its tools; {NEITHER}.",
    "tool_call_as_text": "The server gave the model's tool call back as plain text, so no "
                         "tool was called: the server's tool-call setup needs fixing, not "
                         f"the scenario; {NEITHER}.",
    "agent": "Your own agent (a kind: python function, a kind: command program) stopped "
             "with an error, or gave back something that is not an answer; "
             f"{NEITHER}.",
    "simulated_user": "The model that plays the person (the simulated user's target) wrote "
                      "nothing the person could say — an empty message, only a tool call, or "
                      f"GOAL_REACHED before the agent had answered; {NEITHER}.",
    "judge": "The judge model could not be asked, so the checks it decides have no verdict "
             f"in this attempt; {NEITHER}.",
    "template": "A template of the target — its system prompt, or the body of an agent "
                "service's request — could not be written out for this scenario (it went "
                f"past a limit, or read what templates may not); {NEITHER}.",
    "cassette": "The replay target's recording has no answer to this exact question — the "
                "scenario, its tools or the prompt changed since it was recorded (record it "
                f"again with --record); {NEITHER}.",
    "model_output": "The model's reply was neither a valid tool call nor an answer — small "
                    "models do this; it counts as a failed attempt.",
    "max_steps": "The agent kept calling tools without ever answering until its max_steps "
                 "model calls were spent; it counts as a failed attempt.",
    "nothing_to_confirm": "The scenario has the person confirm or cancel a call, but the "
                          "agent had not asked for anything to be confirmed this time, so "
                          "the conversation stopped there; it counts as a failed attempt.",
}
# The kinds whose message carries what a server said (its HTTP status and body); every other
# message is Scenarist's own account (a connection refused, no answer in time, max_steps
# spent), and no surface may present it as the server's words.
SERVER_WORDS = frozenset({"status", "model_output", "unsupported_tools"})


def said_label(kind: str) -> str:
    """How the terminal and the CI files introduce a kind's message: ``the server said``
    only when a server said it, else ``what happened``."""
    return "the server said" if kind in SERVER_WORDS else "what happened"


def said_short(text: str, limit: int) -> str:
    """An endpoint's message cut to ``limit`` characters for a terminal or a summary,
    whitespace collapsed. A message that quotes an agent program's standard error keeps
    that quote's end — where the exception is — rather than its start."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    at = text.find(STDERR_QUOTE)
    if at >= 0:
        head = text[:at]
        if len(head) > limit // 2:
            head = head[: limit // 2 - 1] + "…"
        room = limit - len(head) - len(STDERR_QUOTE) - 1
        quote = text[at + len(STDERR_QUOTE):]
        if room > 0:
            return f"{head}{STDERR_QUOTE}…{quote[-room:]}"
    return text[: limit - 1] + "…"


# How an endpoint error's message introduces the end of an agent program's standard error
# (dsl/clients/command.py); said_short keeps what follows it.
STDERR_QUOTE = "; its standard error ends: "


# ---- text from outside, on a terminal ----------------------------------------------------

# An escape sequence: CSI (ESC [ or the 8-bit CSI, parameters, a final byte); a control
# string — OSC (a window title, a hyperlink), DCS, SOS, PM, APC — up to BEL or ST (or the
# text's end); any other ESC and the character after it.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[\x30-\x3f]*[\x20-\x2f]*[\x40-\x7e]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[\x20-\x2f]*[\x30-\x7e]?")
# every other control character but the line break and the tab, and the bidi overrides
# and isolates (which reorder what follows them)
_CONTROL_CHAR = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def on_terminal(text: str) -> str:
    """Text a model, a tool, an agent, a server or a client wrote, as Scenarist prints it
    on a terminal (``run``, ``try``, ``mcp``, ``studio``): every escape sequence removed —
    colours, cursor moves, screen clears, window titles, hyperlinks — and every other
    control character (a carriage return that would rewrite the line, a bell, a bidi
    override) shown as an escape (``\\x0d``, ``\\u202e``). Line breaks and tabs stay. The
    one function every terminal surface passes such text through."""
    if text.isprintable():
        return text
    text = _SEQUENCE.sub("", text)
    return _CONTROL_CHAR.sub(_escaped, text)


def _escaped(m: re.Match[str]) -> str:
    c = ord(m.group())
    return f"\\x{c:02x}" if c < 0x100 else f"\\u{c:04x}"


UNKNOWN_KIND = (f"The endpoint failed in a way Scenarist has no words for; {NEITHER}.")


def explain(kind: str) -> str:
    """The sentence for a kind of endpoint failure (or of a failed attempt: model_output,
    max_steps, nothing_to_confirm), for someone who does not program."""
    return EXPLANATIONS.get(kind, UNKNOWN_KIND)


class CassetteMiss(EndpointError):
    """A replay target was asked something its cassette never recorded."""

    def __init__(self, message: str) -> None:
        super().__init__("cassette", message)


class RunDirError(ScenaristError):
    """A run folder is missing, unreadable, or written by an incompatible version."""


class NotReady(ScenaristError):
    """A run cannot start as things are (the message says why and what to do); nothing
    was sent to any endpoint."""


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """``"; did you mean 'contains'?"`` or ``""`` when nothing is close."""
    close = difflib.get_close_matches(word, list(candidates), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


_SUGGESTION = re.compile(r"'(?P<wrong>[^'\n]+)'[^']*; did you mean '(?P<right>[^'\n]+)'\?")


def suggestion(message: str) -> tuple[str, str] | None:
    """What a message made with :func:`did_you_mean` suggests: (the word written, the word
    meant) — ``("contians", "contains")`` — or None. An editor's quick fix applies it."""
    # the last quoted word before "; did you mean" is the one written
    found = list(_SUGGESTION.finditer(message))
    return (found[-1]["wrong"], found[-1]["right"]) if found else None


def docs_anchor(code: str) -> str:
    """The anchor of a code's section in docs/lint.md: ``s101-unknown-check``."""
    return f"{code.lower()}-{CODES[code].name}"


def quoted_list(items: Iterable[str], conj: str = "or") -> str:
    """``'a', 'b' or 'c'`` — a list written the way people write it."""
    q = [f"'{i}'" for i in items]
    if len(q) <= 1:
        return "".join(q)
    return f"{', '.join(q[:-1])} {conj} {q[-1]}"


class Collector(msgspec.Struct):
    """Collects diagnostics while a stage runs; the stage raises once at its end."""

    diagnostics: list[Diagnostic] = msgspec.field(default_factory=list)

    def error(self, span: Span, code: str, message: str, hint: str = "") -> None:
        self.diagnostics.append(Diagnostic(span, code, message, hint, "error"))

    def warning(self, span: Span, code: str, message: str, hint: str = "") -> None:
        self.diagnostics.append(Diagnostic(span, code, message, hint, "warning"))

    def extend(self, diagnostics: Iterable[Diagnostic]) -> None:
        self.diagnostics.extend(diagnostics)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == "error" for d in self.diagnostics)

    def raise_if_errors(self) -> None:
        if self.has_errors:
            raise InputError(self.diagnostics)


def best_per_place(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Sort by position and keep one diagnostic per place: errors before warnings,
    then the first reported (stages report their most specific finding first)."""
    chosen: dict[tuple[str, int, int], Diagnostic] = {}
    for d in diagnostics:
        place = (d.span.file, d.span.line, d.span.col)
        kept = chosen.get(place)
        if kept is None or (kept.severity == "warning" and d.severity == "error"):
            chosen[place] = d
    return sorted(chosen.values(), key=Diagnostic.sort_key)


# A credential written into a line: a URL's password (``scheme://user:PASSWORD@host``;
# the last ``@`` of the address ends it, as URL readers split it) or a ``password=``
# parameter (a URL's query, a libpq connection string). Linear in the text's length: a
# scheme starts where a run of its characters does, and a password ends at the next '/'
# (every '://' holds one).
_CREDENTIAL = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#@:]*:(?P<userinfo>[^\s/?#]+)@"
    r"|(?<![A-Za-z0-9_])password=(?P<param>[^\s&#'\"]+)", re.IGNORECASE)
MASK = "***"


def without_userinfo(url: str) -> str:
    """``url`` with its user name and password (``scheme://user:password@host``) left out.
    Every URL Scenarist prints or writes — a target's base_url or url in the terminal,
    plan.json, run.json, summary.json, junit.xml, the report, an endpoint's error in
    results.jsonl — goes through here."""
    scheme, sep, rest = url.partition("://")
    if not sep or "@" not in rest:
        return url
    end = len(rest)
    for ch in "/?#":
        at = rest.find(ch)
        if 0 <= at < end:
            end = at
    netloc = rest[:end]
    if "@" not in netloc:
        return url
    return f"{scheme}://{netloc.rsplit('@', 1)[1]}{rest[end:]}"


def mask_credentials(text: str, col: int = 0) -> str:
    """``text`` with every credential in it (see ``_CREDENTIAL``) shown as ``***``."""
    return _masked(text, col)[0]


def _masked(text: str, col: int) -> tuple[str, int]:
    """The masked text and where the 1-based column ``col`` moved to in it."""
    if "://" not in text and "password=" not in text.lower():
        return text, col
    out, last, at = [], 0, col - 1
    shift = 0
    for m in _CREDENTIAL.finditer(text):
        group = "userinfo" if m.group("userinfo") is not None else "param"
        start, end = m.span(group)
        out += [text[last:start], MASK]
        last = end
        if at >= end:
            shift += len(MASK) - (end - start)
        elif at > start:  # inside the secret: point at its mask
            shift = start - at + shift
    out.append(text[last:])
    return "".join(out), col + shift


def render(d: Diagnostic, source_lines: Sequence[str] | None = None, *, color: bool = False) -> str:
    """The one renderer for diagnostics::

        scenarios/refund.yaml:14:9: error S101 unknown check 'contians'; did you mean ...?
           14 |   - contians: "refund"
              |     ^
           hint: ...
    """
    where = f"{d.span}: " if not d.span.file.startswith("<") else ""
    head = f"{where}{d.severity} {d.code} {d.message}"
    if color:
        sev = "\x1b[31;1merror\x1b[0m" if d.severity == "error" else "\x1b[33;1mwarning\x1b[0m"
        head = f"\x1b[1m{where}\x1b[0m{sev} \x1b[2m{d.code}\x1b[0m {d.message}"
    out = [head]
    if source_lines is not None and 1 <= d.span.line <= len(source_lines):
        text, col = _masked(source_lines[d.span.line - 1].rstrip("\r\n"), d.span.col)
        if len(text) > 200:  # keep the caret line readable for minified or huge lines
            start = max(0, col - 100)
            text = text[start : start + 200]
            col = col - start
        text = "".join(ch if ch >= " " or ch == "\t" else "?" for ch in text)
        num = str(d.span.line)
        pad = " " * len(num)
        out.append(f"  {num} | {text}")
        caret_pad = "".join("\t" if ch == "\t" else " " for ch in text[: max(col - 1, 0)])
        out.append(f"  {pad} | {caret_pad}^")
    if d.hint:
        out.append(f"  hint: {d.hint}")
    return "\n".join(out)


def gh_data(text: str) -> str:
    """A GitHub workflow command's message (``::error ...::MESSAGE``): ``%``, CR and LF
    escaped (GitHub's rules). Lint's annotations and a run's CI outputs both write them."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def gh_property(text: str) -> str:
    """A workflow command's property value (``file=``, ``title=``): as data, plus ``:``
    and ``,``."""
    return gh_data(text).replace(":", "%3A").replace(",", "%2C")
