"""The scenario's fake tools over MCP: what an agent that runs its own loop (``kind: http``,
``kind: command``) calls instead of its real tools, and what ``scenarist mcp`` serves.

One :class:`ToolServer` per run (the official ``mcp`` SDK's low-level server behind its
streamable-HTTP session manager, stateless, JSON replies, served by uvicorn on 127.0.0.1
inside the run's own event loop). Each attempt gets its own :class:`Endpoint`: an
unguessable path (``/mcp/<token>``) whose ``tools/list`` gives the scenario's fake tools
and whose ``tools/call`` is answered by :func:`dsl.compiler.faketools.take` — the one
function the agent loop and python agents use, so a tool answers the same whatever the
target: templates, ``answers`` by argument, ``error``; a ``confirm: true`` tool's call is
held (its result tells the agent it awaits the person's confirmation) and recorded as
pending; a tool the scenario does not have is an MCP error, recorded as such. Every call is
kept in the endpoint's :attr:`Endpoint.calls`, in order.

Once an attempt has ended (:meth:`Endpoint.close`) its path answers 404 to everything and
a call still in flight is refused, not recorded: nothing reaches another attempt's record.
A request whose ``Host`` is not this server's address, or whose ``Origin`` is a web page
elsewhere, is refused before anything reads it (DNS rebinding).

The SDK, starlette and uvicorn are imported when the first server starts: a run with only
``openai``, ``python`` or ``replay`` targets never loads them.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import secrets
import socket
from collections.abc import Callable, Iterator
from typing import Any

from .. import __version__
from ..compiler.faketools import take
from ..compiler.world import World
from ..model import Call, Scenario

# What a held call's result says to the agent (it has not run).
HELD = ("This call needs the person's confirmation before it runs: it has NOT been run. "
        "Ask the person to confirm it. If they do, it runs and you get its result with "
        "their next turn (confirmed); if they cancel, you are told so (cancelled).")
ENDED = "this attempt has ended: its tools take no more calls"
PATH = "/mcp"  # every endpoint's path starts here, then its token
MAX_BODY = 4 * 2**20  # the largest request an endpoint reads


class Endpoint:
    """One attempt's tools: its URL, and every call made to them, in order."""

    def __init__(self, scenario: Scenario, path: str, url: str,
                 on_call: Callable[[Call], None] | None = None,
                 forget: Callable[[Endpoint], None] = lambda e: None,
                 renew: Callable[[Endpoint], None] = lambda e: None) -> None:
        self.scenario = scenario
        self.tools = {t.name: t for t in scenario.tools}
        self.path = path
        self.url = url
        self.calls: list[Call] = []
        self.step = 1  # the turn the calls arrive in (an own-loop agent's calls say it)
        self.open = True
        self.connected = False  # a request reached it
        self.listed = False  # the agent asked for its tools (tools/list)
        self.world: Any = None  # the attempt's world (dsl/compiler/world.py)
        if scenario.world:
            self.world = World(scenario.world)
        self._on_call = on_call
        self._forget = forget
        self._renew = renew

    def discard(self, since: int) -> list[Call]:
        """Forget the calls made since the ``since``-th (a failed try of a turn that is
        sent again): they are no longer the attempt's; returned for the record."""
        gone = self.calls[since:]
        del self.calls[since:]
        return gone

    def renew(self) -> None:
        """Move to a new unguessable path (a turn sent again is told the new ``url``): the
        old one refuses everything from now on, so a failed try that is still at work
        records nothing."""
        self._renew(self)

    def take(self, name: str, args: Any) -> Call:
        """Answer one call (recorded in :attr:`calls`); raises :class:`Ended` once the
        attempt is over."""
        if not self.open:
            raise Ended(ENDED)
        raw = json.dumps(args, ensure_ascii=False)
        call = take(self.tools, name, args, raw, f"mcp_{len(self.calls) + 1}", self.step,
                    self.scenario.at, self.world)
        self.calls.append(call)
        if self._on_call is not None:
            self._on_call(call)
        return call

    @property
    def used(self) -> str:
        """How the agent used this endpoint so far (dsl.model.MCP_USES)."""
        return "listed" if self.listed else "connected" if self.connected else "never"

    def close(self) -> None:
        """The attempt has ended: refuse everything from now on."""
        self.open = False
        self._forget(self)


