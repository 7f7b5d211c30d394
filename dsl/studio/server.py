"""The studio's web server: the page, its API, and the rules every request passes.

The rules (:class:`Guard`, before any route):

* the server listens on 127.0.0.1 only, and a request whose ``Host`` is not
  ``127.0.0.1:PORT`` or ``localhost:PORT`` is refused (a page elsewhere that rebinds its
  own name to 127.0.0.1 cannot reach it);
* every request carries the token printed at start — in the address (``?token=``) the
  first time, which sets an HttpOnly, SameSite=Strict cookie, then in that cookie;
* a request that changes anything (not GET or HEAD) whose ``Origin`` is another site is
  refused, and it must send JSON (a form on another site cannot);
* every path the API takes is resolved inside the suite (:mod:`.workspace`).

Refusals are 403 with a sentence. Responses carry a Content-Security-Policy that lets the
page load only its own files (the report keeps the one it was written with) and
``Referrer-Policy: no-referrer``, so the token never leaves in a Referer header.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from .. import __version__
from ..checks import REGISTRY
from ..compiler.lint import lint_text
from ..compiler.suite import SUITE_FILE, load_suite
from ..errors import Collector, Diagnostic
from ..source.resources import load_schema
from .form import FormError, apply, check_takes, form_of
from .runs import RunBusy, Runs
from .trying import Conversation, TryError
from .workspace import Changed, Missing, Refused, Workspace

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
EVENT_POLL_S = 0.1


class Guard:
    """The rules of this module's docstring, around the whole application."""

    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.cookie = f"scenarist-studio-{port}"  # cookies are shared across ports
        self.hosts = {f"127.0.0.1:{port}", f"localhost:{port}"}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope["headers"]}
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        given = (query.get("token") or [""])[0]
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # a malformed Cookie header is no token
            cookies = SimpleCookie()
        kept = cookies[self.cookie].value if self.cookie in cookies else ""
        if headers.get("host") not in self.hosts:
            await _forbidden(send, "this studio answers only at the address it printed "
                             "(127.0.0.1 or localhost, with its port)")
            return
        by_query = bool(given) and secrets.compare_digest(given, self.token)
        if not by_query and not (kept and secrets.compare_digest(kept, self.token)):
            await _forbidden(send, "open the studio with the address it printed when it "
                             "started (the one with ?token=)")
            return
        if scope["method"] not in SAFE:
            origin = headers.get("origin")
            if (origin is not None and origin not in self.origins) or \
                    headers.get("sec-fetch-site") == "cross-site":
                await _forbidden(send, "a change must come from the studio's own page")
                return
            if headers.get("content-type", "").split(";")[0].strip() != "application/json":
                await _forbidden(send, "a change must be sent as JSON by the studio's page")
                return
        report = scope["path"].startswith("/runs/")

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = [(b"referrer-policy", b"no-referrer"),
                         (b"x-content-type-options", b"nosniff"),
                         (b"cache-control", b"no-store")]
                if not report:
                    extra += [(b"content-security-policy", CSP.encode()),
                              (b"x-frame-options", b"DENY")]
                if by_query:
                    extra.append((b"set-cookie", (
                        f"{self.cookie}={self.token}; Path=/; HttpOnly; SameSite=Strict"
                    ).encode()))
                message["headers"] = [*message.get("headers", []), *extra]
            await send(message)

        await self.app(scope, receive, send_with_headers)


async def _forbidden(send: Send, why: str) -> None:
    body = f"403 Forbidden: {why}.\n".encode()
    await send({"type": "http.response.start", "status": 403, "headers": [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"referrer-policy", b"no-referrer"), (b"cache-control", b"no-store")]})
    await send({"type": "http.response.body", "body": body})


