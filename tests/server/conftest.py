"""A real LSP client (pygls's) driving `python -m jaxlint server` in a subprocess."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp  # the dev extra installs pygls: a missing one fails, never skips
from pygls.lsp.client import LanguageClient

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 20.0


class Session:
    """One server process: what it published and logged, and helpers to wait for it."""

    started: list[Session] = []  # by this test's scenario: `run` kills those still running at its end

    def __init__(
        self,
        root: Path,
        options: dict | None = None,
        command: list[str] | None = None,
        path: list[Path] = (),
        capabilities: lsp.ClientCapabilities | None = None,
    ) -> None:
        self.root = root
        self.options = options
        self.path = [*path, ROOT]  # PYTHONPATH of the server (and of its lint process)
        self.capabilities = capabilities
        self.command = command or [sys.executable, "-m", "jaxlint", "server"]
        self.client = LanguageClient("jaxlint-tests", "0")
        self.published: dict[str, list[lsp.PublishDiagnosticsParams]] = {}
        self.logs: list[str] = []
        self.shown: list[str] = []
        self.changed = asyncio.Event()

        @self.client.feature(lsp.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(ls, params: lsp.PublishDiagnosticsParams) -> None:
            self.published.setdefault(params.uri, []).append(params)
            self.changed.set()

        @self.client.feature(lsp.WINDOW_LOG_MESSAGE)
        def _logged(ls, params: lsp.LogMessageParams) -> None:
            self.logs.append(params.message)
            self.changed.set()

        @self.client.feature(lsp.WINDOW_SHOW_MESSAGE)
        def _shown(ls, params: lsp.ShowMessageParams) -> None:
            self.shown.append(params.message)
            self.changed.set()

    async def start(self) -> lsp.InitializeResult:
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(map(str, self.path)))
        await self.client.start_io(*self.command, env=env, cwd=str(self.root))
        Session.started.append(self)
        capabilities = self.capabilities or lsp.ClientCapabilities(
            notebook_document=lsp.NotebookDocumentClientCapabilities(
                synchronization=lsp.NotebookDocumentSyncClientCapabilities()
            )
        )
        result = await asyncio.wait_for(
            self.client.initialize_async(
                lsp.InitializeParams(
                    capabilities=capabilities,
                    root_uri=self.root.as_uri(),
                    initialization_options=self.options,
                )
            ),
            TIMEOUT,
        )
        self.client.initialized(lsp.InitializedParams())
        return result

    async def stop(self) -> int:
        await asyncio.wait_for(self.client.shutdown_async(None), TIMEOUT)
        self.client.exit(None)
        server = self.client._server
        assert server is not None
        return await asyncio.wait_for(server.wait(), TIMEOUT)

    async def wait_for(self, predicate, what: str):
        """Wait until `predicate()` is truthy (checked after each message from the server)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + TIMEOUT
        while True:
            value = predicate()
            if value:
                return value
            self.changed.clear()
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise AssertionError(f"timed out waiting for {what}; published: {self.published}")
            try:
                await asyncio.wait_for(self.changed.wait(), remaining)
            except asyncio.TimeoutError:
                pass

    async def diagnostics(self, uri: str, version: int | None = None) -> list[lsp.Diagnostic]:
        """The diagnostics published for `uri` (for `version`, when given)."""

        def latest():
            for params in reversed(self.published.get(uri, [])):
                if version is None or params.version == version:
                    return params
            return None

        params = await self.wait_for(latest, f"diagnostics for {uri} (version {version})")
        return list(params.diagnostics)

    def open(self, path: Path, text: str, version: int = 1) -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(
            lsp.DidOpenTextDocumentParams(lsp.TextDocumentItem(uri, "python", version, text))
        )
        return uri


def run(scenario):
    """Run an async test scenario to the end; a server it leaves running (a failed test) is killed."""

    async def guarded():
        Session.started.clear()
        try:
            return await scenario()
        finally:
            for session in Session.started:
                server = session.client._server
                if server is not None and server.returncode is None:
                    server.kill()
                    await server.wait()

    return asyncio.run(guarded())


def codes(diagnostics: list[lsp.Diagnostic]) -> list[str]:
    return sorted(str(d.code) for d in diagnostics)


@pytest.fixture
def session_factory(tmp_path):
    def make(options: dict | None = None, command: list[str] | None = None, **more) -> Session:
        return Session(tmp_path, options, command, **more)

    return make
