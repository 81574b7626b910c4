"""The server's pure parts: minimal edits, noqa comments, settings, and static mode (no jax import)."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest

from jaxlint.server.noqa_comment import noqa_edit
from jaxlint.server.textdiff import apply_edits, split_lines, text_edits

from .conftest import ROOT


def test_text_edits_rebuild_the_new_text_and_never_split_a_line_end():
    rng = random.Random(7)
    pieces = ["a", "b", "\n", "\r\n", "\r", "é", "x = 1\n", "😋"]
    for _ in range(3000):
        old = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        new = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 10)))
        edits = text_edits(old, new)
        assert apply_edits(old, edits) == new
        lines = split_lines(old)
        for start, end, _ in edits:
            for line, column in (start, end):
                inside = line < len(lines) and column <= len(lines[line].rstrip("\r\n"))
                assert inside or (line, column) == (len(lines), 0)


def test_text_edits_are_minimal():
    old = "a = 1\nprint(x)\nb = 2\n"
    new = "a = 1\njax.debug.print(x)\nb = 2\n"
    assert text_edits(old, new) == [((1, 0), (1, 0), "jax.debug.")]
    assert text_edits(old, old) == []


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("    print(x)\n", "    print(x)  # noqa: JAX201\n"),
        ("    print(x)   \n", "    print(x)  # noqa: JAX201\n"),
        ("    print(x)  # why\n", "    print(x)  # why  # noqa: JAX201\n"),
        ("    print(x)  # noqa: JAX101\n", "    print(x)  # noqa: JAX101, JAX201\n"),
    ],
)
def test_noqa_edit(line, expected):
    text = "def f(x):\n" + line
    edit = noqa_edit(text, 1, "JAX201")
    assert edit is not None
    assert apply_edits(text, [edit]) == "def f(x):\n" + expected


@pytest.mark.parametrize(
    "text",
    [
        'print("""a\nb""")\n',  # the line ends inside a string: a comment there would change it
        "print(x, \\\n  y)\n",  # a backslash continuation
        "print(x)  # noqa\n",  # already suppresses everything
        "print(x)  # noqa: JAX2\n",  # already suppresses JAX201 (a code prefix, as `suppression` reads it)
    ],
)
def test_no_noqa_edit_where_a_comment_cannot_go(text):
    assert noqa_edit(text, 0, "JAX201") is None


def test_server_never_imports_jax():
    script = (
        "import sys\n"
        "from jaxlint.server.language_server import build_server\n"
        "from jaxlint.server.linting import config_for, lint_document\n"
        "build_server()\n"
        "source = 'import jax\\n@jax.jit\\ndef f(x):\\n    print(x)\\n'\n"
        "assert lint_document(source, 'm.py', config_for('m.py')).findings\n"
        "assert not [m for m in sys.modules if m == 'jax' or m.startswith('jax.')], 'jax was imported'\n"
    )
    subprocess.run([sys.executable, "-c", script], check=True, cwd=ROOT)


def test_server_subcommand_help(jaxlint_cmd):
    out = subprocess.run([*jaxlint_cmd, "server", "--help"], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0
    assert "language server" in out.stdout


def test_notebook_fix_stays_in_its_cell_around_magics():
    from jaxlint.server.linting import config_for, lint_document, notebook_fix
    from jaxlint.server.notebook_sync import notebook_json

    cells = [
        ("markdown", "# title"),
        ("code", "import jax\n"),
        ("code", "%matplotlib inline\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"),
    ]
    source = notebook_json(cells, {})
    config = config_for(str(ROOT / "nb.ipynb"))
    (finding,) = lint_document(source, "nb.ipynb", config).findings
    assert (finding.code, finding.cell, finding.line) == ("JAX201", 3, 4)
    (edit,) = notebook_fix(source, "nb.ipynb", config, finding)
    assert (edit.cell, edit.first, edit.count, edit.lines) == (3, 3, 1, ['    jax.debug.print("{}", x)'])
