"""The studio's web server: the page, its API, and the rules every request passes.

**Who gets in** (:class:`Keys`, :class:`Guard`, before any route). Three credentials, made
anew at every start, none of them a cookie:

* a **one-time code**: the address printed at start carries one (``/?token=CODE``), and
  the browser the studio opens gets another through a file only this user can read (its
  command line names the file, never a code). The page trades its code, once, for the
  session key (``POST /api/session``); a code that was traded opens nothing again.
* the **session key**, which the page keeps in its own storage (the browser keeps it per
  origin: 127.0.0.1 with this port) and sends in the ``X-Scenarist-Token`` header on
  every API request. Browsers send cookies for 127.0.0.1 to every port, so nothing here
  trusts a cookie: a page or server on another port learns nothing it could use.
* the **page ticket**, in the page's own address (``/?s=TICKET``) after the trade, so a
  reload or a second tab gets the page's files; it opens the page itself (the same files
  for everyone, with no secret in them) and nothing else.

A report is opened in a tab of its own by a link that holds a key to that one run folder
(``/r/KEY/RUN/report.html``, an HMAC of the folder's name under the session key).

**What gets through.** A request whose ``Host`` is not ``127.0.0.1:PORT`` or
``localhost:PORT`` is refused (DNS rebinding); a change (not GET or HEAD) must come from
the studio's own origin, as JSON. A body is bounded before it is parsed (its size, then
its nesting); every answer that is not a success is JSON, ``{"error": "a sentence"}`` —
never a traceback (a name of 300 characters, a path under a file, a lone surrogate). Every
path goes through :meth:`dsl.studio.workspace.Workspace.resolve`: the suite's scenario
files, ``scenarist.yaml`` and the table files they name, and nothing else. Responses carry
a Content-Security-Policy that lets the page load only its own files and
``Referrer-Policy: no-referrer``.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import hashlib
import hmac
import html
import json
import os
import re
import secrets
import socket
import sys
import tempfile
import threading
import traceback
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .. import __version__
from ..compiler import vocabulary
from ..compiler.lint import lint_text
from ..compiler.suite import load_suite
from ..errors import Collector, Diagnostic, without_userinfo
from ..importing import ImportRefused, Upload, default_folder, import_conversations
from . import form, suiteform, tables
from .form import FormError, SuiteContext, shape_of
from .runs import RunBusy, Runs
from .trying import Conversation, TryError
from .workspace import MAX_TEXT, Changed, Missing, Refused, Workspace

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

STATIC = Path(__file__).parent / "static"
FILES = {"studio.js": "text/javascript; charset=utf-8", "studio.css": "text/css; charset=utf-8",
         "studio.js.LICENSES.txt": "text/plain; charset=utf-8"}
CSP = ("default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; "
       "img-src 'self' data:; font-src 'self'; connect-src 'self'; base-uri 'none'; "
       "form-action 'none'; frame-ancestors 'none'")
SAFE = ("GET", "HEAD")
HEADER = "x-scenarist-token"
EVENT_POLL_S = 0.1
MAX_BODY = 2 * MAX_TEXT + 64 * 1024  # a file's text as JSON, with room for the rest
MAX_IMPORT_BODY = 64 * 2**20  # the logs chosen for Import conversations, in base64
MAX_IMPORT_FILES = 20
MAX_NESTING = 32  # of arrays and objects in a request's JSON
MODELS_TIMEOUT_S = 5.0
MAX_MODELS_BYTES = 2 * 2**20
NO_ENTRY = ("open the studio with the address it printed when it started (the one with "
            "?token=)")


class Keys:
    """The credentials of one studio process (this module's docstring)."""

    def __init__(self) -> None:
        self.session = secrets.token_urlsafe(32)
        self.ticket = secrets.token_urlsafe(32)
        self._codes: dict[str, bool] = {}  # code -> traded already
        self._lock = threading.Lock()
        self.on_trade: Callable[[str], None] = lambda code: None

    def code(self) -> str:
        """A new one-time code."""
        code = secrets.token_urlsafe(32)
        with self._lock:
            self._codes[code] = False
        return code

    def issued(self, code: str) -> bool:
        """Whether ``code`` is one this studio made (traded or not): it may load the page's
        files, which hold no secret."""
        with self._lock:
            return any(secrets.compare_digest(code, c) for c in self._codes)

    def trade(self, code: str) -> str | None:
        """The session key for a code not traded before (None otherwise)."""
        with self._lock:
            for c, used in self._codes.items():
                if secrets.compare_digest(code, c):
                    if used:
                        return None
                    self._codes[c] = True
                    break
            else:
                return None
        self.on_trade(code)
        return self.session

    def grant(self, run: str) -> str:
        """The key of the links to one run folder's files."""
        return hmac.new(self.session.encode(), run.encode("utf-8", "surrogatepass"),
                        hashlib.sha256).hexdigest()[:40]

    def is_session(self, given: str | None) -> bool:
        return bool(given) and secrets.compare_digest(given or "", self.session)

    def opens_page(self, query: dict[str, list[str]]) -> bool:
        ticket = (query.get("s") or [""])[0]
        code = (query.get("token") or [""])[0]
        return (bool(ticket) and secrets.compare_digest(ticket, self.ticket)) or \
            (bool(code) and self.issued(code))


class Guard:
    """The rules of this module's docstring, around the whole application."""

    def __init__(self, app: ASGIApp, keys: Keys, port: int) -> None:
        self.app = app
        self.keys = keys
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope["headers"]}
        if headers.get("host") not in self.hosts:
            await _refuse(send, 403, "this studio answers only at the address it printed "
                          "(127.0.0.1 or localhost, with its port)")
            return
        path = scope["path"]
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        if path == "/" or path.startswith("/static/"):
            allowed = self.keys.opens_page(query) or self.keys.is_session(headers.get(HEADER))
        elif path == "/api/session" or path.startswith("/r/"):
            allowed = True  # the code in the body, the key in the path: checked there
        else:
            allowed = self.keys.is_session(headers.get(HEADER))
        if not allowed:
            await _refuse(send, 403, NO_ENTRY)
            return
        if scope["method"] not in SAFE:
            origin = headers.get("origin")
            if (origin is not None and origin not in self.origins) or \
                    headers.get("sec-fetch-site") == "cross-site":
                await _refuse(send, 403, "a change must come from the studio's own page")
                return
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                await _refuse(send, 403, "a change must be sent as JSON by the studio's page")
                return
        report = path.startswith(("/runs/", "/r/"))

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"referrer-policy", b"no-referrer"),
                         (b"x-content-type-options", b"nosniff"),
                         (b"cache-control", b"no-store")]
                if not report:
                    extra += [(b"content-security-policy", CSP.encode()),
                              (b"x-frame-options", b"DENY")]
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _refuse(send: Send, status: int, why: str) -> None:
    body = json.dumps({"error": f"{why}."}).encode()
    await send({"type": "http.response.start", "status": status, "headers": [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


class _BadRequest(Exception):
    """A request the studio's page never sends (a sentence saying what is wrong)."""

    def __init__(self, message: str, status: int = 400) -> None:
        super().__init__(message)
        self.status = status


class Studio:
    """The API over one suite (every handler's state)."""

    def __init__(self, root: Path, keys: Keys) -> None:
        self.space = Workspace(root)
        self.keys = keys
        self.runs = Runs(self.space.root, keys.grant)
        self.talks: dict[str, Conversation] = {}

    # ------------------------------------------------------------------ the page

    async def page(self, request: Request) -> Response:
        ticket = html.escape(self.keys.ticket, quote=True)
        text = (STATIC / "index.html").read_text("utf-8").replace(
            "{{version}}", f"{__version__}&amp;s={ticket}")
        return Response(text, media_type="text/html; charset=utf-8")

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in FILES:
            return _error(404, f"there is no file '{name}' here")
        return FileResponse(STATIC / name, media_type=FILES[name])

    async def session(self, request: Request) -> Response:
        body = await _body(request)
        code = body.get("code")
        token = self.keys.trade(code) if isinstance(code, str) and code else None
        if token is None:
            return _error(403, "this address was used already: go on in the page you "
                               "opened with it, or restart scenarist studio for a new one")
        return JSONResponse({"token": token, "ticket": self.keys.ticket})

    async def report(self, request: Request) -> Response:
        """A run folder's files, for a request with the session key."""
        return await self._run_file(request.path_params["rest"])

    async def granted(self, request: Request) -> Response:
        """A run folder's files, by a link that holds that folder's key."""
        run, rest = request.path_params["run"], request.path_params["rest"]
        if not secrets.compare_digest(request.path_params["key"], self.keys.grant(run)):
            return _error(403, "this link to a report is not one this studio made")
        if "/" in run or run in ("", ".", ".."):
            return _error(403, f"'{run}' is not a run folder")
        return await self._run_file(f"{run}/{rest}")

    async def _run_file(self, rel: str) -> Response:
        def find() -> Path:
            runs = (self.space.root / "runs").resolve()
            try:
                path = (runs / rel).resolve()
            except (OSError, RuntimeError, ValueError):
                raise Refused(f"'{rel}' cannot be followed") from None
            if not path.is_relative_to(runs) or path == runs:
                raise Refused(f"'{rel}' is outside the suite's runs folder")
            if not path.is_file():
                raise Missing(f"there is no file '{rel}' in the runs folder")
            return path

        try:
            path = await run_in_threadpool(find)
        except Refused as exc:
            return _error(403, str(exc))
        except Missing as exc:
            return _error(404, str(exc))
        except UnicodeError:
            return _error(400, "the path holds a character no file name can")
        return FileResponse(path)

    # ------------------------------------------------------------------ the suite

    async def suite(self, request: Request) -> Response:
        return await self._guarded(self._suite)

    def _context(self) -> tuple[Any, SuiteContext]:
        suite = load_suite(self.space.suite_file, Collector())
        tables = {name: (tuple(t.columns), tuple(_cell(r.get("id")) for r in t.rows))
                  for name, t in suite.world.items()}
        models = tuple(n for n, t in suite.targets.items() if t.kind in ("openai", "replay"))
        return suite, SuiteContext(tuple(suite.tools), models, tables)

    def _suite(self) -> dict[str, Any]:
        suite, ctx = self._context()
        scenario = vocabulary.schema_of(False)
        tables = []
        for name, t in suite.world.items():
            path = self.space.relative(Path(t.file).resolve()) if t.file else None
            tables.append({"name": name, "columns": list(t.columns),
                           "ids": [_cell(r.get("id")) for r in t.rows], "file": path})
        return {
            "root": str(self.space.root),
            "name": self.space.root.name,
            "suite_path": self.space.relative(self.space.suite_file),
            "files": [{"path": e.path, "verdict": e.verdict} for e in self.space.entries()],
            "targets": list(suite.targets),
            "target_kinds": {n: t.kind for n, t in suite.targets.items()},
            "model_targets": list(ctx.model_targets),
            "default_target": suite.defaults.target,
            "tools": [{"name": t.name, "description": t.description, "confirm": t.confirm,
                       "action": t.action,
                       "table": t.table.table if t.table is not None else None}
                      for t in suite.tools.values()],
            "checks": [{"name": c.name, "doc": c.doc, "takes": c.takes,
                        "shape": shape_of(c.name).as_json(),
                        "params": dict(c.params), "examples": list(c.examples),
                        "judge": c.judge, "group": c.group}
                       for c in vocabulary.checks().values()],
            "named_checks": list(suite.checks),
            "keys": {k: w.doc for k, w in vocabulary.keys_at(scenario, ()).items()},
            "given_keys": {k: w.doc for k, w in
                           vocabulary.keys_at(scenario, ("given",)).items()},
            "tables": tables,
        }

    # ------------------------------------------------------------------ a file

    async def read(self, request: Request) -> Response:
        rel = request.query_params.get("path", "")
        return await self._guarded(lambda: self._read(rel))

    def _read(self, rel: str) -> dict[str, Any]:
        f = self.space.read(rel)
        return {"path": rel, "text": f.text, "version": f.version, "eol": f.eol,
                "kind": f.kind}

    async def lint(self, request: Request) -> Response:
        body = await _body(request)
        return await self._guarded(lambda: self._lint(_field(body, "path"),
                                                      _field(body, "text")))

    def _lint(self, rel: str, text: str) -> dict[str, Any]:
        path = self.space.resolve(rel)
        kind = self.space.kind(path)
        text = text.replace("\r\n", "\n")
        if kind == "suite":
            diags = Collector()
            load_suite(path, diags, text)
            found: list[Diagnostic] = list(diags.diagnostics)
            mine = [d for d in found if not d.span.file.startswith("<")
                    and Path(d.span.file).absolute().resolve() == path]
        elif kind == "scenario":
            result = lint_text(path, text)
            found, mine = list(result.diagnostics), result.of_file(path)
        else:
            found = mine = []
        others = [f"{d.span}: {d.severity} {d.code} {d.message}" for d in found
                  if d not in mine]
        return {"problems": [_problem(d) for d in mine], "elsewhere": others}

    async def form(self, request: Request) -> Response:
        body = await _body(request)
        edits = body.get("edits") or []
        if not isinstance(edits, list) or not all(isinstance(e, dict) for e in edits):
            return _error(400, "edits must be a list of edits")
        return await self._guarded(lambda: self._form(_field(body, "path"),
                                                      _field(body, "text"), edits))

    def _form(self, rel: str, text: str, edits: list[Any]) -> dict[str, Any]:
        path = self.space.resolve(rel)
        kind = self.space.kind(path)
        text = text.replace("\r\n", "\n")
        model: dict[str, Any]
        if kind == "suite":
            new = suiteform.apply(text, edits)
            model = suiteform.form_of(new)
        elif kind == "scenario":
            _, ctx = self._context()
            new = form.apply(text, edits, ctx)
            base = Path(rel).parent.as_posix()
            model = form.form_of(new, ctx, "" if base == "." else base)
        else:
            new = tables.edit_file(rel, text, edits) if edits else text
            model = tables.file_model(path.stem, rel, new)
        out: dict[str, Any] = {"text": new, "form": model, "kind": kind}
        if new != text:
            out.update(self._lint(rel, new))
        return out

    async def save(self, request: Request) -> Response:
        body = await _body(request)
        base = body.get("version")
        return await self._guarded(lambda: {"version": self.space.save(
            _field(body, "path"), _field(body, "text"),
            base if isinstance(base, str) else None, body.get("overwrite") is True)})

    async def create(self, request: Request) -> Response:
        body = await _body(request)
        return await self._guarded(lambda: {"path": self.space.create(_field(body, "name"))})

    async def diff(self, request: Request) -> Response:
        body = await _body(request)
        return await self._guarded(lambda: self.space.diff(_field(body, "path"),
                                                           _field(body, "text")))

    async def versions(self, request: Request) -> Response:
        body = await _body(request)
        paths = body.get("paths")
        if not isinstance(paths, list) or len(paths) > 1000:
            return _error(400, "paths must be a list of at most 1,000 paths")
        return await self._guarded(lambda: {"versions": self.space.versions(
            p for p in paths if isinstance(p, str))})

    async def models(self, request: Request) -> Response:
        body = await _body(request)
        key_env = body.get("api_key_env")
        return await self._guarded(lambda: _models(
            _field(body, "base_url"), key_env if isinstance(key_env, str) else ""))

    async def import_logs(self, request: Request) -> Response:
        """Import conversations: the files the person chose (a gateway log, an OTLP/JSON
        export) become scenarios in the suite's ``imported/`` folder, through
        :func:`dsl.importing.import_conversations` as ``scenarist import`` calls it."""
        body = await _body(request, MAX_IMPORT_BODY)
        files = body.get("files")
        if not isinstance(files, list) or not files or len(files) > MAX_IMPORT_FILES:
            return _error(400, f"choose from 1 to {MAX_IMPORT_FILES} files to import")
        uploads = []
        for f in files:
            name, data = (f.get("name"), f.get("data")) if isinstance(f, dict) else (None, None)
            if not isinstance(name, str) or not isinstance(data, str):
                return _error(400, "each file is {name, data}, its data in base64")
            try:
                uploads.append(Upload(name[:200], base64.b64decode(data, validate=True)))
            except ValueError:
                return _error(400, f"the data of '{name[:80]}' is not base64")

        def work() -> dict[str, Any]:
            try:
                result = import_conversations(uploads, default_folder(self.space.root))
            except ImportRefused as exc:
                raise Changed(str(exc)) from None
            return {"written": [{"path": self.space.relative(w.path), "turns": w.turns,
                                 "calls": w.calls} for w in result.written],
                    "problems": [str(p) for p in result.problems]}

        return await self._guarded(work)

    # ------------------------------------------------------------------ try

    async def try_start(self, request: Request) -> Response:
        body = await _body(request)
        target = body.get("target") or None

        def start() -> dict[str, Any]:
            path = self.space.resolve(_field(body, "path"))
            if self.space.kind(path) != "scenario":
                raise Refused("Try talks to the agent inside a scenario: open one")
            for old in self.talks.values():
                old.stop()
            self.talks.clear()
            talk = Conversation(path, target if isinstance(target, str) else None)
            self.talks[talk.id] = talk
            return {"id": talk.id, **talk.start().as_json()}

        return await self._guarded(start)

    async def try_send(self, request: Request) -> Response:
        talk = self.talks.get(request.path_params["id"])
        if talk is None:
            return _error(404, "this conversation has ended; send a message to start another")
        body = await _body(request)
        action = body.get("action")
        line: str | None
        if action == "say":
            line = _field(body, "text")
        elif action in ("confirm", "cancel"):
            line = "y" if action == "confirm" else "n"
        elif action == "check":
            line = None
        elif action == "poll":
            return await self._guarded(lambda: talk.poll().as_json())
        else:
            return _error(400, "action must be say, confirm, cancel, check or poll")
        return await self._guarded(lambda: talk.send(line).as_json())

    # ------------------------------------------------------------------ run

    async def run_start(self, request: Request) -> Response:
        body = await _body(request)
        target = body.get("target") or None
        rel = body.get("path")

        def start() -> dict[str, Any]:
            paths = (self.space.resolve(rel),) if isinstance(rel, str) and rel \
                else (self.space.root,)
            if rel and self.space.kind(paths[0]) != "scenario":
                raise Refused("Run runs a scenario (or the whole suite): open a scenario")
            job = self.runs.start(paths, target if isinstance(target, str) else None,
                                  rel if isinstance(rel, str) else None)
            return {"id": job.id}

        return await self._guarded(start)

    async def run_events(self, request: Request) -> Response:
        job = self.runs.jobs.get(request.path_params["id"])
        if job is None:
            return _error(404, "there is no such run")

        async def stream() -> Any:
            seen = 0
            while True:
                events, done = job.since(seen)
                for e in events:
                    yield f"event: {e['event']}\ndata: {json.dumps(e)}\n\n"
                seen += len(events)
                if done and not events:
                    return
                if not events:
                    if await request.is_disconnected():
                        return
                    await asyncio.sleep(EVENT_POLL_S)

        return StreamingResponse(stream(), media_type="text/event-stream")

    # ------------------------------------------------------------------ helpers

    async def _guarded(self, work: Callable[[], dict[str, Any]]) -> Response:
        try:
            return JSONResponse(await run_in_threadpool(work))
        except Refused as exc:
            return _error(403, str(exc))
        except Missing as exc:
            return _error(404, str(exc))
        except (Changed, RunBusy) as exc:
            return _error(409, str(exc))
        except _BadRequest as exc:
            return _error(exc.status, str(exc))
        except (FormError, TryError) as exc:
            return _error(400, str(exc))
        except UnicodeError:
            return _error(400, "the request holds text that is not valid Unicode (a lone "
                               "surrogate, say)")
        except Exception as exc:  # said in a sentence, never a traceback
            return _failed(exc)


def _failed(exc: BaseException) -> JSONResponse:
    traceback.print_exception(exc, file=sys.stderr)
    return _error(500, f"the studio failed at this request ({type(exc).__name__}: "
                       f"{_short(str(exc))}); the terminal that runs it shows the details")


def _short(text: str) -> str:
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 200 else text[:197] + "..."


_JSON_TOKENS = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]')


async def _body(request: Request, limit: int = MAX_BODY) -> dict[str, Any]:
    """The request's JSON object, read no further than ``limit`` bytes and nested no
    deeper than MAX_NESTING, with no lone surrogate in it; _BadRequest (400 or 413)
    otherwise."""
    length = request.headers.get("content-length")
    too_large = f"the request is larger than the studio takes ({limit // 2**20} MiB)"
    if length is not None and (not length.isdigit() or int(length) > limit):
        raise _BadRequest(too_large, 413)
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise _BadRequest(too_large, 413)
        chunks.append(chunk)
    raw = b"".join(chunks)
    depth = 0
    for m in _JSON_TOKENS.finditer(raw):
        token = m.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > MAX_NESTING:
                raise _BadRequest(f"the request's JSON is nested more than {MAX_NESTING} "
                                  "levels deep")
        elif token in (b"]", b"}"):
            depth -= 1
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise _BadRequest("the request is not JSON") from None
    if not isinstance(body, dict):
        raise _BadRequest("the request must be a JSON object")
    _valid_text(body)
    return body


def _valid_text(value: Any) -> None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raise _BadRequest("the request holds a lone surrogate (half of a character), "
                              "which is not text") from None
    elif isinstance(value, dict):
        for k, v in value.items():
            _valid_text(k)
            _valid_text(v)
    elif isinstance(value, list):
        for v in value:
            _valid_text(v)


def _field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise _BadRequest(f"'{name}' must be text")
    return value


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _cell(value: Any) -> str:
    return tables.cell_text(value)


def _problem(d: Diagnostic) -> dict[str, Any]:
    return {"line": d.span.line, "col": d.span.col, "code": d.code, "message": d.message,
            "hint": d.hint, "severity": d.severity,
            "text": f"{d.span.line}:{d.span.col} {d.code} {d.message}"}


def _models(base_url: str, key_env: str) -> dict[str, Any]:
    """What an OpenAI-compatible endpoint answers at ``base_url/models``: the models it
    serves, or why it cannot be asked (``error``, in words). The key, when the target
    names its variable, is read from the environment and sent, never shown."""
    # why: httpx (a TLS-capable client) only when a target's models are asked for
    import httpx

    url = base_url.strip().rstrip("/")
    shown = without_userinfo(url)
    if not re.match(r"^https?://[^/\s]+", url):
        return {"models": [], "error": f"'{shown}' is not an address the studio can ask: "
                                       "write it as http://HOST:PORT/v1"}
    headers = {"Accept": "application/json"}
    if key_env and os.environ.get(key_env):
        headers["Authorization"] = f"Bearer {os.environ[key_env]}"
    try:
        with httpx.Client(timeout=MODELS_TIMEOUT_S, follow_redirects=False,
                          trust_env=False) as client, \
                client.stream("GET", url + "/models", headers=headers) as r:
            data = b""
            for chunk in r.iter_bytes():
                data += chunk
                if len(data) > MAX_MODELS_BYTES:
                    return {"models": [], "error": f"{shown} answered more than the studio "
                                                   "reads for a list of models"}
            status = r.status_code
    except httpx.TimeoutException:
        return {"models": [], "error": f"cannot reach {shown}: it did not answer within "
                                       f"{MODELS_TIMEOUT_S:.0f} s"}
    except httpx.HTTPError as exc:
        reason = str(exc) or type(exc).__name__
        if "refused" in reason.lower():
            reason = "the connection was refused (is the server running?)"
        return {"models": [], "error": f"cannot reach {shown}: {_short(reason)}"}
    if status != 200:
        return {"models": [], "error": f"{shown} answered HTTP {status} to a request for "
                                       "its models"}
    try:
        answer = json.loads(data)
    except ValueError:
        return {"models": [], "error": f"{shown} did not answer with a list of models (JSON)"}
    found = answer.get("data") if isinstance(answer, dict) else None
    if not isinstance(found, list):
        found = answer.get("models") if isinstance(answer, dict) else None
    names = []
    for m in found if isinstance(found, list) else []:
        name = m.get("id") or m.get("name") if isinstance(m, dict) else None
        if isinstance(name, str) and name:
            names.append(name)
    if not names:
        return {"models": [], "error": f"{shown} answered, but named no model"}
    return {"models": sorted(dict.fromkeys(names)), "error": ""}


async def _http_error(request: Request, exc: Exception) -> Response:
    if isinstance(exc, _BadRequest):
        return _error(exc.status, str(exc))
    if isinstance(exc, HTTPException):
        words = {404: "there is nothing at this address",
                 405: "this address does not take this method"}.get(exc.status_code,
                                                                     str(exc.detail))
        return _error(exc.status_code, words)
    return _failed(exc)


def make_app(root: Path, keys: Keys, port: int) -> ASGIApp:
    """The studio over the suite at ``root``, behind its :class:`Guard`."""
    s = Studio(root, keys)
    routes = [
        Route("/", s.page),
        Route("/static/{name}", s.static),
        Route("/runs/{rest:path}", s.report),
        Route("/r/{key}/{run}/{rest:path}", s.granted),
        Route("/api/session", s.session, methods=["POST"]),
        Route("/api/suite", s.suite),
        Route("/api/file", s.read),
        Route("/api/lint", s.lint, methods=["POST"]),
        Route("/api/form", s.form, methods=["POST"]),
        Route("/api/save", s.save, methods=["POST"]),
        Route("/api/new", s.create, methods=["POST"]),
        Route("/api/diff", s.diff, methods=["POST"]),
        Route("/api/versions", s.versions, methods=["POST"]),
        Route("/api/models", s.models, methods=["POST"]),
        Route("/api/import", s.import_logs, methods=["POST"]),
        Route("/api/try", s.try_start, methods=["POST"]),
        Route("/api/try/{id}", s.try_send, methods=["POST"]),
        Route("/api/run", s.run_start, methods=["POST"]),
        Route("/api/run/{id}/events", s.run_events),
    ]
    # _BadRequest and HTTPException are answered where they are raised; Exception, by
    # Starlette's outermost layer, which also prints the traceback in the terminal
    app = Starlette(routes=routes, exception_handlers={
        _BadRequest: _http_error, HTTPException: _http_error, Exception: _http_error})
    return Guard(app, keys, port)


def launcher(url: str) -> Path:
    """A page only this user can read that sends the browser on to ``url``: what the
    browser's command line names instead of the address with its code."""
    folder = Path(tempfile.mkdtemp(prefix="scenarist-studio-"))  # mode 0700
    page = folder / "open.html"
    fd = os.open(page, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    target = html.escape(url, quote=True)
    with open(fd, "w", encoding="utf-8") as f:
        f.write(f'<!doctype html><meta charset="utf-8"><meta name="referrer" '
                f'content="no-referrer"><meta http-equiv="refresh" content="0;url={target}">'
                f'<title>Scenarist Studio</title><a href="{target}">Open Scenarist Studio</a>\n')
    return page


def serve(root: Path, port: int, open_browser: bool,
          echo: Callable[[str], None] = print) -> None:
    """Serve the suite at ``root`` until Ctrl-C; the first line printed is the address
    with a one-time code."""
    # why: uvicorn, when a server starts, only when used
    import uvicorn

    keys = Keys()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/?token={keys.code()}"
    opener: Path | None = None
    try:  # from the first line on, Ctrl-C stops it cleanly, whenever it comes
        echo(f"Studio: {url}")
        echo("Press Ctrl-C to stop it.")
        sys.stdout.flush()
        # log_level error: uvicorn's warnings are about what clients sent ("Invalid HTTP
        # request received."), not for the person who started the studio
        config = uvicorn.Config(make_app(root, keys, port), log_level="error",
                                access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2)
        server = uvicorn.Server(config)
        if open_browser:
            # why: the browser, only when asked to open one
            import webbrowser

            code = keys.code()
            opener = launcher(f"http://127.0.0.1:{port}/?token={code}")
            page = opener

            def gone(used: str) -> None:
                if used == code:
                    with contextlib.suppress(OSError):
                        page.unlink()

            keys.on_trade = gone
            threading.Timer(0.3, lambda: webbrowser.open(page.as_uri())).start()
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
        if opener is not None:
            with contextlib.suppress(OSError):
                opener.unlink(missing_ok=True)
                opener.parent.rmdir()
    echo("Studio stopped.")