class Studio:
    """The API over one suite (every handler's state)."""

    def __init__(self, root: Path) -> None:
        self.space = Workspace(root)
        self.runs = Runs(self.space.root)
        self.talks: dict[str, Conversation] = {}

    # ------------------------------------------------------------------ the page

    async def page(self, request: Request) -> Response:
        html = (STATIC / "index.html").read_text("utf-8").replace("{{version}}", __version__)
        return Response(html, media_type="text/html; charset=utf-8")

    async def icon(self, request: Request) -> Response:
        return Response(status_code=204)

    async def static(self, request: Request) -> Response:
        name = request.path_params["name"]
        if name not in FILES:
            return _error(404, f"there is no file '{name}' here")
        return FileResponse(STATIC / name, media_type=FILES[name])

    async def report(self, request: Request) -> Response:
        """A run folder's files (its report.html and what it links to)."""
        runs = (self.space.root / "runs").resolve()
        rel = request.path_params["rest"]
        path = (runs / rel).resolve()
        if not path.is_relative_to(runs) or path == runs:
            return _error(403, f"'{rel}' is outside the suite's runs folder")
        if not path.is_file():
            return _error(404, f"there is no file '{rel}' in the runs folder")
        return FileResponse(path)

    # ------------------------------------------------------------------ the suite

    async def suite(self, request: Request) -> Response:
        return JSONResponse(await run_in_threadpool(self._suite))

    def _suite(self) -> dict[str, Any]:
        suite = load_suite(self.space.root / SUITE_FILE, Collector())
        schema = load_schema("scenario.schema.json")
        keys = {k: v.get("description", "") for k, v in schema["properties"].items()}
        given = schema["properties"]["given"]["properties"]
        return {
            "root": str(self.space.root),
            "name": self.space.root.name,
            "files": [{"path": e.path, "verdict": e.verdict} for e in self.space.entries()],
            "targets": list(suite.targets),
            "default_target": suite.defaults.target,
            "tools": [{"name": t.name, "description": t.description, "confirm": t.confirm,
                       "action": t.action} for t in suite.tools.values()],
            "checks": [{"name": c.name, "doc": c.doc, "takes": check_takes(c.name),
                        "params": _parameters(c.schema, {}),
                        "examples": list(c.examples), "judge": c.judge, "group": c.group}
                       for c in REGISTRY.values()],
            "named_checks": list(suite.checks),
            "keys": keys,
            "given_keys": {k: v.get("description", "") for k, v in given.items()},
        }

    # ------------------------------------------------------------------ a file

    async def read(self, request: Request) -> Response:
        rel = request.query_params.get("path", "")
        return await self._guarded(lambda: self._read(rel))

    def _read(self, rel: str) -> dict[str, Any]:
        text, version = self.space.read(rel)
        return {"path": rel, "text": text, "version": version}

    async def lint(self, request: Request) -> Response:
        body = await _body(request)
        return await self._guarded(lambda: self._lint(_field(body, "path"),
                                                      _field(body, "text")))

    def _lint(self, rel: str, text: str) -> dict[str, Any]:
        path = self.space.resolve(rel)
        result = lint_text(path, text)
        mine, others = [], []
        for d in result.diagnostics:
            if _same_file(d, path, self.space.root):
                mine.append(_problem(d))
            else:
                others.append(f"{d.span}: {d.severity} {d.code} {d.message}")
        return {"problems": mine, "elsewhere": others}

    async def form(self, request: Request) -> Response:
        body = await _body(request)
        edits = body.get("edits") or []
        if not isinstance(edits, list):
            return _error(400, "edits must be a list")
        return await self._guarded(lambda: self._form(_field(body, "path"),
                                                      _field(body, "text"), edits))

    def _form(self, rel: str, text: str, edits: list[Any]) -> dict[str, Any]:
        self.space.resolve(rel)
        library = list(load_suite(self.space.root / SUITE_FILE, Collector()).tools)
        new = apply(text, edits)
        out: dict[str, Any] = {"text": new, "form": form_of(new, library)}
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

    # ------------------------------------------------------------------ try

    async def try_start(self, request: Request) -> Response:
        body = await _body(request)
        target = body.get("target") or None

        def start() -> dict[str, Any]:
            path = self.space.resolve(_field(body, "path"))
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
            return JSONResponse((await run_in_threadpool(talk.poll)).as_json())
        else:
            return _error(400, "action must be say, confirm, cancel, check or poll")
        reply = await run_in_threadpool(talk.send, line)
        return JSONResponse(reply.as_json())

    # ------------------------------------------------------------------ run

    async def run_start(self, request: Request) -> Response:
        body = await _body(request)
        target = body.get("target") or None
        rel = body.get("path")

        def start() -> dict[str, Any]:
            paths = (self.space.resolve(rel),) if isinstance(rel, str) and rel \
                else (self.space.root,)
            job = self.runs.start(paths, target if isinstance(target, str) else None)
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
        except (FormError, TryError, _BadRequest) as exc:
            return _error(400, str(exc))


