"""End to end: pygls's LanguageClient drives `python -m jaxlint server` in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from lsprotocol import types as lsp

from jaxlint.server.textdiff import apply_edits

from .conftest import ROOT, codes, run

SOURCE = """\
import jax
import jax.numpy as jnp


@jax.jit
def f(x):
    if x > 0:
        x = x + 1
    print("x is", x)
    return jnp.sin(x)
"""


def _range(diagnostic: lsp.Diagnostic) -> tuple[int, int, int, int]:
    r = diagnostic.range
    return r.start.line, r.start.character, r.end.line, r.end.character


def _by_code(diagnostics: list[lsp.Diagnostic]) -> dict[str, lsp.Diagnostic]:
    return {str(d.code): d for d in diagnostics}


def _apply(text: str, uri: str, action: lsp.CodeAction) -> str:
    assert action.edit is not None and action.edit.changes is not None
    edits = [
        ((e.range.start.line, e.range.start.character), (e.range.end.line, e.range.end.character), e.new_text)
        for e in action.edit.changes[uri]
    ]
    return apply_edits(text, edits)


def _code_actions(session, uri: str, line: int, character: int, only=None):
    here = lsp.Position(line, character)
    return session.client.text_document_code_action_async(
        lsp.CodeActionParams(
            lsp.TextDocumentIdentifier(uri),
            lsp.Range(here, here),
            lsp.CodeActionContext(diagnostics=[], only=only),
        )
    )


def test_diagnostics_fix_hover_change_and_shutdown(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        result = await session.start()
        assert result.server_info.name == "jaxlint"
        assert result.capabilities.notebook_document_sync is not None
        uri = session.open(tmp_path / "model.py", SOURCE)
        found = _by_code(await session.diagnostics(uri, 1))
        assert sorted(found) == ["JAX101", "JAX201"]
        assert _range(found["JAX101"]) == (6, 7, 6, 12)  # `x > 0`
        assert _range(found["JAX201"]) == (8, 4, 8, 20)  # `print("x is", x)`
        assert found["JAX201"].severity == lsp.DiagnosticSeverity.Error
        assert found["JAX201"].source == "jaxlint"
        assert found["JAX201"].code_description.href.endswith("docs/rules.md#jax201")

        actions = await _code_actions(session, uri, 8, 6)
        fix = next(a for a in actions if a.title.startswith("jaxlint: fix JAX201"))
        assert fix.kind == lsp.CodeActionKind.QuickFix
        assert fix.diagnostics and str(fix.diagnostics[0].code) == "JAX201"
        (edit,) = fix.edit.changes[uri]
        assert edit.range.start.line == edit.range.end.line == 8  # a minimal edit, not the whole file
        fixed = _apply(SOURCE, uri, fix)
        assert '    jax.debug.print("x is {}", x)\n' in fixed
        assert fixed.replace('jax.debug.print("x is {}", x)', 'print("x is", x)') == SOURCE
        assert ("(unsafe fix)" in fix.title) == (not fix.is_preferred)

        noqa = next(a for a in actions if "noqa" in a.title and "JAX201" in a.title)
        assert _apply(SOURCE, uri, noqa).splitlines()[8] == '    print("x is", x)  # noqa: JAX201'

        hover = await session.client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(6, 9))
        )
        assert hover is not None and hover.contents.kind == lsp.MarkupKind.Markdown
        assert "JAX101 traced-control-flow" in hover.contents.value
        for section in ("What it does", "Why is this bad", "Use instead"):
            assert section in hover.contents.value
        nothing = await session.client.text_document_hover_async(
            lsp.HoverParams(lsp.TextDocumentIdentifier(uri), lsp.Position(0, 2))
        )
        assert nothing is None

        # Delete the print line: JAX201 goes, JAX101 stays.
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
                [
                    lsp.TextDocumentContentChangePartial(
                        range=lsp.Range(lsp.Position(8, 0), lsp.Position(9, 0)), text=""
                    )
                ],
            )
        )
        assert codes(await session.diagnostics(uri, 2)) == ["JAX101"]
        assert await session.stop() == 0

    run(scenario)


def _cli_findings(path, cells) -> list[dict]:
    """What `jaxlint --format json` reports for the same notebook saved as a file."""
    notebook = {
        "cells": [
            {
                "cell_type": "code" if kind == lsp.NotebookCellKind.Code else "markdown",
                "metadata": {},
                "source": text,
            }
            for kind, text in cells
        ],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path.write_text(json.dumps(notebook))
    out = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        cwd=path.parent,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    return json.loads(out.stdout)


def test_notebook_cells_get_their_own_diagnostics(session_factory, tmp_path):
    cells = [
        (lsp.NotebookCellKind.Markup, "markdown", "# A notebook\n\nwith markdown first"),
        (lsp.NotebookCellKind.Code, "python", "import jax\n"),
        (lsp.NotebookCellKind.Code, "python", "%matplotlib inline\nx = 1\n"),
        (lsp.NotebookCellKind.Code, "python", "@jax.jit\ndef f(x):\n    print(x)\n    return x\n"),
    ]
    notebook_uri = (tmp_path / "nb.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{tmp_path / 'nb.ipynb'}#cell{i}" for i in range(len(cells))]

    async def scenario():
        session = session_factory()
        await session.start()
        session.client.notebook_document_did_open(
            lsp.DidOpenNotebookDocumentParams(
                notebook_document=lsp.NotebookDocument(
                    uri=notebook_uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[
                        lsp.NotebookCell(kind, uri)
                        for (kind, _, _), uri in zip(cells, cell_uris, strict=True)
                    ],
                ),
                cell_text_documents=[
                    lsp.TextDocumentItem(uri, language, 1, text)
                    for (_, language, text), uri in zip(cells, cell_uris, strict=True)
                ],
            )
        )
        (print_diag,) = await session.diagnostics(cell_uris[3])
        assert str(print_diag.code) == "JAX201"
        assert _range(print_diag) == (2, 4, 2, 12)  # line 3 of the fourth cell, as the CLI numbers it
        (cli_finding,) = _cli_findings(tmp_path / "nb.ipynb", [(kind, text) for kind, _, text in cells])
        assert (cli_finding["cell"], cli_finding["line"], cli_finding["column"]) == (4, 3, 5)
        actions = await _code_actions(session, cell_uris[3], 2, 6)
        fix = next(a for a in actions if a.title.startswith("jaxlint: fix JAX201"))
        assert list(fix.edit.changes) == [cell_uris[3]]  # the edit stays in its cell
        assert _apply(cells[3][2], cell_uris[3], fix) == cells[3][2].replace(
            "print(x)", 'jax.debug.print("{}", x)'
        )
        assert await session.diagnostics(cell_uris[1]) == []
        assert await session.diagnostics(cell_uris[2]) == []

        # Fix the cell by editing it: its diagnostics go away.
        session.client.notebook_document_did_change(
            lsp.DidChangeNotebookDocumentParams(
                notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=2, uri=notebook_uri),
                change=lsp.NotebookDocumentChangeEvent(
                    cells=lsp.NotebookDocumentCellChanges(
                        text_content=[
                            lsp.NotebookDocumentCellContentChanges(
                                document=lsp.VersionedTextDocumentIdentifier(version=2, uri=cell_uris[3]),
                                changes=[
                                    lsp.TextDocumentContentChangePartial(
                                        range=lsp.Range(lsp.Position(2, 4), lsp.Position(2, 9)),
                                        text="jax.debug.print",
                                    )
                                ],
                            )
                        ]
                    )
                ),
            )
        )
        assert await session.diagnostics(cell_uris[3], 2) == []

        noqa_cell = "@jax.jit\ndef g(x):\n    print(x)\n"
        actions_session = session  # the noqa action works in cells too
        session.client.notebook_document_did_change(
            lsp.DidChangeNotebookDocumentParams(
                notebook_document=lsp.VersionedNotebookDocumentIdentifier(version=3, uri=notebook_uri),
                change=lsp.NotebookDocumentChangeEvent(
                    cells=lsp.NotebookDocumentCellChanges(
                        text_content=[
                            lsp.NotebookDocumentCellContentChanges(
                                document=lsp.VersionedTextDocumentIdentifier(version=3, uri=cell_uris[2]),
                                changes=[lsp.TextDocumentContentChangeWholeDocument(text=noqa_cell)],
                            )
                        ]
                    )
                ),
            )
        )
        assert codes(await session.diagnostics(cell_uris[2], 3)) == ["JAX201"]
        actions = await _code_actions(actions_session, cell_uris[2], 2, 6)
        (noqa,) = [a for a in actions if "noqa" in a.title]
        assert _apply(noqa_cell, cell_uris[2], noqa).splitlines()[2] == "    print(x)  # noqa: JAX201"
        assert await session.stop() == 0

    run(scenario)


def test_syntax_error_keeps_other_lines_and_adds_jax000(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101", "JAX201"]
        broken = SOURCE + "def g(:\n"
        session.client.text_document_did_change(
            lsp.DidChangeTextDocumentParams(
                lsp.VersionedTextDocumentIdentifier(version=2, uri=uri),
                [lsp.TextDocumentContentChangeWholeDocument(text=broken)],
            )
        )
        found = _by_code(await session.diagnostics(uri, 2))
        assert sorted(found) == ["JAX000", "JAX101", "JAX201"]
        assert found["JAX000"].range.start.line == 10
        assert _range(found["JAX101"]) == (6, 7, 6, 12)
        assert await session.stop() == 0

    run(scenario)


def test_project_config_and_client_settings(session_factory, tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.jaxlint]\nignore = ["JAX201"]\n')

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101"]  # the file's ignore applies
        session.client.workspace_did_change_configuration(
            lsp.DidChangeConfigurationParams(settings={"jaxlint": {"select": ["JAX201"]}})
        )
        # As on the command line, a select from the client replaces the file's select and ignore.
        await session.wait_for(
            lambda: codes(session.published[uri][-1].diagnostics) == ["JAX201"], "JAX201 alone"
        )
        assert await session.stop() == 0

    run(scenario)


def test_bad_config_is_reported_and_the_server_lives_on(session_factory, tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\nno-such-setting = 1\n")

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        assert await session.diagnostics(uri, 1) == []
        assert any("no-such-setting" in message for message in session.shown)
        (tmp_path / "pyproject.toml").write_text("[tool.jaxlint]\n")
        other = session.open(tmp_path / "other.py", SOURCE)
        assert codes(await session.diagnostics(other, 1)) == ["JAX101", "JAX201"]
        assert await session.stop() == 0

    run(scenario)


# Put on the PYTHONPATH of the server and its lint process: the linter raises on a text with BOOM in it, and
# its process dies (as in a crash of native code) on one with DIE in it.
FAULTY_LINTER = """
import os
import jaxlint.engine as engine

