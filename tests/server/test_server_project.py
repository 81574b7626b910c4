"""Issue 28 items 1 and 2 through pygls's client and the real server process: a document gets the facts of
its whole project (the same findings as `jaxlint FILE`, re-checked when an open module it depends on is
edited), and incremental editing gives the findings a full lint gives (random edits replayed, compared with
the command on the final text)."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
from pathlib import Path

from lsprotocol import types as lsp

from tests.test_project import PKG_MODEL, PKG_TRAIN

from .conftest import ROOT, run
from .test_language_server import _apply, _code_actions

# The two-module project of the every-face test (issue 28 item 1).
MODEL, TRAIN = PKG_MODEL, PKG_TRAIN


def cli_rows(path: Path, cwd: Path) -> list[tuple[int, int, int, int, str, str]]:
    """`jaxlint --format json PATH` (the real command): (line, column, end line, end column, code, message)."""
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "json", str(path)],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stdout + result.stderr
    rows = json.loads(result.stdout)
    return sorted(
        (r["line"], r["column"], r["end_line"], r["end_column"], r["code"], r["message"]) for r in rows
    )


def server_rows(diagnostics: list[lsp.Diagnostic]) -> list[tuple[int, int, int, int, str, str]]:
    return sorted(
        (
            d.range.start.line + 1,
            d.range.start.character + 1,
            d.range.end.line + 1,
            d.range.end.character + 1,
            str(d.code),
            d.message,
        )
        for d in diagnostics
    )


def _pkg(root: Path) -> tuple[Path, Path]:
    (root / ".git").mkdir()
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "model.py").write_text(MODEL)
    (root / "pkg" / "train.py").write_text(TRAIN)
    return root / "pkg" / "model.py", root / "pkg" / "train.py"


def _change(session, uri: str, version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> None:
    session.client.text_document_did_change(
        lsp.DidChangeTextDocumentParams(
            lsp.VersionedTextDocumentIdentifier(version=version, uri=uri),
            [
                lsp.TextDocumentContentChangePartial(
                    range=lsp.Range(lsp.Position(*start), lsp.Position(*end)), text=text
                )
            ],
        )
    )


def test_the_server_gives_a_module_the_facts_of_its_project(session_factory, tmp_path):
    """model.py opened alone: the findings `jaxlint pkg/model.py` gives (JAX101 and JAX201 need train.py's
    jitted step), its quick fix works; an unsaved edit of the open train.py (the step no longer jitted)
    re-checks model.py, which then shows what the command gives with that train.py on disk."""
    model, train = _pkg(tmp_path)
    expected = cli_rows(model, tmp_path)
    assert [(row[0], row[4]) for row in expected] == [(7, "JAX101"), (14, "JAX201")]

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(model, MODEL)
        assert server_rows(await session.diagnostics(uri, 1)) == expected
        actions = await _code_actions(session, uri, 13, 6)
        fixes = [a for a in actions if a.title.startswith("jaxlint: fix JAX201")]
        assert len(fixes) == 1
        assert '    jax.debug.print("{}", x)\n' in _apply(MODEL, uri, fixes[0])

        train_uri = session.open(train, TRAIN)
        await session.diagnostics(train_uri, 1)
        published = len(session.published[uri])
        _change(session, train_uri, 2, (7, 0), (8, 0), "")  # drop `@jax.jit` (line 8)
        await session.wait_for(lambda: len(session.published[uri]) > published, "model.py re-checked")
        train.write_text(TRAIN.replace("@jax.jit\n", ""))
        after = cli_rows(model, tmp_path)
        assert after != expected
        assert server_rows(await session.diagnostics(uri)) == after
        assert await session.stop() == 0

    run(scenario)


# A module with findings in several functions (traced branches, prints, keys) and clean code between them.
EDITED = '''import jax
import jax.numpy as jnp


@jax.jit
def step(params, x, key):
    """A jitted step."""
    y = jnp.tanh(params["w"] @ x)
    if y.sum() > 0:
        y = y * 2.0
    noise = jax.random.normal(key, y.shape)
    print("y is", y)
    return y + noise, jax.random.normal(key, y.shape)


def helper(a, b):
    c = a + b
    return [c, c * 2]


# a comment between functions

@jax.jit
def other(x, flag):
    for i in range(3):
        x = x + i
    if flag:
        return x
    return -x


class Model:
    def __call__(self, x):
        return jnp.sum(x)


def loop(key):
    out = []
    for _ in range(3):
        out.append(jax.random.uniform(key))
    return out
'''

_PIECES = [
    "x",
    " ",
    "\n",
    "(",
    ")",
    ":",
    "'",
    "#",
    "    ",
    "    z = 1\n",
    "# note\n",
    "@jax.jit\n",
    "def",
    '"""',
]


def _random_edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """(start offset, end offset, new text): a character or line inserted or deleted, or a line copied."""
    kind = rng.random()
    at = rng.randrange(len(text) + 1)
    if kind < 0.4:
        return at, at, rng.choice(_PIECES)
    if kind < 0.7:
        return at, min(len(text), at + rng.randrange(1, 4)), ""
    starts = [0] + [i + 1 for i, c in enumerate(text) if c == "\n"]
    line = rng.randrange(len(starts))
    begin = starts[line]
    end = starts[line + 1] if line + 1 < len(starts) else len(text)
    if kind < 0.85:
        return begin, end, ""
    return (
        begin,
        begin,
        text[starts[rng.randrange(len(starts) - 1)] : starts[rng.randrange(len(starts))]] or "\n",
    )


def _position(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


def _parses(text: str) -> bool:
    try:
        compile(text, "m.py", "exec", dont_inherit=True, flags=0x400)
    except (SyntaxError, ValueError):
        return False
    return True


def test_random_edits_give_the_findings_of_a_full_lint(session_factory, tmp_path):
    """Seeded random edits (characters and lines inserted and deleted, breaking and repairing the syntax:
    a broken text is mostly undone) sent as incremental changes, each waited for; at a text that parses after
    every 10 edits, and at the end, the published diagnostics are what `jaxlint` gives the text."""
    path = tmp_path / "mod.py"
    path.write_text(EDITED)
    (tmp_path / ".git").mkdir()

    async def scenario():
        session = session_factory()
        await session.start()
        uri = session.open(path, EDITED)
        await session.diagnostics(uri, 1)
        rng = random.Random(28)
        text, version, history, compared, last = EDITED, 1, [EDITED], 0, 0
        for step in range(140):
            undo = not _parses(text) and len(history) > 1 and (step >= 120 or rng.random() < 0.7)
            if undo:  # back to the text before, sent as one change of the whole text
                history.pop()
                start, end, new = 0, len(text), history[-1]
            else:
                start, end, new = _random_edit(rng, text)
            edited = text[:start] + new + text[end:]
            version += 1
            _change(session, uri, version, _position(text, start), _position(text, end), new)
            text = edited
            if not undo:
                history.append(text)
            diagnostics = await session.diagnostics(uri, version)
            if _parses(text) and (step - last >= 10 or step >= 120):
                path.write_text(text)
                assert server_rows(diagnostics) == cli_rows(path, tmp_path), (step, text)
                compared, last = compared + 1, step
                if step >= 120:
                    break
        assert compared >= 5 and step >= 120
        assert await session.stop() == 0

    run(scenario)
