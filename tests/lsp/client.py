"""A real LSP client (pygls's own) driving a real ``scenarist lsp`` process over stdio,
behind a small synchronous face for the tests: its event loop runs in a thread of its
own; each call waits for the answer with a generous timeout."""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types as lsp
from pygls.lsp.client import LanguageClient

from tests.conftest import REPO

T = TypeVar("T")
TIMEOUT = 60.0  # generous: the machine may be busy; a healthy answer takes milliseconds


def command() -> list[str]:
    """``scenarist lsp``, as editors start it."""
    return [sys.executable, "-m", "dsl", "lsp"]


def capabilities(snippets: bool = True) -> lsp.ClientCapabilities:
    return lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(
            completion=lsp.CompletionClientCapabilities(
                completion_item=lsp.ClientCompletionItemOptions(snippet_support=snippets)),
            publish_diagnostics=lsp.PublishDiagnosticsClientCapabilities(
                related_information=True)),
        workspace=lsp.WorkspaceClientCapabilities(
            did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(
                dynamic_registration=True)))


class Client:
    """One server process and the client speaking to it."""

    def __init__(self, cwd: Path, *, snippets: bool = True) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = LanguageClient("scenarist-tests", "1")
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.changed = threading.Condition()
        self.versions: dict[str, int] = {}
        self.registrations: list[lsp.Registration] = []

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def published(params: lsp.PublishDiagnosticsParams) -> None:
            with self.changed:
                self.published.setdefault(params.uri, []).append(params)
                self.changed.notify_all()

        @self.client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
        def register(params: lsp.RegistrationParams) -> None:
            self.registrations.extend(params.registrations)

        env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
        self.run(self.client.start_io(*command(), cwd=str(cwd), env=env))
        self.result = self.run(self.client.initialize_async(lsp.InitializeParams(
            capabilities=capabilities(snippets), root_uri=cwd.as_uri(),
            workspace_folders=[lsp.WorkspaceFolder(cwd.as_uri(), cwd.name)])))
        self.client.initialized(lsp.InitializedParams())

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = TIMEOUT) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def _notify(self, send: Any, params: Any) -> None:
        async def go() -> None:
            send(params)
        self.run(go())

    # ------------------------------------------------------------------ documents

    def open(self, path: Path, text: str | None = None) -> str:
        uri = path.as_uri()
        self.versions[uri] = 1
        self._notify(self.client.text_document_did_open, lsp.DidOpenTextDocumentParams(
            lsp.TextDocumentItem(uri, "yaml", 1,
                                 path.read_text("utf-8") if text is None else text)))
        return uri

    def change(self, path: Path, text: str) -> int:
        """The whole text replaced; the document's new version."""
        uri = path.as_uri()
        self.versions[uri] += 1
        self._notify(self.client.text_document_did_change, lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(self.versions[uri], uri),
            [lsp.TextDocumentContentChangeWholeDocument(text)]))
        return self.versions[uri]

    def edit(self, path: Path, line: int, start: int, end: int, text: str) -> int:
        """An incremental change of one line's characters ``start``..``end``."""
        uri = path.as_uri()
        self.versions[uri] += 1
        self._notify(self.client.text_document_did_change, lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(self.versions[uri], uri),
            [lsp.TextDocumentContentChangePartial(
                lsp.Range(lsp.Position(line, start), lsp.Position(line, end)), text)]))
        return self.versions[uri]

    def save(self, path: Path) -> None:
        self._notify(self.client.text_document_did_save, lsp.DidSaveTextDocumentParams(
            lsp.TextDocumentIdentifier(path.as_uri())))

    def close_document(self, path: Path) -> None:
        self._notify(self.client.text_document_did_close, lsp.DidCloseTextDocumentParams(
            lsp.TextDocumentIdentifier(path.as_uri())))

    def watched(self, *changes: tuple[Path, lsp.FileChangeType]) -> None:
        self._notify(self.client.workspace_did_change_watched_files,
                     lsp.DidChangeWatchedFilesParams([lsp.FileEvent(p.as_uri(), kind)
                                                      for p, kind in changes]))

    def diagnostics(self, path: Path, version: int | None = None, after: int = 0,
                    timeout: float = TIMEOUT) -> list[lsp.Diagnostic]:
        """The diagnostics published for ``path`` at ``version`` (default: the version
        last sent), or the first published after the ``after``-th (a file not open)."""
        uri = path.as_uri()
        wanted = self.versions.get(uri) if version is None else version

        def ready() -> lsp.PublishDiagnosticsParams | None:
            seen = self.published.get(uri, [])
            for p in seen[after:]:
                if wanted is None or p.version == wanted:
                    return p
            return None

        with self.changed:
            if not self.changed.wait_for(lambda: ready() is not None, timeout):
                raise TimeoutError(f"no diagnostics for {path} (version {wanted})")
            found = ready()
        assert found is not None
        return list(found.diagnostics)

    def count(self, path: Path) -> int:
        with self.changed:
            return len(self.published.get(path.as_uri(), []))

    # ------------------------------------------------------------------ requests

    def _doc(self, path: Path) -> lsp.TextDocumentIdentifier:
        return lsp.TextDocumentIdentifier(path.as_uri())

    def completion(self, path: Path, line: int, col: int) -> list[lsp.CompletionItem]:
        found = self.run(self.client.text_document_completion_async(lsp.CompletionParams(
            self._doc(path), lsp.Position(line, col))))
        if found is None:
            return []
        return list(found.items if isinstance(found, lsp.CompletionList) else found)

    def labels(self, path: Path, line: int, col: int) -> list[str]:
        return [i.label for i in self.completion(path, line, col)]

    def hover(self, path: Path, line: int, col: int) -> str | None:
        found = self.run(self.client.text_document_hover_async(lsp.HoverParams(
            self._doc(path), lsp.Position(line, col))))
        if found is None:
            return None
        contents = found.contents
        assert isinstance(contents, lsp.MarkupContent)
        return contents.value

    def definition(self, path: Path, line: int, col: int) -> list[lsp.Location]:
        found = self.run(self.client.text_document_definition_async(lsp.DefinitionParams(
            self._doc(path), lsp.Position(line, col))))
        if found is None:
            return []
        return [found] if isinstance(found, lsp.Location) else list(found)  # type: ignore[arg-type]

    def references(self, path: Path, line: int, col: int,
                   declaration: bool = True) -> list[lsp.Location]:
        found = self.run(self.client.text_document_references_async(lsp.ReferenceParams(
            context=lsp.ReferenceContext(declaration), text_document=self._doc(path),
            position=lsp.Position(line, col))))
        return list(found or [])

    def symbols(self, path: Path) -> list[lsp.DocumentSymbol]:
        found = self.run(self.client.text_document_document_symbol_async(
            lsp.DocumentSymbolParams(self._doc(path))))
        return list(found or [])  # type: ignore[arg-type]

    def actions(self, path: Path, diagnostics: list[lsp.Diagnostic],
                where: lsp.Range | None = None) -> list[lsp.CodeAction]:
        at = where or (diagnostics[0].range if diagnostics else
                       lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0)))
        found = self.run(self.client.text_document_code_action_async(lsp.CodeActionParams(
            self._doc(path), at, lsp.CodeActionContext(diagnostics))))
        return [a for a in found or [] if isinstance(a, lsp.CodeAction)]

    def raw(self, method: str, params: Any) -> Any:
        """A request as any client might send it (the params unchecked)."""
        return self.run(self.client.protocol.send_request_async(method, params))

    # ------------------------------------------------------------------ the end

    def stop(self, shutdown: bool = True) -> int:
        """shutdown (unless not ``shutdown``) and exit; the server's exit status."""
        if shutdown:
            self.run(self.client.shutdown_async(None))
        self._notify(self.client.exit, None)
        process = self.client._server
        assert process is not None
        code = self.run(asyncio.wait_for(process.wait(), TIMEOUT))
        self.run(self.client.stop())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(TIMEOUT)
        return code

    def kill(self) -> None:
        """For a test that failed half-way: leave no process behind."""
        process = self.client._server
        if process is not None and process.returncode is None:
            process.kill()
        if self.loop.is_running():
            with contextlib.suppress(Exception):
                self.run(self.client.stop(), 10)
            self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)
