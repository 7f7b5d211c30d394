"""Target kinds: the one table (:data:`KINDS`) that says what each ``kind:`` of
``scenarist.yaml`` is.

A kind gives:

* its **settings** — one frozen Struct per kind (``OpenAISettings``,
  ``ReplaySettings``, ``PythonSettings``, ``HttpSettings``, ``CommandSettings`` in
  dsl/settings.py), held by :attr:`Target.config`;
* its **schema** — the keys of its entry in ``scenarist.yaml`` (the suite's JSON Schema is
  generated from it);
* how to **compile** a validated entry into its settings (with located diagnostics);
* how to **describe** it to people and write it down (never a key: only its variable);
* whether it is a **model** endpoint (it can judge, play a simulated user and serve python
  agents) and what it puts in every request (``request_settings``).

How a kind is **opened** — the clients that talk to it — is in ``dsl/clients/open.py``
(``OPENERS``), above the run stage: the compiler reads this table and imports no client.
Adding a kind is a settings class (dsl/settings.py), a schema and an entry in :data:`KINDS`
here, an entry in ``OPENERS`` and the module that talks to it in ``dsl/clients/``. Nothing
else in Scenarist branches on ``kind``.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

from ..errors import Collector, RunDirError, did_you_mean, without_userinfo
from ..model import Target
from ..settings import (
    CommandSettings,
    HttpSettings,
    OpenAISettings,
    PythonSettings,
    ReplaySettings,
    Retry,
)
from ..source.schemawords import schema_doc
from .base import RequestSettings, Unreadable, header_problem, read_reply_json, url_problem

if TYPE_CHECKING:  # (the YAML loader is not imported at run time: reports read kinds too)
    from ..source.load import DataPath, Document

# What a template in an http target's body may read (docs/targets.md says each one).
TEMPLATE_NAMES = ("message", "turn", "session", "mcp_url", "at", "seed", "scenario",
                  "system", "messages", "confirmed", "cancelled")
# The body sent when the target gives none: every name, under its own name.
DEFAULT_BODY = {name: "{{ " + name + " }}" for name in TEMPLATE_NAMES}


class WrittenTarget(Protocol):
    """A target as a run folder keeps it (dsl.store.planfile.PlannedTarget)."""

    @property
    def kind(self) -> str: ...

    @property
    def settings(self) -> Mapping[str, Any]: ...


class AgentNeeds(msgspec.Struct, frozen=True):
    """What the scenarios lint saw need of an agent: tools (``given.tools``), and calls
    held for the person's confirmation (a tool with ``confirm: true``)."""

    tools: bool
    holds: bool


class KindWarning(msgspec.Struct, frozen=True):
    """A warning about a target's settings: where under the target, the code, the words."""

    at: tuple[str, ...]  # the key under the target (``("body",)``)
    code: str
    message: str
    hint: str
    on_value: bool = False  # placed at the key's value (where it begins), not the key


class TargetKind(msgspec.Struct, frozen=True):
    """What one ``kind:`` is; see the module's docstring."""

    name: str
    doc: str  # one line, for the schema and the docs
    schema: Mapping[str, Any]  # JSON Schema properties of the kind's own keys
    required: tuple[str, ...]
    compile: Callable[[Document, DataPath, str, Mapping[str, Any], Path, Collector], Any]
    describe: Callable[[Any], str]
    as_json: Callable[[Any], dict[str, Any]]
    # the keys of its written form (as_json) that say what it runs, in the order they are
    # shown (junit.xml's properties); the first one set names it (reports, the history)
    shown: tuple[str, ...]
    key_env: Callable[[Any], str | None] = lambda settings: None
    attempt_timeout: bool = True  # accepts attempt_timeout_ms
    # a model endpoint: what it puts in every request (model, temperature, params); None:
    # the kind is not a model endpoint
    request_settings: Callable[[Any], RequestSettings] | None = None
    # the model its settings name ("": none; a replay's model is its cassette's)
    model: Callable[[Any], str] = lambda settings: ""
    # what answers, in words, when its settings name no model (a judge's measurement keeps
    # it: .scenarist/judge-validation.json)
    stands_for: Callable[[Any], str] = lambda settings: ""
    # whether its agent may hold a call for the person's confirmation itself (an own-loop
    # agent's ``pending``), whatever the tools' confirm says; lint asks it (W404)
    holds_calls: Callable[[Any], bool] = lambda settings: False
    # what lint warns about in a target of this kind, given what the suite's scenarios need
    # of it: each a KindWarning (dsl/compiler/lint.py places it under the target's key)
    warnings: Callable[[Any, str, AgentNeeds], list[KindWarning]] = \
        lambda settings, name, needs: []

    @property
    def is_model(self) -> bool:
        """A model endpoint: it can judge, play the user, serve a python agent."""
        return self.request_settings is not None


