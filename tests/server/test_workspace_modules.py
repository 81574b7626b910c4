"""Opening a project in an editor runs none of its code (issue 39, item 1): a project module named like one
of the standard library's or jaxlint's dependencies is never imported by the server, its lint process or
the workers they start, whichever way the editor starts the server."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from lsprotocol import types as lsp

from .conftest import codes, run
from .test_language_server import SOURCE, _code_actions

# `python -m jaxlint server` puts the working directory (the project) first on sys.path; a console script
# (`jaxlint server`), the script's own folder.
CONSOLE_SCRIPT = "import sys\nfrom jaxlint.cli import main\nsys.exit(main())\n"


def _command(kind: str, scripts: Path) -> list[str]:
    if kind == "python -m":
        return [sys.executable, "-m", "jaxlint", "server"]
    (scripts / "jaxlint").write_text(CONSOLE_SCRIPT)
    return [sys.executable, str(scripts / "jaxlint"), "server"]


@pytest.mark.parametrize("kind", ["python -m", "console script"])
def test_the_server_imports_no_module_of_the_project(session_factory, tmp_path, planted_modules, kind):
    scripts = tmp_path / "bin"
    scripts.mkdir()
    command = _command(kind, scripts)
    planted_modules.plant(tmp_path)
    (tmp_path / "helpers.py").write_text("import jax\n\n\ndef g(x):\n    return x\n")
    text = "from helpers import g\n" + SOURCE

    async def scenario():
        session = session_factory(command=command)
        await session.start()
        uri = session.open(tmp_path / "model.py", text)
        assert codes(await session.diagnostics(uri, 1)) == ["JAX101", "JAX201"]
        # The print's quick fix, computed by the lint process.
        actions = await _code_actions(session, uri, 9, 6)
        assert any(a.title.startswith("jaxlint: fix JAX201") for a in actions)
        session.client.text_document_did_save(lsp.DidSaveTextDocumentParams(lsp.TextDocumentIdentifier(uri)))
        assert await session.stop() == 0

    run(scenario)
    assert planted_modules.ran(tmp_path) == []
