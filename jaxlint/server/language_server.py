"""The pygls language server: diagnostics (pushed, or pulled where the client asks for them), code actions and
hover for .py files and notebooks.

Linting runs in a process of its own (`lint_process.py`), so the event loop keeps answering while libcst
parses, and a lint whose answer nobody wants any more (a newer change, a closed document, `exit`) is stopped:
results for an outdated version are dropped. A change waits `DEBOUNCE_S` for the next keystroke, unless the
document's last lint took under `QUICK_LINT_S` (the incremental parse makes most edits of a module of a few
thousand lines that quick): such lints keep up with typing by themselves, as a young lint that a newer
change supersedes finishes and its answer is dropped. Open and save lint at once. Any exception while linting one document is logged to the client and leaves the server and
the other documents' diagnostics alone.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import re
import time
import traceback
from typing import Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams, JsonRpcInvalidRequest
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import RPCRequest
from pygls.uris import to_fs_path

from .. import __version__
from .hover import finding_hover, noqa_hover
from .last_good import LastGood
from .lint_process import Linter, WorkerDied, WorkerError
from .linting import ConfigError, Finding, config_for, docs_url, is_syntax_error
from .noqa_comment import noqa_edit
from .notebook_sync import cell_type, notebook_json, with_cell_edits
from .textdiff import split_lines, text_edits

DEBOUNCE_S = 0.05
QUICK_LINT_S = 0.25
HOVER_WAIT_S = 1.0
FIX_ALL_KIND = "source.fixAll.jaxlint"
# A lone surrogate: JSON may carry one ("\ud800"), no UTF-8 text can (libcst refused the whole document).
_SURROGATE = re.compile("[\ud800-\udfff]")


def _without_surrogates(value: Any) -> Any:
    """U+FFFD for each lone surrogate in a string (or list of them): one UTF-16 unit too, so every position
    the client sends or receives stays where it was."""
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value) if _SURROGATE.search(value) else value
    if isinstance(value, list):
        return [_without_surrogates(item) for item in value]
    return value


_SEVERITY = {"error": lsp.DiagnosticSeverity.Error, "warning": lsp.DiagnosticSeverity.Warning}

log = logging.getLogger(__name__)


@dataclasses.dataclass
class Entry:
    """A published diagnostic and the finding behind it."""

    finding: Finding
    diagnostic: lsp.Diagnostic


@dataclasses.dataclass
class Settings:
    """The client's settings (initializationOptions or workspace/didChangeConfiguration)."""

    select: list[str] | None = None
    ignore: list[str] | None = None

    @classmethod
    def parse(cls, raw: Any) -> Settings:
        if not isinstance(raw, dict):
            return cls()
        for key in ("jaxlint", "settings"):  # {"jaxlint": {...}} as editors nest them, or flat
            if isinstance(raw.get(key), dict):
                raw = raw[key]
        return cls(select=_codes(raw.get("select")), ignore=_codes(raw.get("ignore")))


def _codes(value: Any) -> list[str] | None:
    if isinstance(value, str):
        value = value.split(",")
    if not isinstance(value, list):
        return None
    return [str(v).strip().upper() for v in value if str(v).strip()]


@dataclasses.dataclass
class Lint:
    """The latest lint of a .py document: its findings, and which have a fix (applied by the lint process)."""

    text: str
    path: str
    findings: list[Finding]
    fixable: list[bool]


class JaxlintProtocol(LanguageServerProtocol):
    def structure_message(self, data: dict[str, Any]) -> Any:
        """Every JSON object of a message as it is decoded (innermost first), its strings without lone
        surrogates: a document holding one is linted like any (it was never linted, its old diagnostics
        kept)."""
        return super().structure_message({key: _without_surrogates(value) for key, value in data.items()})

    def handle_message(self, message: Any) -> None:
        """A request after `shutdown` is answered InvalidRequest, as LSP asks (pygls would drop it unanswered)."""
        if self._shutdown and isinstance(message, RPCRequest) and message.method != lsp.EXIT:
            error = JsonRpcInvalidRequest("jaxlint: the server is shut down; only `exit` is accepted")
            self._send_response(message.id, error=error.to_response_error())
            return
        super().handle_message(message)


class JaxlintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "jaxlint",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            notebook_document_sync=lsp.NotebookDocumentSyncOptions(
                notebook_selector=[
                    lsp.NotebookDocumentFilterWithCells(
                        notebook="*", cells=[lsp.NotebookCellLanguage(language="python")]
                    )
                ],
                save=True,
            ),
            protocol_cls=JaxlintProtocol,
        )
        self.settings = Settings()
        self.linter = Linter()
        self.entries: dict[str, list[Entry]] = {}  # uri of a file or of a notebook cell -> diagnostics
        self.linted: dict[str, Lint] = {}  # .py document uri -> its latest lint (for fixes)
        self.last_good = LastGood()
        self.pending: dict[str, asyncio.Task] = {}
        self.lint_seconds: dict[str, float] = {}  # .py document uri -> how long its last lint took
        self.open_documents: set[str] = set()  # .py documents (not notebook cells) the client has open
        self.shown_errors: set[str] = set()
        self.pull = False  # the client pulls diagnostics (textDocument/diagnostic): publish none
        self.pull_refresh = False  # ... and can be told to pull again (workspace/diagnostic/refresh)
        self.background: set[asyncio.Task] = set()
        self.shut_down = False
        self.exit_code = 1  # 0 only for `exit` after `shutdown`, as LSP asks
        self.exited = False  # the client sent `exit`

    def shutdown(self) -> None:
        """pygls's shutdown, without joining its threads: the one reading stdin may never return, and
        joining it kept the server alive after SIGINT or `exit`. The lint processes are killed."""
        self.linter.close()
        if self._stop_event is not None:
            self._stop_event.set()
        if self._thread_pool is not None:
            self._thread_pool.shutdown(wait=False, cancel_futures=True)

    def stop_linting(self) -> None:
        for task in list(self.pending.values()):
            task.cancel()
        self.pending.clear()
        self.linter.close()

    # -- scheduling ---------------------------------------------------------------------------------------

    def schedule(self, uri: str, delay: float = 0.0, notebook: bool = False) -> None:
        if self.shut_down:
            return
        previous = self.pending.pop(uri, None)
        if previous is not None:
            self.linter.cancel(previous)
        self.pending[uri] = asyncio.ensure_future(self._lint_later(uri, delay, notebook))

    async def _lint_later(self, uri: str, delay: float, notebook: bool) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            if notebook:
                await self.lint_notebook(uri)
            else:
                await self.lint_text_document(uri)
        except asyncio.CancelledError:
            raise
        except WorkerError as error:  # a bug in jaxlint costs this document's update, never the server
            self.log_error(f"jaxlint: internal error while linting {uri}:\n{error}")
        except WorkerDied as error:  # a crash in native code: the next lint starts a new process
            self.log_error(f"jaxlint: {error} while linting {uri}")
        except Exception:
            self.log_error(f"jaxlint: internal error while linting {uri}:\n{traceback.format_exc()}")
        finally:
            if self.pending.get(uri) is asyncio.current_task():
                del self.pending[uri]

    def recheck_others(self, uri: str) -> None:
        """`uri`'s summary changed: the other open documents may receive other facts from it."""
        for other in list(self.open_documents):
            if other != uri and other not in self.pending:
                self.schedule(other)
        for notebook in list(self.workspace.notebook_documents):
            if notebook != uri and notebook not in self.pending:
                self.schedule(notebook, notebook=True)

    def relint_all(self) -> None:
        for uri in list(self.open_documents):
            self.schedule(uri)
        for uri in list(self.workspace.notebook_documents):
            self.schedule(uri, notebook=True)
        if self.pull and self.pull_refresh:  # the client asks again; each answer waits for the new lint
            self.workspace_diagnostic_refresh(None)

    # -- linting ------------------------------------------------------------------------------------------

    def config(self, path: str):
        try:
            return config_for(path, self.settings.select, self.settings.ignore)
        except ConfigError as error:
            message = f"jaxlint: configuration error: {error}"
            if message not in self.shown_errors:  # once, not on every keystroke
                self.shown_errors.add(message)
                self.window_show_message(lsp.ShowMessageParams(lsp.MessageType.Error, message))
            self.log_error(message)
            return None

    def check_settings(self) -> None:
        """Report the client's bad settings at once (as the CLI exits 2 for them), not at the first lint."""
        root = to_fs_path(self.workspace.root_uri) if self.workspace.root_uri else None
        self.config(os.path.join(root or os.getcwd(), "untitled.py"))

    def in_background(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self.background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task) -> None:
        self.background.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.warning("jaxlint: background request failed: %s", task.exception())

    async def lint_text_document(self, uri: str) -> None:
        document = self.workspace.text_documents.get(uri)
        if document is None or not is_python(uri, document.language_id):
            return
        text, version, path = document.source, document.version, document_path(uri, ".py")
        config = self.config(path)
        if config is None:
            self.publish(uri, [], text, version)
            return
        started = time.monotonic()
        findings, fixable, others = await self.linter.call("lint", uri, text, path, config)
        self.lint_seconds[uri] = time.monotonic() - started
        if others:
            self.recheck_others(uri)
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != version:
            return  # superseded: a newer lint is scheduled
        self.linted[uri] = Lint(text, path, findings, fixable)
        self.publish(uri, self.last_good.shown(uri, text, findings), text, version)

    async def lint_notebook(self, uri: str) -> None:
        notebook = self.workspace.get_notebook_document(notebook_uri=uri)
        if notebook is None:
            return
        source, texts, path = self.notebook_source(notebook)
        version = notebook.version
        config = self.config(path)
        findings: list[Finding] = []
        if config is not None:
            findings, _, others = await self.linter.call("lint", None, source, path, config)
            if others:
                self.recheck_others(uri)
        current = self.workspace.get_notebook_document(notebook_uri=uri)
        if current is None or current.version != version:
            return
        by_cell: dict[str, list[Finding]] = {cell.document: [] for cell in notebook.cells}
        for finding in findings:
            number = finding.cell or 1
            if 1 <= number <= len(notebook.cells):
                by_cell[notebook.cells[number - 1].document].append(finding)
        for cell_uri, cell_findings in by_cell.items():  # a broken cell keeps its own last good findings
            document = self.workspace.text_documents.get(cell_uri)
            shown = self.last_good.shown(cell_uri, texts[cell_uri], cell_findings)
            self.publish(cell_uri, shown, texts[cell_uri], document.version if document else None)

    def notebook_source(self, notebook: lsp.NotebookDocument) -> tuple[str, dict[str, str], str]:
        """The notebook as .ipynb JSON, the text of each cell by uri, and the path to lint it as."""
        cells, texts = [], {}
        for cell in notebook.cells:
            document = self.workspace.text_documents.get(cell.document)
            text = document.source if document is not None else ""
            texts[cell.document] = text
            is_code = cell.kind == lsp.NotebookCellKind.Code
            cells.append((cell_type(is_code, document.language_id if document else None), text))
        path = document_path(notebook.uri, ".ipynb")
        if not path.endswith(".ipynb"):
            path += ".ipynb"  # the CLI's notebook path is chosen by the suffix
        return notebook_json(cells, notebook.metadata), texts, path

    def publish(self, uri: str, findings: list[Finding], text: str, version: int | None) -> None:
        lines = split_lines(text)
        entries = [Entry(f, self.diagnostic(f, lines)) for f in findings]
        self.entries[uri] = entries
        if self.pull:
            return
        self.text_document_publish_diagnostics(
            lsp.PublishDiagnosticsParams(
                uri=uri, diagnostics=[e.diagnostic for e in entries], version=version
            )
        )

    def diagnostic(self, finding: Finding, lines: list[str]) -> lsp.Diagnostic:
        start = lsp.Position(finding.line - 1, finding.column - 1)
        end = lsp.Position(finding.end_line - 1, finding.end_column - 1)
        if (start.line, start.character) >= (end.line, end.character) and start.line < len(lines):
            end = lsp.Position(start.line, len(lines[start.line].rstrip("\r\n")))  # JAX000: to the line end
        where = self.workspace.position_codec.range_to_client_units(lines, lsp.Range(start, end))
        url = docs_url(finding.code)
        return lsp.Diagnostic(
            range=where,
            message=finding.message,
            severity=_SEVERITY.get(finding.severity, lsp.DiagnosticSeverity.Error),
            code=finding.code,
            code_description=lsp.CodeDescription(href=url) if url else None,
            source="jaxlint",
        )

    def log_error(self, message: str) -> None:
        log.error("%s", message)
        self.window_log_message(lsp.LogMessageParams(lsp.MessageType.Error, message))

    # -- requests -----------------------------------------------------------------------------------------

    async def current_lint(self, uri: str) -> Lint | None:
        """The lint of the document's current text (linted now when the published one is outdated)."""
        document = self.workspace.text_documents.get(uri)
        linted = self.linted.get(uri)
        if document is None or linted is None:
            return None
        if linted.text != document.source:
            text, config = document.source, self.config(linted.path)
            if config is None:
                return None
            findings, fixable, others = await self.linter.call("lint", uri, text, linted.path, config)
            if others:
                self.recheck_others(uri)
            linted = self.linted[uri] = Lint(text, linted.path, findings, fixable)
        return linted

    async def settled(self, uri: str, limit: float | None = None) -> None:
        """Wait for the lint scheduled for `uri`, and for those that supersede it (at most `limit` seconds)."""
        loop = asyncio.get_running_loop()
        deadline = None if limit is None else loop.time() + limit
        for _ in range(10):
            task = self.pending.get(uri)
            if task is None or task is asyncio.current_task():
                return
            if deadline is not None and loop.time() >= deadline:
                return
            await asyncio.wait({task}, timeout=None if deadline is None else deadline - loop.time())

    def checked_lines(self, uri: str, position: lsp.Position) -> list[str] | None:
        """The lines of an open document; a position past its end is an error (InvalidParams), not a silent
        empty answer. None for a document that is not open."""
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return None
        lines = split_lines(document.source)
        last = len(lines) if not lines or lines[-1].endswith(("\n", "\r")) else len(lines) - 1
        if not 0 <= position.line <= last or position.character < 0:
            raise JsonRpcInvalidParams(
                f"jaxlint: position {position.line}:{position.character} is outside {uri} (lines 0-{last})"
            )
        return lines

    async def code_actions(self, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        uri = params.text_document.uri
        self.checked_lines(uri, params.range.start)
        self.checked_lines(uri, params.range.end)
        await self.settled(uri)
        document = self.workspace.text_documents.get(uri)
        if document is None:
            return []
        only = params.context.only
        want_quickfix = only is None or any(lsp.CodeActionKind.QuickFix.startswith(k) for k in only)
        want_fix_all = only is None or any(FIX_ALL_KIND.startswith(k) for k in only)
        text = document.source
        actions: list[lsp.CodeAction] = []
        linted = await self.current_lint(uri)
        if want_quickfix:
            if linted is not None:
                lines = split_lines(text)
                entries = [Entry(f, self.diagnostic(f, lines)) for f in linted.findings]
            else:  # a notebook cell: findings come from the notebook's lint
                entries = self.entries.get(uri, [])
            for index, entry in enumerate(entries):
                if not _overlaps(entry.diagnostic.range, params.range) or is_syntax_error(entry.finding):
                    continue
                fix = (
                    await self.fix_action(uri, text, linted, index, entry)
                    if linted is not None
                    else await self.cell_fix_action(uri, text, entry)
                )
                if fix is not None:
                    actions.append(fix)
                noqa = self.noqa_action(uri, text, entry)
                if noqa is not None:
                    actions.append(noqa)
        if want_fix_all and linted is not None and any(f.fix_safety == "safe" for f in linted.findings):
            config = self.config(linted.path)
            fixed = text
            if config is not None:
                fixed = await self.linter.call("fix_all", text, linted.path, config)
            if fixed != text and document.source == text:  # edits for an outdated text would corrupt it
                actions.append(
                    lsp.CodeAction(
                        title="jaxlint: fix all safe fixes",
                        kind=FIX_ALL_KIND,
                        edit=self.workspace_edit(uri, text, fixed),
                    )
                )
        return actions

    async def fix_action(
        self, uri: str, text: str, linted: Lint, index: int, entry: Entry
    ) -> lsp.CodeAction | None:
        config = self.config(linted.path)
        if not linted.fixable[index] or config is None:
            return None
        new = await self.linter.call("fix", uri, linted.text, linted.path, config, index)
        return self.describe_fix(uri, text, new, entry)

    def describe_fix(self, uri: str, text: str, new: str | None, entry: Entry) -> lsp.CodeAction | None:
        finding = entry.finding
        if new is None or new == text:
            return None
        unsafe = finding.fix_safety == "unsafe"
        return lsp.CodeAction(
            title=f"jaxlint: fix {finding.code} {finding.name}" + (" (unsafe fix)" if unsafe else ""),
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[entry.diagnostic],
            is_preferred=not unsafe,
            edit=self.workspace_edit(uri, text, new),
        )

    async def cell_fix_action(self, uri: str, text: str, entry: Entry) -> lsp.CodeAction | None:
        """One finding's fix in a notebook cell: the notebook is linted again, the fix kept to its cell."""
        finding = entry.finding
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        if finding.fix is None or notebook is None:
            return None
        source, _, path = self.notebook_source(notebook)
        config = self.config(path)
        edits = None
        if config is not None:
            edits = await self.linter.call("notebook_fix", source, path, config, finding)
        if not edits:
            return None
        return self.describe_fix(uri, text, with_cell_edits(text, edits), entry)

    def noqa_action(self, uri: str, text: str, entry: Entry) -> lsp.CodeAction | None:
        code = entry.finding.code
        edit = noqa_edit(text, entry.finding.line - 1, code)
        if edit is None:
            return None
        return lsp.CodeAction(
            title=f"jaxlint: suppress {code} with `# noqa: {code}`",
            kind=lsp.CodeActionKind.QuickFix,
            diagnostics=[entry.diagnostic],
            edit=lsp.WorkspaceEdit(changes={uri: [self.text_edit(split_lines(text), edit)]}),
        )

    def workspace_edit(self, uri: str, old: str, new: str) -> lsp.WorkspaceEdit:
        lines = split_lines(old)
        return lsp.WorkspaceEdit(changes={uri: [self.text_edit(lines, e) for e in text_edits(old, new)]})

    def text_edit(self, lines: list[str], edit) -> lsp.TextEdit:
        (start_line, start_col), (end_line, end_col), new_text = edit
        where = lsp.Range(lsp.Position(start_line, start_col), lsp.Position(end_line, end_col))
        return lsp.TextEdit(
            range=self.workspace.position_codec.range_to_client_units(lines, where), new_text=new_text
        )

    def hover(self, params: lsp.HoverParams) -> lsp.Hover | None:
        uri, at = params.text_document.uri, params.position
        lines = self.checked_lines(uri, at)
        for entry in self.entries.get(uri, []):
            where = entry.diagnostic.range
            if _before_or_at(where.start, at) and _before_or_at(at, where.end):
                return finding_hover(entry.finding, where)
        if not lines or at.line >= len(lines):
            return None
        at = self.workspace.position_codec.position_from_client_units(lines, at)
        return noqa_hover(lines[at.line], at.character)

    async def pulled(self, uri: str) -> lsp.RelatedFullDocumentDiagnosticReport:
        """textDocument/diagnostic: the diagnostics of the document's (or its notebook's) latest lint."""
        notebook = self.workspace.get_notebook_document(cell_uri=uri)
        await self.settled(notebook.uri if notebook is not None else uri)
        entries = self.entries.get(uri, [])
        return lsp.RelatedFullDocumentDiagnosticReport(items=[e.diagnostic for e in entries])


def _before_or_at(a: lsp.Position, b: lsp.Position) -> bool:
    return (a.line, a.character) <= (b.line, b.character)


def _overlaps(a: lsp.Range, b: lsp.Range) -> bool:
    return _before_or_at(a.start, b.end) and _before_or_at(b.start, a.end)


def is_python(uri: str, language_id: str | None) -> bool:
    if language_id:
        return language_id.lower() in ("python", "python3")
    return uri.endswith((".py", ".pyi"))


def document_path(uri: str, suffix: str) -> str:
    """The file path the CLI would lint (for config lookup and per-file-ignores); untitled documents sit in
    the current folder."""
    path = to_fs_path(uri) if uri.startswith("file:") else None
    return path or os.path.join(os.getcwd(), f"untitled{suffix}")


def build_server() -> JaxlintServer:
    server = JaxlintServer()

    @server.feature(lsp.INITIALIZE)
    def initialize(ls: JaxlintServer, params: lsp.InitializeParams) -> None:
        ls.settings = Settings.parse(params.initialization_options)
        text_document, workspace = params.capabilities.text_document, params.capabilities.workspace
        ls.pull = text_document is not None and text_document.diagnostic is not None
        ls.pull_refresh = bool(workspace and workspace.diagnostics and workspace.diagnostics.refresh_support)

    @server.feature(lsp.INITIALIZED)
    def initialized(ls: JaxlintServer, params: lsp.InitializedParams) -> None:
        ls.check_settings()

    @server.feature(lsp.WORKSPACE_DID_CHANGE_CONFIGURATION)
    def did_change_configuration(ls: JaxlintServer, params: lsp.DidChangeConfigurationParams) -> None:
        settings = Settings.parse(params.settings)
        if settings != ls.settings:
            ls.settings = settings
            ls.shown_errors.clear()  # a setting broken again is shown again
            ls.check_settings()
            ls.relint_all()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: JaxlintServer, params: lsp.DidOpenTextDocumentParams) -> None:
        ls.open_documents.add(params.text_document.uri)
        ls.schedule(params.text_document.uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: JaxlintServer, params: lsp.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        document = ls.workspace.text_documents.get(uri)
        if document is not None:  # pygls takes the version from each change: none in an empty list
            document.version = params.text_document.version
        ls.schedule(uri, 0.0 if ls.lint_seconds.get(uri, QUICK_LINT_S) < QUICK_LINT_S else DEBOUNCE_S)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: JaxlintServer, params: lsp.DidSaveTextDocumentParams) -> None:
        uri = params.text_document.uri
        ls.in_background(ls.linter.call("stale"))  # files on disk changed: project facts are computed again
        if uri.endswith("pyproject.toml"):
            ls.relint_all()  # the configuration may have changed
        else:
            ls.schedule(uri)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: JaxlintServer, params: lsp.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            ls.linter.cancel(task)
        ls.open_documents.discard(uri)
        ls.linted.pop(uri, None)
        ls.lint_seconds.pop(uri, None)
        ls.last_good.forget(uri)
        ls.in_background(ls.linter.call("forget", uri))
        if ls.entries.pop(uri, None) is not None:
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=[]))

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_OPEN)
    def notebook_did_open(ls: JaxlintServer, params: lsp.DidOpenNotebookDocumentParams) -> None:
        ls.schedule(params.notebook_document.uri, notebook=True)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CHANGE)
    def notebook_did_change(ls: JaxlintServer, params: lsp.DidChangeNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        structure = params.change.cells.structure if params.change.cells else None
        for closed in (structure.did_close or []) if structure else []:
            ls.last_good.forget(closed.uri)
            if ls.entries.pop(closed.uri, None) is not None:
                ls.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri=closed.uri, diagnostics=[])
                )
        ls.schedule(uri, DEBOUNCE_S, notebook=True)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_SAVE)
    def notebook_did_save(ls: JaxlintServer, params: lsp.DidSaveNotebookDocumentParams) -> None:
        ls.in_background(ls.linter.call("stale"))
        ls.schedule(params.notebook_document.uri, notebook=True)

    @server.feature(lsp.NOTEBOOK_DOCUMENT_DID_CLOSE)
    def notebook_did_close(ls: JaxlintServer, params: lsp.DidCloseNotebookDocumentParams) -> None:
        uri = params.notebook_document.uri
        task = ls.pending.pop(uri, None)
        if task is not None:
            ls.linter.cancel(task)
        for cell in params.cell_text_documents:
            ls.last_good.forget(cell.uri)
            if ls.entries.pop(cell.uri, None) is not None:
                ls.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri=cell.uri, diagnostics=[])
                )

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(code_action_kinds=[lsp.CodeActionKind.QuickFix, FIX_ALL_KIND]),
    )
    async def code_action(ls: JaxlintServer, params: lsp.CodeActionParams) -> list[lsp.CodeAction]:
        return await ls.code_actions(params)

    @server.feature(lsp.TEXT_DOCUMENT_HOVER)
    async def hover(ls: JaxlintServer, params: lsp.HoverParams) -> lsp.Hover | None:
        # Answer for the text the user sees, unless its lint (or one queued before it) runs long.
        await ls.settled(params.text_document.uri, HOVER_WAIT_S)
        return ls.hover(params)

    @server.feature(
        lsp.TEXT_DOCUMENT_DIAGNOSTIC,
        lsp.DiagnosticOptions(
            identifier="jaxlint", inter_file_dependencies=False, workspace_diagnostics=False
        ),
    )
    async def diagnostic(
        ls: JaxlintServer, params: lsp.DocumentDiagnosticParams
    ) -> lsp.RelatedFullDocumentDiagnosticReport:
        return await ls.pulled(params.text_document.uri)

    @server.feature(lsp.SHUTDOWN)
    def on_shutdown(ls: JaxlintServer, params: Any = None) -> None:
        ls.shut_down = True
        ls.stop_linting()

    @server.feature(lsp.EXIT)
    def on_exit(ls: JaxlintServer, params: Any = None) -> None:
        ls.exit_code = 0 if ls.shut_down else 1
        ls.exited = True
        ls.stop_linting()

    return server