def holds_calls(target: Target) -> bool:
    """Whether the target's agent may hold a call for the person's confirmation itself
    (whatever the tools' ``confirm`` says): python and command agents, an http service
    whose replies say ``pending``, a replay of such an agent."""
    return kind_of(target).holds_calls(target.config)


@functools.cache
def _replays_an_agent(cassette: Path) -> bool:
    """A replay holds calls itself when its cassette recorded an agent that runs its own
    loop; a cassette that cannot be read says nothing for sure, so it may. (Asked once per
    cassette: lint asks it for every scenario.)"""
    # why: the cassette's reader; a plan or a report of targets without a replay needs none
    from .cassette import read_cassette

    try:
        lines = read_cassette(cassette, header_only=True)
        header = read_reply_json(lines[0]) if lines else None
    except (RunDirError, Unreadable):  # missing, not a regular file, not JSON: the run
        return True  # will say which
    return not isinstance(header, dict) or header.get("agent") is not None


def kind_of(target: Target) -> TargetKind:
    return KINDS[target.kind]


def describe(target: Target) -> str:
    """What a target runs, in a few words: ``qwen at http://…/v1``."""
    return kind_of(target).describe(target.config)


def model_named(target: Target) -> str:
    """The model a target's settings name; "" when they name none (a replay, an agent)."""
    return kind_of(target).model(target.config)


def answered_by(target: Target) -> str:
    """What answers a target's requests, in words: the model its settings name, else what
    its kind says it stands for (``replay of local.jsonl``), else its name."""
    kind = kind_of(target)
    return kind.model(target.config) or kind.stands_for(target.config) or target.name


def shown_settings(target: WrittenTarget) -> list[tuple[str, str]]:
    """What a written target (plan.json's, a summary's) says it runs, as (key, value)
    pairs: its kind, then the settings its kind shows, those that are set."""
    kind = KINDS.get(target.kind)
    out = [("kind", target.kind)] if target.kind else []
    for key in kind.shown if kind is not None else ():
        value = target.settings.get(key)
        if value:
            out.append((key, _text(value)))
    return out


def _text(value: Any) -> str:
    """A shown setting in words: an argv list as the command line it is."""
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def what_it_runs(target: WrittenTarget) -> str | None:
    """What a written target runs, in its kind's words: its model, cassette or entry point
    (None when its settings say none)."""
    kind = KINDS.get(target.kind)
    for key in kind.shown if kind is not None else ():
        value = target.settings.get(key)
        if value:
            return _text(value)
    return None


def target_json(target: Target) -> dict[str, Any]:
    """A target as it may be written down (plan.json, run.json): never the key, only the
    name of its variable."""
    return {"name": target.name, "kind": target.kind,
            **kind_of(target).as_json(target.config)}


def key_env(target: Target) -> str | None:
    """The environment variable that holds the target's API key, if it has one."""
    return kind_of(target).key_env(target.config)


def is_model(target: Target) -> bool:
    return kind_of(target).is_model


