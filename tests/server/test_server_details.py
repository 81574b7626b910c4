"""Issue 30 item 8 (notebooks with a broken cell) and issue 28 item 3 (settings errors, hover on `# noqa`,
pull diagnostics, kept diagnostics following edits), through pygls's client and the real server process."""

from __future__ import annotations

import asyncio

from lsprotocol import types as lsp

from .conftest import TIMEOUT, codes, run
from .test_language_server import SOURCE, _apply, _range

PRINTING = "import jax\n\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
FIXED = PRINTING.replace("print(x)", 'jax.debug.print("{}", x)')
BROKEN = "def g(:\n    pass\n"


class Notebook:
    """A notebook of code cells opened in a session, and edits to its cells."""

    def __init__(self, session, tmp_path, cells: list[str]) -> None:
        self.session = session
        self.uri = (tmp_path / "nb.ipynb").as_uri()
        self.cells = [f"vscode-notebook-cell:{tmp_path / 'nb.ipynb'}#cell{i}" for i in range(len(cells))]
        self.version = 1
        session.client.notebook_document_did_open(
            lsp.DidOpenNotebookDocumentParams(
                notebook_document=lsp.NotebookDocument(
                    uri=self.uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[lsp.NotebookCell(lsp.NotebookCellKind.Code, uri) for uri in self.cells],
                ),
                cell_text_documents=[
                    lsp.TextDocumentItem(uri, "python", 1, text)
                    for uri, text in zip(self.cells, cells, strict=True)
                ],
            )
        )

    def replace(self, index: int, text: str) -> int:
        """Replace the text of cell `index`; the cell's new version."""
        self.version += 1
        self.session.client.notebook_document_did_change(
            lsp.DidChangeNotebookDocumentParams(
                notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri),
                change=lsp.NotebookDocumentChangeEvent(
                    cells=lsp.NotebookDocumentCellChanges(
                        text_content=[
                            lsp.NotebookDocumentCellContentChanges(
                                document=lsp.VersionedTextDocumentIdentifier(
                                    version=self.version, uri=self.cells[index]
                                ),
                                changes=[lsp.TextDocumentContentChangeWholeDocument(text=text)],
                            )
                        ]
                    )
                ),
            )
        )
        return self.version

    async def codes(self, index: int, version: int | None = None) -> list[str]:
        return codes(await self.session.diagnostics(self.cells[index], version))


def test_a_broken_cell_hides_no_finding_of_the_other_cells(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        notebook = Notebook(session, tmp_path, [PRINTING, BROKEN])
        assert await notebook.codes(0) == ["JAX201"]  # as the CLI reports it
        assert await notebook.codes(1) == ["JAX000"]
        # Its fix is offered too: the notebook is linted for the fix as it is for the diagnostics.
        here = lsp.Position(4, 6)
        request = session.client.text_document_code_action_async(
            lsp.CodeActionParams(
                lsp.TextDocumentIdentifier(notebook.cells[0]),
                lsp.Range(here, here),
                lsp.CodeActionContext(diagnostics=[]),
            )
        )
        actions = await asyncio.wait_for(request, TIMEOUT)
        (fix,) = [a for a in actions if a.title.startswith("jaxlint: fix JAX201")]
        assert _apply(PRINTING, notebook.cells[0], fix) == FIXED
        assert await session.stop() == 0

    run(scenario)


def test_fixing_a_cell_while_another_is_broken_clears_its_diagnostic(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        notebook = Notebook(session, tmp_path, [PRINTING, "y = 1\n"])
        assert await notebook.codes(0) == ["JAX201"]
        assert await notebook.codes(1) == []
        version = notebook.replace(1, BROKEN)
        assert await notebook.codes(1, version) == ["JAX000"]
        assert await notebook.codes(0) == ["JAX201"]
        version = notebook.replace(0, FIXED)
        assert await notebook.codes(0, version) == []  # not the JAX201 of the last notebook that parsed
        assert await notebook.codes(1) == ["JAX000"]
        assert await session.stop() == 0

    run(scenario)


def test_a_nul_byte_is_reported_on_its_own_cell(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        notebook = Notebook(session, tmp_path, [PRINTING, "y = 1\nz = 2\x00\n"])
        (nul,) = await session.diagnostics(notebook.cells[1])
        assert str(nul.code) == "JAX000"
        assert nul.range.start.line == 1
        assert await notebook.codes(0) == ["JAX201"]
        assert await session.stop() == 0

    run(scenario)


def test_invalid_client_settings_are_shown_and_logged(session_factory, tmp_path):
    async def scenario():
        session = session_factory(options={"jaxlint": {"select": ["JAX8"]}})
        await session.start()
        await session.wait_for(lambda: any("JAX8" in m for m in session.shown), "a message naming JAX9")
        await session.wait_for(lambda: any("JAX8" in m for m in session.logs), "a log line naming JAX9")
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert await session.diagnostics(uri, 1) == []  # as the CLI lints nothing with it
        session.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"jaxlint": {"select": ["JAX2"]}})
        )
        await session.wait_for(lambda: codes(session.published[uri][-1].diagnostics) == ["JAX201"], "JAX201")
        session.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"jaxlint": {"ignore": ["NOPE1"]}})
        )
        await session.wait_for(lambda: any("NOPE1" in m for m in session.shown), "a message naming NOPE1")
        assert await session.stop() == 0

    run(scenario)