class _BadRequest(Exception):
    pass


async def _body(request: Request) -> dict[str, Any]:
    try:
        body = await request.json()
    except ValueError:
        body = None
    return body if isinstance(body, dict) else {}


def _field(body: dict[str, Any], name: str) -> str:
    value = body.get(name)
    if not isinstance(value, str):
        raise _BadRequest(f"'{name}' must be text")
    return value


def _error(status: int, message: str) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _same_file(d: Diagnostic, path: Path, root: Path) -> bool:
    if d.span.file.startswith("<"):
        return False
    shown = Path(d.span.file)
    return (shown if shown.is_absolute() else Path.cwd() / shown).resolve() == path


def _parameters(schema: Any, out: dict[str, str]) -> dict[str, str]:
    """A check's parameters (the keys of its mapping form) and what each means, from its
    JSON Schema, for completion."""
    if isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            out.setdefault(name, str(sub.get("description") or "") if isinstance(sub, dict)
                           else "")
        for key in ("then", "else", "anyOf", "oneOf", "allOf"):
            more = schema.get(key)
            for sub in more if isinstance(more, list) else [more]:
                _parameters(sub, out)
    return out


def _problem(d: Diagnostic) -> dict[str, Any]:
    return {"line": d.span.line, "col": d.span.col, "code": d.code, "message": d.message,
            "hint": d.hint, "severity": d.severity,
            "text": f"{d.span.line}:{d.span.col} {d.code} {d.message}"}


def make_app(root: Path, token: str, port: int) -> ASGIApp:
    """The studio over the suite at ``root``, behind its :class:`Guard`."""
    s = Studio(root)
    routes = [
        Route("/", s.page),
        Route("/favicon.ico", s.icon),
        Route("/static/{name}", s.static),
        Route("/runs/{rest:path}", s.report),
        Route("/api/suite", s.suite),
        Route("/api/file", s.read),
        Route("/api/lint", s.lint, methods=["POST"]),
        Route("/api/form", s.form, methods=["POST"]),
        Route("/api/save", s.save, methods=["POST"]),
        Route("/api/new", s.create, methods=["POST"]),
        Route("/api/try", s.try_start, methods=["POST"]),
        Route("/api/try/{id}", s.try_send, methods=["POST"]),
        Route("/api/run", s.run_start, methods=["POST"]),
        Route("/api/run/{id}/events", s.run_events),
    ]
    return Guard(Starlette(routes=routes), token, port)


def serve(root: Path, port: int, open_browser: bool,
          echo: Callable[[str], None] = print) -> None:
    """Serve the suite at ``root`` until Ctrl-C; the first line printed is the address
    with its token."""
    # why: uvicorn, when a server starts, only when used
    import uvicorn

    token = secrets.token_urlsafe(32)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", port))
    sock.listen(64)
    port = sock.getsockname()[1]
    url = f"http://127.0.0.1:{port}/?token={token}"
    try:  # from the first line on, Ctrl-C stops it cleanly, whenever it comes
        echo(f"Studio: {url}")
        echo("Press Ctrl-C to stop it.")
        sys.stdout.flush()
        # log_level error: uvicorn's warnings are about what clients sent ("Invalid HTTP
        # request received."), not for the person who started the studio
        config = uvicorn.Config(make_app(root, token, port), log_level="error",
                                access_log=False, lifespan="off",
                                timeout_graceful_shutdown=2)
        server = uvicorn.Server(config)
        if open_browser:
            # why: a thread and the browser, only when asked to open one
            import threading
            import webbrowser

            threading.Timer(0.3, lambda: webbrowser.open(url)).start()
        server.run(sockets=[sock])
    except KeyboardInterrupt:
        pass
    finally:
        sock.close()
    echo("Studio stopped.")