def missing_keys(targets: Mapping[str, Target] | tuple[Target, ...]) -> list[str]:
    """One sentence per target whose API key variable is not set."""
    items = targets.values() if isinstance(targets, Mapping) else targets
    out = []
    for t in items:
        env = key_env(t)
        if env and not os.environ.get(env):
            out.append(f"the target '{t.name}' reads its API key from the environment "
                       f"variable {env}, which is not set")
    return out


# ---- openai --------------------------------------------------------------------------------

def _compile_openai(doc: Document, path: DataPath, name: str, data: Mapping[str, Any],
                    root: Path, diags: Collector) -> OpenAISettings:
    # why: compiling a target only (reports and the history read this table too)
    from ..compiler.templates import DEFAULT_SYSTEM_PROMPT, check_template, line_offset

    prompt = data.get("system_prompt", DEFAULT_SYSTEM_PROMPT)
    # the default prompt is known to compile (tests): checking it would import Jinja
    problem = None if prompt == DEFAULT_SYSTEM_PROMPT else check_template(prompt)
    if problem is not None:
        diags.error(
            doc.span_in_string((*path, "system_prompt"), line_offset(prompt, problem.line)),
            "E208",
            f"the system_prompt of the target '{name}' {problem.verb}: {problem.message}",
            problem.hint("use {{ now }} for the moment and {{ system }} for the scenario's "
                         "instructions"),
        )
    _check_connection(doc, path, data, diags)
    r = data.get("retry") or {}
    return OpenAISettings(
        model=data["model"],
        base_url=data["base_url"].rstrip("/"),
        api_key_env=data.get("api_key_env"),
        timeout_ms=data.get("timeout_ms", 60_000),
        temperature=data.get("temperature"),
        params=dict(data.get("params") or {}),
        system_prompt=prompt,
        headers=dict(data.get("headers") or {}),
        retry=Retry(
            max_attempts=r.get("max_attempts", 3),
            backoff_ms=r.get("backoff_ms", 500),
            retry_on_status=tuple(r.get("retry_on_status", (429, 500, 502, 503, 504))),
        ),
        **({"max_reply_bytes": data["max_reply_bytes"]} if "max_reply_bytes" in data else {}),
        ca_file=_ca_file(doc, path, name, data, root, diags),
    )


def _ca_file(doc: Document, path: DataPath, name: str, data: Mapping[str, Any], root: Path,
             diags: Collector) -> str | None:
    """The target's ``ca_file``, absolute (S105 at it when it is not a file)."""
    given = data.get("ca_file")
    if given is None:
        return None
    found = (root / given).resolve()
    if not found.is_file():
        what = "is not a regular file" if found.exists() else "does not exist"
        diags.error(doc.span((*path, "ca_file")), "S105",
                    f"the ca_file {given!r} of the target '{name}' {what}",
                    "name the PEM file of the certificate authority that signed the "
                    "endpoint's certificate, relative to scenarist.yaml")
    return str(found)


def _check_connection(doc: Document, path: DataPath, data: Mapping[str, Any],
                      diags: Collector) -> None:
    """What the schema lets through but no HTTP request can carry: a port above 65535, an
    unbalanced IPv6 address, a header that is not ASCII or holds a line break."""
    url = data["base_url"]
    problem = url_problem(url)
    if problem is not None:
        diags.error(doc.span((*path, "base_url")), "S105",
                    f"the base_url {url!r} cannot be used: {problem}",
                    "write it as http://host:port/v1, e.g. http://127.0.0.1:8080/v1")
    else:
        _check_userinfo(doc, (*path, "base_url"), url, diags)
    _check_headers(doc, path, data, diags)


# headers that say how the body is framed: Scenarist frames it from the body it sends; one
# written by hand would contradict it (a request smuggled in, or a body cut short)
FRAMING_HEADERS = ("content-length", "transfer-encoding")


