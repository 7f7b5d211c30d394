"""The language server: pygls speaking the Language Server Protocol (lsprotocol's types)
over standard input and output, or TCP for debugging; every answer comes from the modules
beside it, which call what ``scenarist lint`` calls.

* open, change, save, close → :mod:`.diagnostics`: at once after a pause in the changes,
  at the end of a burst of changes closer than :data:`DEBOUNCE_S`; in one worker thread
  (lint of one file at a time; the event loop goes on answering completion and hover
  meanwhile); a change to ``scenarist.yaml``
  (open, saved, or on disk: ``workspace/didChangeWatchedFiles``) checks the open files of
  its suite again;
* completion → :mod:`.completion`, hover → :mod:`.hover`, definition, references and
  document symbols → :mod:`.navigation`, code actions → :mod:`.actions`.

A request about a file under no suite gets an empty answer; a request the server cannot
read gets a JSON-RPC error from pygls; nothing a client sends ends the server but
``exit``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException
from pygls.io_ import run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol

from .. import __version__
from ..compiler.lint import lint_text
from ..errors import Diagnostic
from ..exits import EXIT_FAILED, EXIT_OK
from ..source.suitefile import SUITE_FILE
from . import actions, completion, diagnostics, hover, navigation
from .files import SCENARIO_SUFFIXES, TABLE_SUFFIXES, Files, path_of, uri_of
from .knowledge import Known, known
from .peer import peer_uid
from .place import Encoding, from_units

DEBOUNCE_S = 0.01  # changes closer than this are a burst, checked once at its end
NAME = "scenarist"
TRIGGERS = [" ", ":", "-", "(", "'", '"', "{", "[", ","]
log = logging.getLogger("scenarist.lsp")
F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True, slots=True)
class _Unreadable:
    """A request whose parameters could not be read: answered with its error."""

    id: int | str
    error: JsonRpcException
    jsonrpc: str = "2.0"


class _Protocol(LanguageServerProtocol):
    """pygls's protocol, answering a request whose parameters it cannot read with the
    JSON-RPC error (-32602): pygls 2.1 only logs it, and the client would wait for an
    answer forever."""

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as exc:
            if isinstance(data, dict) and "method" in data and isinstance(data.get("id"),
                                                                          int | str):
                return _Unreadable(data["id"], exc)
            raise

    def handle_message(self, message: Any) -> Any:
        if isinstance(message, _Unreadable):
            log.warning("a request could not be read: %s", message.error.message)
            self._send_response(message.id, error=message.error.to_response_error())
            return None
        return super().handle_message(message)


class ScenaristServer(LanguageServer):
    """What the server keeps between requests: the files (:class:`Files`), the pending
    checks, and the diagnostics published on each file, by the file whose lint found them
    (a CSV's mistakes are found by the scenarios that read it)."""

    def __init__(self) -> None:
        super().__init__(NAME, __version__,
                         text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                         protocol_cls=_Protocol)
        self.files = Files()
        self.docs_url = diagnostics.DOCS_URL
        self.snippets = True
        self.shutdown_asked = False
        self.linter = ThreadPoolExecutor(1, thread_name_prefix="scenarist-lint")
        self.pending: dict[Path, asyncio.Task[None]] = {}
        self.changed_at: dict[Path, float] = {}  # when each file last changed (loop time)
        # file shown → file whose lint found them → diagnostics
        self.found: dict[Path, dict[Path, list[Diagnostic]]] = {}
        self.shown: dict[Path, list[lsp.Diagnostic]] = {}
        # each open file's URI as the editor wrote it (a path through a link resolves
        # elsewhere, and the editor knows the file by its own URI)
        self.uris: dict[Path, str] = {}

    @property
    def encoding(self) -> Encoding:
        chosen = str(self.workspace.position_encoding or "utf-16")
        return chosen if chosen in ("utf-8", "utf-32") else "utf-16"  # type: ignore[return-value]

    # ------------------------------------------------------------------ checking

    def schedule(self, path: Path, delay: float | None = None) -> None:
        """Check ``path``: at once after a pause in its changes, else :data:`DEBOUNCE_S`
        after this change unless another comes first (a burst is checked once, at its
        end); after ``delay`` when given."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        last, self.changed_at[path] = self.changed_at.get(path), now
        if delay is None:
            delay = DEBOUNCE_S if last is not None and now - last < DEBOUNCE_S else 0.0
        old = self.pending.pop(path, None)
        if old is not None:
            old.cancel()
            delay = DEBOUNCE_S  # a check was waiting or running: this change is a burst's
        self.pending[path] = loop.create_task(self._check(path, delay))

    async def _check(self, path: Path, delay: float) -> None:
        try:
            await asyncio.sleep(delay)
            info = self.files.info(path)
            found = await asyncio.get_running_loop().run_in_executor(
                self.linter, diagnostics.check, self.files, info)
        except asyncio.CancelledError:
            raise
        except Exception:  # a bug in Scenarist: said in the log, the editor goes on
            log.exception("checking %s failed", path)
            return
        finally:
            if self.pending.get(path) is asyncio.current_task():
                del self.pending[path]
        self.publish(path, found)

    def publish(self, source: Path, found: dict[Path, list[Diagnostic]]) -> None:
        """Show what the lint of ``source`` found, on each file it found it in."""
        for target in {p for p, by in self.found.items() if source in by} | set(found):
            by = self.found.setdefault(target, {})
            if target in found:
                by[source] = found[target]
            else:
                by.pop(source, None)
            seen: set[tuple[str, int, int, str]] = set()
            merged: list[Diagnostic] = []
            for d in (d for ds in by.values() for d in ds):
                key = (d.code, d.span.line, d.span.col, d.message)
                if key not in seen:
                    seen.add(key)
                    merged.append(d)
            uri = self.uris.get(target) or uri_of(target)  # as the editor named it
            shown = diagnostics.to_lsp(merged, uri, self.files.text(target), self.encoding,
                                       self.docs_url)
            self.shown[target] = shown
            doc = self.workspace.text_documents.get(uri)
            self.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(
                uri, shown, version=doc.version if doc is not None else None))

    def check_suite(self, suite_file: Path) -> None:
        """Check again every open file of the suite of ``suite_file``."""
        self.files.forget(suite_file)
        for path in list(self.files.texts):
            if path == suite_file or self.files.info(path).suite_file == suite_file:
                self.schedule(path)

    def check_all(self) -> None:
        self.files.forget()
        for path in list(self.files.texts):
            self.schedule(path)

    def close(self, path: Path) -> None:
        task = self.pending.pop(path, None)
        if task is not None:
            task.cancel()
        self.files.closed(path)
        self.changed_at.pop(path, None)
        self.publish(path, {})
        self.shown.pop(path, None)
        self.uris.pop(path, None)

    # ------------------------------------------------------------------ TCP

    def start_tcp(self, host: str, port: int) -> None:
        """pygls's TCP server, answering only a client of this machine's same user (any
        other connection is closed unread)."""
        self._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader,
                             writer: asyncio.StreamWriter) -> None:
            owner = peer_uid(writer.get_extra_info("peername"),
                             writer.get_extra_info("sockname"))
            if owner is not None and owner != os.getuid():
                log.warning("refused a connection from another user (uid %s)", owner)
                writer.close()
                return
            if owner is None:
                log.warning("cannot tell which user connected: answering it")
            self.protocol.set_writer(writer)
            await run_async(stop_event=stop, reader=reader, protocol=self.protocol,
                            logger=log, error_handler=self.report_server_error)
            self.shutdown()  # type: ignore[no-untyped-call]  # pygls leaves it untyped

        async def listen() -> None:
            self._server = await asyncio.start_server(connection, host, port)
            async with self._server:
                await self._server.serve_forever()

        with contextlib.suppress(asyncio.CancelledError):
            asyncio.run(listen())

    # ------------------------------------------------------------------ requests

    def known(self, uri: str) -> Known | None:
        path = path_of(uri)
        if path is None:
            return None
        return known(self.files, path)

    def chars(self, k: Known, position: lsp.Position) -> tuple[int, int]:
        """An editor's position as (line, column in characters)."""
        line = position.line
        text = k.lines[line] if 0 <= line < len(k.lines) else ""
        return line, from_units(text, position.character, self.encoding)


def _answer(default: Any) -> Callable[[F], F]:
    """A request's handler that answers ``default`` (an empty answer) instead of failing
    on a bug of Scenarist's: logged, the editor goes on."""
    def wrap(handler: F) -> F:
        @functools.wraps(handler)  # pygls reads the signature: the first parameter is ls
        def run(*args: Any) -> Any:
            try:
                return handler(*args)
            except Exception:  # a bug in Scenarist: logged, never a crash of the server
                log.exception("%s failed", handler.__name__)
                return default
        return cast(F, run)
    return wrap


def build() -> ScenaristServer:
    """The server with its features."""
    server = ScenaristServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: ScenaristServer, params: lsp.InitializeParams) -> None:
        options = params.initialization_options
        if isinstance(options, dict) and isinstance(options.get("docsUrl"), str):
            ls.docs_url = options["docsUrl"].rstrip("#")
        caps = params.capabilities.text_document
        item = caps.completion.completion_item if caps and caps.completion else None
        ls.snippets = bool(item and item.snippet_support)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: ScenaristServer, params: lsp.InitializedParams) -> None:
        watch = params and ls.client_capabilities.workspace
        dynamic = (watch and watch.did_change_watched_files
                   and watch.did_change_watched_files.dynamic_registration)
        if dynamic:
            ls.client_register_capability(lsp.RegistrationParams([lsp.Registration(
                "scenarist-files", lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                lsp.DidChangeWatchedFilesRegistrationOptions([
                    lsp.FileSystemWatcher(f"**/{SUITE_FILE}"),
                    lsp.FileSystemWatcher("**/*.{csv,jsonl}")]))]))

    @server.feature(lsp.SHUTDOWN)
    def shutdown(ls: ScenaristServer, *args: Any) -> None:
        ls.shutdown_asked = True
        for task in ls.pending.values():
            task.cancel()
        ls.pending.clear()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: ScenaristServer, params: lsp.DidOpenTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        ls.files.opened(path, params.text_document.text)
        ls.uris[path] = params.text_document.uri
        if path.name == SUITE_FILE:
            ls.check_suite(path)
        else:
            ls.schedule(path, 0)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: ScenaristServer, params: lsp.DidChangeTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        doc = ls.workspace.get_text_document(params.text_document.uri)
        ls.files.opened(path, doc.source)
        if path.name == SUITE_FILE:
            ls.check_suite(path)
        elif path.suffix.lower() not in TABLE_SUFFIXES:  # a table: lint reads it once saved
            ls.schedule(path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: ScenaristServer, params: lsp.DidSaveTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is None:
            return
        if path.name == SUITE_FILE:
            ls.check_suite(path)
        elif path.suffix.lower() in TABLE_SUFFIXES:
            ls.check_all()  # the scenarios that read it see it again
        else:
            ls.schedule(path)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: ScenaristServer, params: lsp.DidCloseTextDocumentParams) -> None:
        path = path_of(params.text_document.uri)
        if path is not None:
            ls.close(path)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    def watched(ls: ScenaristServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        changed = [p for c in params.changes if (p := path_of(c.uri)) is not None]
        if any(p.name == SUITE_FILE for p in changed):
            for p in changed:
                if p.name == SUITE_FILE and p not in ls.files.texts:
                    ls.check_suite(p)
        if any(p.suffix.lower() in (*TABLE_SUFFIXES, *SCENARIO_SUFFIXES) for p in changed):
            ls.check_all()

    @server.feature(lsp.TEXT_DOCUMENT_COMPLETION, lsp.CompletionOptions(
        trigger_characters=TRIGGERS, resolve_provider=False))
    @_answer(None)
    def complete(ls: ScenaristServer, params: lsp.CompletionParams
                 ) -> lsp.CompletionList | None:
        k = ls.known(params.text_document.uri)
        if k is None:
            return None
        line, col = ls.chars(k, params.position)
        items = completion.complete(k, line, col, ls.snippets, ls.encoding)
        return lsp.CompletionList(is_incomplete=False, items=items)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    @_answer(None)
    def on_hover(ls: ScenaristServer, params: lsp.HoverParams) -> lsp.Hover | None:
        k = ls.known(params.text_document.uri)
        if k is None:
            return None
        line, col = ls.chars(k, params.position)
        return hover.hover(k, line, col, ls.encoding)

    @server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
    @_answer([])
    def definition(ls: ScenaristServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
        k = ls.known(params.text_document.uri)
        if k is None:
            return []
        line, col = ls.chars(k, params.position)
        return navigation.definition(ls.files, k, line, col, ls.encoding)

    @server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
    @_answer([])
    def references(ls: ScenaristServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
        k = ls.known(params.text_document.uri)
        if k is None:
            return []
        line, col = ls.chars(k, params.position)
        return navigation.references(ls.files, k, line, col,
                                     params.context.include_declaration, ls.encoding)

    @server.feature(lsp.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @_answer([])
    def symbols(ls: ScenaristServer, params: lsp.DocumentSymbolParams
                ) -> list[lsp.DocumentSymbol]:
        k = ls.known(params.text_document.uri)
        if k is None:
            return []
        return navigation.symbols(k, ls.encoding)

    @server.feature(lsp.TEXT_DOCUMENT_CODE_ACTION, lsp.CodeActionOptions(
        code_action_kinds=[lsp.CodeActionKind.QuickFix]))
    @_answer([])
    def code_actions(ls: ScenaristServer, params: lsp.CodeActionParams
                     ) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        k = ls.known(uri)
        if k is None:
            return []
        asked = [d for d in params.context.diagnostics if d.source in (None, NAME)]
        if not asked:  # none sent: those published where the range is
            asked = [d for d in ls.shown.get(k.path, []) if _overlaps(d.range, params.range)]
        return actions.quick_fixes(k, uri, asked, ls.encoding)

    return server


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    def key(p: lsp.Position) -> tuple[int, int]:
        return p.line, p.character
    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _warm_up() -> None:
    """What the first lint would load: the schema validators and the expression parser."""
    try:
        lint_text(Path("/nonexistent-scenarist-warm-up/a.yaml"),
                  "given: {at: 2026-01-01T00:00:00Z}\nwhen: hi\nthen:\n"
                  "  - expect: \"count(calls) < 2\"\n")
    except Exception:  # only a head start: the real lint says what is wrong
        log.debug("warm-up failed", exc_info=True)


def serve(tcp_port: int | None = None) -> int:
    """Serve until the client says ``exit`` (or closes the connection): on standard input
    and output, or on 127.0.0.1:``tcp_port``. The exit status: 0 after ``shutdown``,
    1 otherwise (as the protocol asks)."""
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING,
                        format="scenarist lsp: %(levelname)s %(message)s")
    server = build()
    # what lint needs (schemas, the expression parser) loads while the editor says hello
    server.linter.submit(_warm_up)
    if tcp_port is None:
        stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
        sys.stdout = sys.stderr  # a stray print must not break the protocol's stream
        server.start_io(stdin, stdout)
    else:
        server.start_tcp("127.0.0.1", tcp_port)
    server.linter.shutdown(wait=False, cancel_futures=True)
    return EXIT_OK if server.shutdown_asked else EXIT_FAILED