class Ended(Exception):
    """A call to an endpoint whose attempt has ended."""


def received(call: Call) -> str:
    """What the agent got back from a call at its endpoint: the held text for a call held
    for the person's confirmation, else the tool's answer (an error's text included)."""
    return HELD if call.pending else call.output or ""


def mcp_server(resolve: Callable[[Any], Endpoint | None]) -> Any:
    """The low-level MCP server whose ``tools/list`` and ``tools/call`` answer from the
    endpoint ``resolve(ctx)`` finds for each request (None: refused)."""
    # why: the MCP SDK, for own-loop agents only
    import mcp_types as types
    from mcp.server.lowlevel import Server
    from mcp.shared.exceptions import MCPError

    def endpoint_of(ctx: Any) -> Endpoint:
        endpoint = resolve(ctx)
        if endpoint is None or not endpoint.open:
            raise MCPError(types.INVALID_REQUEST, ENDED)
        return endpoint

    async def list_tools(ctx: Any, params: Any) -> Any:
        endpoint = endpoint_of(ctx)
        endpoint.listed = True
        return types.ListToolsResult(tools=[
            types.Tool(name=t.name, description=t.description or None,
                       input_schema=_object_schema(t.input_schema))
            for t in endpoint.scenario.tools])

    async def call_tool(ctx: Any, params: Any) -> Any:
        endpoint = endpoint_of(ctx)
        try:
            call = endpoint.take(params.name, dict(params.arguments or {}))
        except Ended:
            raise MCPError(types.INVALID_REQUEST, ENDED) from None
        if call.error == "unknown-tool":
            raise MCPError(types.INVALID_PARAMS, call.output or "unknown tool")
        return types.CallToolResult(content=[types.TextContent(text=received(call))],
                                    is_error=call.error is not None)

    return Server("scenarist", version=__version__,
                  instructions="The fake tools of a Scenarist scenario.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def _object_schema(schema: Any) -> dict[str, Any]:
    out = dict(schema) if isinstance(schema, dict) else {}
    out.setdefault("type", "object")
    return out


class ToolServer:
    """One MCP server on 127.0.0.1 for a run (or for ``scenarist mcp``): each attempt's
    :class:`Endpoint` at a path of its own."""

    def __init__(self, port: int = 0) -> None:
        self._port = port
        self.port = 0
        self._endpoints: dict[str, Endpoint] = {}
        self._task: asyncio.Task[None] | None = None
        self._uvicorn: Any = None
        self._started = asyncio.Event()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def endpoint(self, scenario: Scenario, path: str | None = None,
                 on_call: Callable[[Call], None] | None = None) -> Endpoint:
        """A new endpoint for one attempt of ``scenario`` (an unguessable path unless
        ``path`` is given)."""
        path = path or f"{PATH}/{secrets.token_urlsafe(24)}"
        endpoint = Endpoint(scenario, path, self.base + path, on_call, self._drop,
                            self._move)
        self._endpoints[path] = endpoint
        return endpoint

    def _drop(self, endpoint: Endpoint) -> None:
        self._endpoints.pop(endpoint.path, None)

    def _move(self, endpoint: Endpoint) -> None:
        self._drop(endpoint)
        endpoint.path = f"{PATH}/{secrets.token_urlsafe(24)}"
        endpoint.url = self.base + endpoint.path
        if endpoint.open:
            self._endpoints[endpoint.path] = endpoint

    async def start(self) -> None:
        """Listen on 127.0.0.1 (``port``, or one the system picks); returns once requests
        can arrive. Raises OSError when the port cannot be had."""
        # why: uvicorn, when a server starts and the MCP SDK, for own-loop agents only
        import uvicorn
        from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
        from mcp.server.transport_security import TransportSecuritySettings

        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind(("127.0.0.1", self._port))
        except OSError:
            sock.close()
            raise
        self.port = sock.getsockname()[1]
        self._hosts = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        self._origins = {f"http://{h}" for h in self._hosts}
        security = TransportSecuritySettings(enable_dns_rebinding_protection=True,
                                             allowed_hosts=sorted(self._hosts),
                                             allowed_origins=sorted(self._origins))
        server = mcp_server(self._resolve)
        manager = StreamableHTTPSessionManager(server, json_response=True, stateless=True,
                                               security_settings=security,
                                               max_request_body_size=MAX_BODY)
        # log_level error: uvicorn's warnings are about what clients sent ("Invalid HTTP
        # request received."), never for the run's output
        config = uvicorn.Config(self._guard(manager), lifespan="off", log_config=None,
                                access_log=False, log_level="error",
                                timeout_graceful_shutdown=1)
        self._uvicorn = _QuietServer(config)

        async def serve() -> None:
            async with manager.run():
                self._started.set()
                await self._uvicorn.serve(sockets=[sock])

        self._task = asyncio.ensure_future(serve())
        waiter = asyncio.ensure_future(self._started.wait())
        await asyncio.wait({self._task, waiter}, return_when=asyncio.FIRST_COMPLETED)
        if self._task.done():
            waiter.cancel()
            self._task.result()  # raises what stopped it
            return
        while not self._uvicorn.started and not self._task.done():
            await asyncio.sleep(0.005)
        if self._task.done():
            self._task.result()

    def _resolve(self, ctx: Any) -> Endpoint | None:
        request = getattr(ctx, "request", None)
        scope = getattr(request, "scope", None)
        if not isinstance(scope, dict):
            return None
        endpoint = scope.get("scenarist.endpoint")
        # a request that came in at a path the endpoint has since left (a failed try of a
        # turn sent again, Endpoint.renew) is refused, not recorded
        return endpoint if endpoint is not None and endpoint.path == scope.get("path") \
            else None

    def _guard(self, manager: Any) -> Callable[..., Any]:
        """The ASGI app: Host and Origin checked, the endpoint found by its path, then the
        SDK's transport."""

        async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                return
            headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                       for k, v in scope.get("headers", ())}
            if headers.get("host") not in self._hosts:
                await _refuse(send, 421, "refused: the Host header is not this server")
                return
            origin = headers.get("origin")
            if origin is not None and origin not in self._origins:
                await _refuse(send, 403, "refused: requests from web pages are not served")
                return
            endpoint = self._endpoints.get(scope.get("path", ""))
            if endpoint is None or not endpoint.open:
                await _refuse(send, 404, "no such endpoint (or its attempt has ended)")
                return
            endpoint.connected = True
            await manager.handle_request({**scope, "scenarist.endpoint": endpoint},
                                         receive, send)

        return app

    async def aclose(self) -> None:
        for e in list(self._endpoints.values()):
            e.close()
        if self._uvicorn is not None:
            self._uvicorn.should_exit = True
        if self._task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(self._task, 5)