def _check_headers(doc: Document, path: DataPath, data: Mapping[str, Any],
                   diags: Collector) -> None:
    """S105 for a header whose name or value cannot be sent (not ASCII, a line break):
    at the name when the name is wrong, else at the value; and, at the name, a header
    that frames the body (Content-Length, Transfer-Encoding: Scenarist writes them) or one
    given twice (header names are case-insensitive: ``Host`` and ``host`` are one)."""
    seen: dict[str, str] = {}
    for hname, value in (data.get("headers") or {}).items():
        here = (*path, "headers", hname)
        trouble = header_problem(hname, value)
        if trouble is not None:
            bad_name = header_problem(hname, "") is not None
            diags.error(doc.key_span(here) if bad_name else doc.span(here), "S105", trouble)
            continue
        folded = hname.lower()
        if folded in FRAMING_HEADERS:
            diags.error(doc.key_span(here), "S105",
                        f"the header '{hname}' says how the request's body is framed; "
                        "Scenarist frames the body itself (its Content-Length, from the body "
                        "it sends), so this one could only contradict it",
                        f"remove '{hname}' from headers")
        elif folded in seen:
            first = doc.key_span((*path, "headers", seen[folded]))
            diags.error(doc.key_span(here), "S105",
                        f"the header '{hname}' is given twice: header names are "
                        f"case-insensitive, so it is the same header as '{seen[folded]}' "
                        f"(line {first.line})",
                        "keep one of them")
        else:
            seen[folded] = hname


def _check_userinfo(doc: Document, path: DataPath, url: str, diags: Collector) -> None:
    """E234: a URL with a user name or password in it. Scenarist never writes a URL's
    credentials (:func:`dsl.errors.without_userinfo`), so a request could not be repeated
    from what a run keeps — and the secret would sit in scenarist.yaml."""
    if without_userinfo(url) == url:
        return
    setting = path[-1]
    target = path[-2] if len(path) >= 2 else "?"
    diags.error(doc.span(path), "E234",
                f"the {setting} of the target '{target}' holds credentials (user:password@ "
                "before the host); Scenarist never keeps a URL's credentials",
                "remove them from the URL; put the key in an environment variable and name "
                "it with api_key_env: VARIABLE (it is sent as Authorization: Bearer)")


def _openai_json(s: OpenAISettings) -> dict[str, Any]:
    return {"model": s.model, "base_url": without_userinfo(s.base_url),
            "api_key_env": s.api_key_env, "temperature": s.temperature, "params": dict(s.params)}


def request_settings(target: Target) -> RequestSettings:
    """What a model target puts in every request, without opening it. Raises RunDirError
    for a replay target whose cassette cannot be read."""
    settings_of = kind_of(target).request_settings
    if settings_of is None:
        raise ValueError(f"{target.kind} targets are not model endpoints")
    return settings_of(target.config)


def _openai_request(s: OpenAISettings) -> RequestSettings:
    return RequestSettings(s.model, s.temperature, dict(s.params), s.system_prompt)


# ---- replay --------------------------------------------------------------------------------

def _replay_request(s: ReplaySettings) -> RequestSettings:
    from .cassette import header_settings, read_header  # why: only for a replay target

    return header_settings(read_header(Path(s.cassette)))


def _compile_replay(doc: Document, path: DataPath, name: str, data: Mapping[str, Any],
                    root: Path, diags: Collector) -> ReplaySettings:
    return ReplaySettings(cassette=str((root / data["cassette"]).resolve()))


def _replay_json(s: ReplaySettings) -> dict[str, Any]:
    out: dict[str, Any] = {"cassette": s.cassette}
    from .cassette import read_header  # why: only for a replay target

    try:
        settings = read_header(Path(s.cassette)).get("settings") or {}
        out.update(model=settings.get("model"), temperature=settings.get("temperature"))
    except RunDirError:
        pass  # reported when the run opens the cassette
    return out


# ---- http and command: agents that run their own loop ------------------------------------