real = engine.lint_text

def lint_text(source, *args, **kwargs):
    if "BOOM" in source:
        raise RuntimeError("lint exploded")
    if "DIE" in source:
        os._exit(3)
    return real(source, *args, **kwargs)

engine.lint_text = lint_text
"""


def test_a_crash_while_linting_is_logged_and_never_kills_the_server(session_factory, tmp_path):
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(FAULTY_LINTER)

    async def scenario():
        session = session_factory(path=[hooks])
        await session.start()
        bad = session.open(tmp_path / "bad.py", "import jax\nBOOM = 1\n")
        await session.wait_for(
            lambda: any("lint exploded" in m for m in session.logs), "the crash in the log"
        )
        assert bad not in session.published
        dead = session.open(tmp_path / "dead.py", "import jax\nDIE = 1\n")
        await session.wait_for(
            lambda: any("lint process ended" in m and dead in m for m in session.logs), "the death in the log"
        )
        assert dead not in session.published
        good = session.open(tmp_path / "good.py", SOURCE)
        assert codes(await session.diagnostics(good, 1)) == ["JAX101", "JAX201"]
        assert await session.stop() == 0

    run(scenario)


def test_fix_all_applies_the_safe_fixes_only(session_factory, tmp_path):
    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(tmp_path / "model.py", SOURCE)
        await session.diagnostics(uri, 1)
        actions = await _code_actions(session, uri, 0, 0, only=["source.fixAll"])
        (fix_all,) = actions
        assert fix_all.kind == "source.fixAll.jaxlint"
        fixed = _apply(SOURCE, uri, fix_all)
        assert 'jax.debug.print("x is {}", x)' in fixed
        assert "if x > 0:" in fixed  # JAX101 has no fix
        assert all(not a.kind.startswith("quickfix") for a in actions)
        assert await session.stop() == 0

    run(scenario)


def test_timeit_fix_edits_the_magic_line_of_its_cell(session_factory, tmp_path):
    """JAX403's fix of `%timeit f(x)` is offered in the cell: the magic's text stays, its code is wrapped."""
    cells = [
        (lsp.NotebookCellKind.Code, "python", "import jax\n@jax.jit\ndef f(x):\n    return x * 2\n"),
        (lsp.NotebookCellKind.Code, "python", "x = 1.0\n%timeit -n 3 f(x)  # warm\n"),
    ]
    notebook_uri = (tmp_path / "nb.ipynb").as_uri()
    cell_uris = [f"vscode-notebook-cell:{tmp_path / 'nb.ipynb'}#cell{i}" for i in range(len(cells))]

    async def scenario():
        session = session_factory()
        await session.start()
        session.client.notebook_document_did_open(
            lsp.DidOpenNotebookDocumentParams(
                notebook_document=lsp.NotebookDocument(
                    uri=notebook_uri,
                    notebook_type="jupyter-notebook",
                    version=1,
                    cells=[
                        lsp.NotebookCell(kind, uri)
                        for (kind, _, _), uri in zip(cells, cell_uris, strict=True)
                    ],
                ),
                cell_text_documents=[
                    lsp.TextDocumentItem(uri, language, 1, text)
                    for (_, language, text), uri in zip(cells, cell_uris, strict=True)
                ],
            )
        )
        (timing,) = await session.diagnostics(cell_uris[1])
        assert str(timing.code) == "JAX403"
        actions = await _code_actions(session, cell_uris[1], 1, 14)
        fix = next(a for a in actions if a.title.startswith("jaxlint: fix JAX403"))
        assert list(fix.edit.changes) == [cell_uris[1]]
        assert (
            _apply(cells[1][2], cell_uris[1], fix)
            == "x = 1.0\n%timeit -n 3 jax.block_until_ready(f(x))  # warm\n"
        )
        assert await session.stop() == 0

    run(scenario)