async def _refuse(send: Any, status: int, text: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": None,
                       "error": {"code": -32600, "message": text}}).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def _quiet_server_class() -> Any:
    # why: uvicorn, when a server starts, only when used
    import uvicorn

    class Quiet(uvicorn.Server):
        """uvicorn without its signal handlers: Ctrl-C belongs to the run."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return Quiet


def _QuietServer(config: Any) -> Any:
    return _quiet_server_class()(config)


# ---- one server per run ------------------------------------------------------------------

_SHARED: dict[int, tuple[ToolServer, int]] = {}  # by event loop: the server, its users


async def acquire() -> ToolServer:
    """The run's server (started by its first user)."""
    key = id(asyncio.get_running_loop())
    held = _SHARED.get(key)
    if held is None:
        server = ToolServer()
        _SHARED[key] = (server, 1)
        try:
            await server.start()
        except BaseException:
            _SHARED.pop(key, None)
            raise
        return server
    server, users = held
    _SHARED[key] = (server, users + 1)
    await server._started.wait()
    return server


async def release(server: ToolServer) -> None:
    """One user is done with the run's server; the last one stops it."""
    key = id(asyncio.get_running_loop())
    held = _SHARED.get(key)
    if held is None or held[0] is not server:
        await server.aclose()
        return
    if held[1] > 1:
        _SHARED[key] = (server, held[1] - 1)
        return
    del _SHARED[key]
    await server.aclose()