def _compile_http(doc: Document, path: DataPath, name: str, data: Mapping[str, Any],
                  root: Path, diags: Collector) -> HttpSettings:
    url = data["url"]
    problem = url_problem(url)
    if problem is not None and not problem.startswith("it has a query"):
        diags.error(doc.span((*path, "url")), "S105",
                    f"the url {url!r} cannot be used: {problem}",
                    "write it as http://host:port/path, e.g. http://127.0.0.1:8000/chat")
    else:
        _check_userinfo(doc, (*path, "url"), url, diags)
    _check_headers(doc, path, data, diags)
    body = data.get("body")
    _check_body(doc, (*path, "body"), name, body, diags)
    r = data.get("retry") or {}
    return HttpSettings(
        url=url,
        body=body if body is not None else _default_body(),
        answer=tuple(data.get("answer", "answer").split(".")),
        pending=tuple(data["pending"].split(".")) if data.get("pending") else None,
        api_key_env=data.get("api_key_env"),
        headers=dict(data.get("headers") or {}),
        timeout_ms=data.get("timeout_ms", 60_000),
        retry=Retry(
            max_attempts=r.get("max_attempts", 3),
            backoff_ms=r.get("backoff_ms", 500),
            retry_on_status=tuple(r.get("retry_on_status", (429, 500, 502, 503, 504))),
            turns=r.get("turns", False),
        ),
        **({"max_reply_bytes": data["max_reply_bytes"]} if "max_reply_bytes" in data else {}),
        ca_file=_ca_file(doc, path, name, data, root, diags),
    )


def _default_body() -> dict[str, str]:
    return dict(DEFAULT_BODY)


def _check_body(doc: Document, path: DataPath, name: str, body: Any,
                diags: Collector) -> None:
    """Each template string of an http target's body compiles and reads only the names a
    turn has (E208, at the string)."""
    # why: compiling a target only (reports and the history read this table too)
    from ..compiler.templates import CaseTemplate, check_template, line_offset, template_strings

    for inner, text in template_strings(body):
        here = (*path, *inner)
        problem = check_template(text)
        if problem is not None:
            diags.error(doc.span_in_string(here, line_offset(text, problem.line)), "E208",
                        f"a template in the body of the target '{name}' {problem.verb}: "
                        f"{problem.message}",
                        problem.hint("write a value as {{ message }}; the names are "
                                     + ", ".join(TEMPLATE_NAMES)))
            continue
        for unknown in sorted(CaseTemplate(text).names - set(TEMPLATE_NAMES)):
            at = max(0, text.find(unknown))
            diags.error(doc.span_in_string(here, at), "E208",
                        f"the body of the target '{name}' reads '{unknown}', which is not a "
                        f"value of a turn{did_you_mean(unknown, TEMPLATE_NAMES)}",
                        "the names are " + ", ".join(TEMPLATE_NAMES))


def _http_warnings(s: HttpSettings, name: str, needs: AgentNeeds) -> list[KindWarning]:
    """W430: a body that never sends ``{{ mcp_url }}`` to an agent whose scenarios have
    tools; W431: one that never sends ``{{ confirmed }}`` or ``{{ cancelled }}`` to an agent
    whose scenarios hold calls for the person's confirmation."""
    # why: compiling a target only (reports and the history read this table too)
    from ..compiler.templates import CaseTemplate, template_strings

    read: set[str] = set()
    for _inner, text in template_strings(s.body):
        try:
            read |= CaseTemplate(text).names
        except Exception:  # noqa: S112  a template that does not compile: E208 says so
            continue
    out = []
    if needs.tools and "mcp_url" not in read:
        out.append(KindWarning(
            ("body",), "W430",
            f"the body of the target '{name}' never sends {{{{ mcp_url }}}}: the agent cannot "
            "reach the scenarios' fake tools, so it never lists them and every check of its "
            "calls fails",
            'add the attempt\'s MCP endpoint to the body, e.g. tools_url: "{{ mcp_url }}", '
            "and connect your agent's MCP client to it instead of its real tools"))
    missing = [n for n in ("confirmed", "cancelled") if n not in read]
    if needs.holds and missing:
        names = " or ".join(f"{{{{ {n} }}}}" for n in missing)
        out.append(KindWarning(
            ("body",), "W431",
            f"the body of the target '{name}' never sends {names}, and the scenarios hold "
            "calls for the person's confirmation (tools with confirm: true): on a confirm or "
            "cancel turn the agent is not told what the person decided",
            "add " + " and ".join(f'{n}: "{{{{ {n} }}}}"' for n in missing) + " to the body",
            on_value=True))
    return out