def test_hover_on_a_noqa_code_names_its_rule(session_factory, tmp_path):
    text = SOURCE.replace('print("x is", x)', 'print("x is", x)  # noqa: JAX101, JAX201')
    line = text.splitlines().index('    print("x is", x)  # noqa: JAX101, JAX201')

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", text)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101"]
        at = text.splitlines()[line].index("JAX201") + 2

        async def hover(character: int):
            request = session.client.text_document_hover_async(
                lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(line, character))
            )
            return await asyncio.wait_for(request, TIMEOUT)

        found = await hover(at)
        assert found is not None
        assert "JAX201 print-in-transform" in found.contents.value
        assert "JAX101" not in found.contents.value
        assert await hover(text.splitlines()[line].index("noqa")) is None  # the word, not a code
        assert await session.stop() == 0

    run(scenario)


def test_pull_diagnostics(session_factory, tmp_path):
    capabilities = lsp.ClientCapabilities(
        text_document=lsp.TextDocumentClientCapabilities(diagnostic=lsp.DiagnosticClientCapabilities())
    )

    async def scenario():
        session = session_factory(capabilities=capabilities)
        result = await session.start()
        assert result.capabilities.diagnostic_provider is not None
        uri = session.open(tmp_path / "model.py", SOURCE)
        request = session.client.text_document_diagnostic_async(
            lsp.DocumentDiagnosticParams(text_document=lsp.TextDocumentIdentifier(uri))
        )
        report = await asyncio.wait_for(request, TIMEOUT)
        assert report.kind == "full"
        assert codes(report.items) == ["JAX101", "JAX201"]
        assert uri not in session.published  # pulled, not pushed as well (editors would show both)
        assert await session.stop() == 0

    run(scenario)


def test_kept_diagnostics_move_with_lines_inserted_above_them(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        found = {str(d.code): d for d in await session.diagnostics(uri, 1)}
        assert _range(found["JAX101"]) == (6, 7, 6, 12)
        # Two lines inserted at the top and a broken line at the end, in one change.
        broken = "# one\n# two\n" + SOURCE + "def g(:\n"
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
                [lsp.TextDocumentContentChangeWholeDocument(text=broken)],
            )
        )
        found = {str(d.code): d for d in await session.diagnostics(uri, 2)}
        assert sorted(found) == ["JAX000", "JAX101", "JAX201"]
        assert _range(found["JAX101"]) == (8, 7, 8, 12)
        assert _range(found["JAX201"]) == (10, 4, 10, 20)
        # An incremental edit that removes a line above them moves them up, while the text stays broken.
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=3, uri=uri),
                [
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(0, 0), lsp.Position(1, 0)), text=""
                    )
                ],
            )
        )
        found = {str(d.code): d for d in await session.diagnostics(uri, 3)}
        assert _range(found["JAX101"]) == (7, 7, 7, 12)
        # An edit of the flagged line itself drops its kept diagnostic (it may no longer hold).
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=4, uri=uri),
                [
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(7, 7), lsp.Position(7, 12)), text="x"
                    )
                ],
            )
        )
        assert codes(await session.diagnostics(uri, 4)) == ["JAX000", "JAX201"]
        assert await session.stop() == 0

    run(scenario)