def _http_json(s: HttpSettings) -> dict[str, Any]:
    return {"url": without_userinfo(s.url), "api_key_env": s.api_key_env,
            "headers": dict(s.headers),
            "answer": ".".join(s.answer),
            "pending": ".".join(s.pending) if s.pending else None}


def _compile_command(doc: Document, path: DataPath, name: str, data: Mapping[str, Any],
                     root: Path, diags: Collector) -> CommandSettings:
    return CommandSettings(command=tuple(data["command"]), cwd=str(root.resolve()),
                           env=dict(data.get("env") or {}),
                           timeout_ms=data.get("timeout_ms", 60_000),
                           pass_env=tuple(data.get("pass_env") or ()),
                           inherit_env=bool(data.get("inherit_env", False)))


# ---- python --------------------------------------------------------------------------------

def _compile_python(doc: Document, path: DataPath, name: str, data: Mapping[str, Any],
                    root: Path, diags: Collector) -> PythonSettings:
    return PythonSettings(entry=data["entry"])


# ---- the table -----------------------------------------------------------------------------

_RETRY: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    **schema_doc("How failed requests are retried.",
         {"max_attempts": 3, "backoff_ms": 500, "retry_on_status": [429, 503]}),
    "properties": {
        "max_attempts": {"type": "integer", "minimum": 1, "maximum": 20,
                         **schema_doc("Tries per request, the first included.", 3)},
        "backoff_ms": {"type": "integer", "minimum": 0,
                       **schema_doc("Wait before the first retry; doubles each time.", 500)},
        "retry_on_status": {"type": "array", "items": {"type": "integer"},
                            **schema_doc("HTTP statuses worth retrying.", [429, 500, 503])},
    },
}

# an agent service's turns: what may be retried once the agent may have acted
_HTTP_RETRY = {
    **_RETRY,
    **schema_doc("How failed turns are retried. A request that never reached the service "
                 "is sent again; one it may have acted on (an error status, a timeout, a "
                 "connection lost after it went out) ends the attempt as an error, unless "
                 "`turns: true`.", {"max_attempts": 3, "turns": True}),
    "properties": {
        **_RETRY["properties"],
        "turns": {"type": "boolean",
                  **schema_doc("Send a turn again after an error status in retry_on_status, "
                               "a timeout or a lost connection, although the agent may have "
                               "acted: the failed try's tool calls are discarded, the world "
                               "is restored to the turn's start, the next try gets a new "
                               "mcp_url, and the record says the turn was retried and why "
                               "(default false).", True)},
    },
}

OPENAI_SCHEMA: dict[str, Any] = {
    "base_url": {
        "type": "string",
        "pattern": "^https?://",
        **schema_doc("The endpoint's base URL, up to and including /v1.", "http://127.0.0.1:8080/v1"),
    },
    "model": {"type": "string", "minLength": 1,
              **schema_doc("The model name sent in each request.", "qwen2.5-0.5b-instruct")},
    "api_key_env": {
        "type": "string",
        "pattern": "^[A-Za-z_][A-Za-z0-9_]*$",
        **schema_doc("The name of the environment variable that holds the API key (sent as "
             "`Authorization: Bearer ...`). The key itself is never written anywhere.",
             "OPENAI_API_KEY"),
    },
    "timeout_ms": {"type": "integer", "minimum": 1,
                   **schema_doc("The most one request may take, in milliseconds: connecting, "
                                "sending and the whole reply (a reply still arriving then is "
                                "a timeout).", 60000)},
    "max_reply_bytes": {"type": "integer", "minimum": 1024,
                        **schema_doc("The most bytes one reply may hold once decoded (default "
                                     "8 MiB); a longer reply ends its attempt as a malformed "
                                     "error, and reading stops there.", 8388608)},
    "temperature": {"type": "number", "minimum": 0, "maximum": 2,
                    **schema_doc("Sampling temperature sent with each request.", 0.7)},
    "params": {
        "type": "object",
        **schema_doc("Extra request fields sent as they are.", {"top_p": 0.9, "max_tokens": 512}),
    },
    "headers": {
        "type": "object",
        "additionalProperties": {"type": "string"},
        **schema_doc("Extra HTTP headers (not secrets: use api_key_env).", {"X-Team": "clinic"}),
    },
    "system_prompt": {
        "type": "string",
        **schema_doc("The agent's system prompt, a template: `{{ now }}` is the moment in words, "
             "`{{ system }}` the scenario's given.system, `{{ at }}` the moment itself.",
             "You are a clinic assistant.\n{{ system }}\nCurrent date and time: {{ now }}."),
    },
    "retry": _RETRY,
    "ca_file": {"type": "string", "minLength": 1,
                **schema_doc("For an https:// endpoint whose certificate a certificate "
                             "authority of your own signed (a company's, a test server's): "
                             "that authority's certificate, a PEM file, relative to "
                             "scenarist.yaml. It is trusted besides the usual public ones.",
                             "certs/company-ca.pem")},
}

_DOTTED_PATH = {
    "type": "string",
    "pattern": r"^[A-Za-z0-9_$@-]+(\.[A-Za-z0-9_$@-]+)*$",
}

HTTP_SCHEMA: dict[str, Any] = {
    "url": {"type": "string", "pattern": "^https?://",
            **schema_doc("Where each turn is sent (POST).", "http://127.0.0.1:8000/chat")},
    "api_key_env": OPENAI_SCHEMA["api_key_env"],
    "headers": OPENAI_SCHEMA["headers"],
    "body": {
        "type": "object",
        **schema_doc("The JSON sent each turn; every string is a template over the turn: "
                     "message, turn, session, mcp_url, at, seed, scenario, system, messages, "
                     "confirmed, cancelled. A string that is exactly one `{{ name }}` becomes "
                     "that value itself (a list, a number). Default: every name under its "
                     "own name.",
                     {"message": "{{ message }}", "session": "{{ session }}",
                      "tools_url": "{{ mcp_url }}", "now": "{{ at }}"}),
    },
    "answer": {**_DOTTED_PATH, **schema_doc("Where the answer's text is in the JSON reply, as "
                                             "a dotted path (default: answer).", "reply")},
    "pending": {**_DOTTED_PATH,
                **schema_doc("Where the calls the agent holds for the person's confirmation "
                             "are in the reply ([{name, args}]), as a dotted path.", "held")},
    "timeout_ms": OPENAI_SCHEMA["timeout_ms"],
    "max_reply_bytes": OPENAI_SCHEMA["max_reply_bytes"],
    "retry": _HTTP_RETRY,
    "ca_file": OPENAI_SCHEMA["ca_file"],
}

COMMAND_SCHEMA: dict[str, Any] = {
    "command": {"type": "array", "minItems": 1,
                "items": {"type": "string", "minLength": 1},
                **schema_doc("The program and its arguments, as a list (run in the suite's "
                             "folder, one process per attempt).", ["node", "agent.js"])},
    "env": {"type": "object", "additionalProperties": {"type": "string"},
            **schema_doc("Environment variables for the program, with these values (not "
                         "secrets: they are written in the suite; pass a secret with "
                         "pass_env).", {"AGENT_MODEL": "qwen"})},
    "pass_env": {"type": "array", "uniqueItems": True,
                 "items": {"type": "string", "pattern": "^[A-Za-z_][A-Za-z0-9_]*$"},
                 **schema_doc("Environment variables the program gets from the run's "
                              "environment, by name (a key its own model needs). Without "
                              "them it gets only PATH, HOME, TMPDIR, the locale (LANG, "
                              "LANGUAGE, LC_*), TZ, env and the SCENARIST_* variables.",
                              ["OPENAI_API_KEY"])},
    "inherit_env": {"type": "boolean",
                    **schema_doc("true: the program gets the run's whole environment, less "
                                 "the suite's secrets (every target's api_key_env, the "
                                 "judge's, redact.env) unless env or pass_env names them. "
                                 "Default false.", True)},
    "timeout_ms": {"type": "integer", "minimum": 1,
                   **schema_doc("The most the program may take to answer one turn, in "
                                "milliseconds.", 60000)},
}

KINDS: dict[str, TargetKind] = {
    "openai": TargetKind(
        name="openai",
        doc="any OpenAI-compatible chat-completions endpoint",
        schema=OPENAI_SCHEMA,
        required=("base_url", "model"),
        compile=_compile_openai,
        describe=lambda s: f"{s.model} at {without_userinfo(s.base_url)}",
        as_json=_openai_json,
        shown=("model", "base_url"),
        model=lambda s: s.model,
        key_env=lambda s: s.api_key_env,
        request_settings=_openai_request,
    ),
    "replay": TargetKind(
        name="replay",
        doc="answers from a recorded cassette",
        schema={"cassette": {"type": "string",
                             **schema_doc("The cassette file, relative to scenarist.yaml.",
                                  "cassettes/qwen.jsonl")}},
        required=("cassette",),
        compile=_compile_replay,
        describe=lambda s: f"replay of {s.cassette}",
        as_json=_replay_json,
        shown=("model", "cassette"),  # the model the cassette recorded, else the file
        stands_for=lambda s: f"replay of {Path(s.cassette).name}",
        attempt_timeout=False,
        request_settings=_replay_request,
        holds_calls=lambda s: _replays_an_agent(Path(s.cassette)),
    ),
    "python": TargetKind(
        name="python",
        doc="your own agent",
        schema={"entry": {"type": "string", "pattern": r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$",
                          **schema_doc("module:function of your agent.", "myapp.agent:run")}},
        required=("entry",),
        compile=_compile_python,
        describe=lambda s: f"python {s.entry}",
        as_json=lambda s: {"entry": s.entry},
        shown=("entry",),
        holds_calls=lambda s: True,  # it may answer {"answer", "pending"}
    ),
}


KINDS["http"] = TargetKind(
    name="http",
    doc="your agent service: one POST per turn, the fake tools over MCP",
    schema=HTTP_SCHEMA,
    required=("url",),
    compile=_compile_http,
    describe=lambda s: f"agent service at {without_userinfo(s.url)}",
    as_json=_http_json,
    shown=("url",),
    key_env=lambda s: s.api_key_env,
    holds_calls=lambda s: s.pending is not None,  # only where its reply says them
    warnings=_http_warnings,
)
KINDS["command"] = TargetKind(
    name="command",
    doc="any program: one process per attempt, JSON lines, the fake tools over MCP",
    schema=COMMAND_SCHEMA,
    required=("command",),
    compile=_compile_command,
    describe=lambda s: "command " + " ".join(s.command),
    as_json=lambda s: {"command": list(s.command), "env": sorted(s.env),
                       **({"pass_env": list(s.pass_env)} if s.pass_env else {}),
                       **({"inherit_env": True} if s.inherit_env else {})},
    shown=("command",),
    holds_calls=lambda s: True,  # its answer line may say "pending"
)
