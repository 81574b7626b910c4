"""Jupyter notebooks: cell by cell, magics kept in place, one module per notebook, through the real command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import libcst as cst
import pytest

from jaxlint import lint_paths, lint_source
from jaxlint.analysis import ModuleIndex
from jaxlint.notebook import Magic, code_cells, join_cells, magic_for, magics_for


def notebook(*cells: str | tuple[str, str], language: str = "python", as_lines: bool = True) -> str:
    """A notebook's JSON; a plain string is a code cell, ("markdown", text) another kind of cell."""
    raw = []
    for cell in cells:
        kind, text = ("code", cell) if isinstance(cell, str) else cell
        source: str | list[str] = text.splitlines(keepends=True) if as_lines else text
        entry = {"cell_type": kind, "metadata": {}, "source": source}
        if kind == "code":
            entry.update(execution_count=None, outputs=[])
        raw.append(entry)
    metadata = {"kernelspec": {"name": "k", "display_name": "k", "language": language}}
    return json.dumps({"cells": raw, "metadata": metadata, "nbformat": 4, "nbformat_minor": 5}, indent=1)


IMPORTS = "import jax\nimport jax.numpy as jnp\n"

# Findings in cells 3, 5 and 7 (markdown cells count, as in ruff and editors); magics before each finding.
THREE_CELLS = notebook(
    ("markdown", "# Training\nSome text.\n"),
    "%matplotlib inline\n!pip install -q jax\n" + IMPORTS,
    "%load_ext autoreload\n@jax.jit\ndef step(x):\n    %time y = x + 1\n    if x > 0:\n        return y\n    return x\n",
    ("markdown", "More text."),
    "%%time\n@jax.jit\ndef to_float(x):\n    return float(x)\n",
    "%%bash\necho 'not python (at all'\n",
    "%timeit -n 3 -r 1 step(jnp.ones(3)).block_until_ready()\nfiles = !ls\n@jax.jit\ndef where(x):\n    return jnp.nonzero(x)\n",
)
EXPECTED = [(3, 5, 8, "JAX101"), (5, 4, 12, "JAX102"), (7, 5, 12, "JAX104")]


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", *args], cwd=cwd, capture_output=True, text=True
    )


def finding_lines(result: subprocess.CompletedProcess) -> list[str]:
    """The text report's finding lines, without the closing "Found N findings." summary."""
    lines = result.stdout.splitlines()
    assert lines[-1].startswith("Found "), lines
    return lines[:-1]


@pytest.fixture
def three_cells(tmp_path: Path) -> Path:
    (tmp_path / "nb.ipynb").write_text(THREE_CELLS, encoding="utf-8")
    return tmp_path


def test_findings_in_three_cells_text(three_cells: Path) -> None:
    result = run("nb.ipynb", cwd=three_cells)
    assert result.returncode == 1, result.stderr
    lines = finding_lines(result)
    assert [line.split(": ", 1)[0] for line in lines] == [
        f"nb.ipynb:cell {cell}:{line}:{column}" for cell, line, column, _ in EXPECTED
    ]
    assert [line.split(": ", 1)[1].split()[0] for line in lines] == [code for *_, code in EXPECTED]


def test_findings_in_three_cells_json(three_cells: Path) -> None:
    result = run("--format", "json", "nb.ipynb", cwd=three_cells)
    rows = json.loads(result.stdout)
    assert [(r["cell"], r["line"], r["column"], r["code"]) for r in rows] == EXPECTED
    assert all(r["end_line"] >= r["line"] for r in rows)


def _raw_line_and_column(three_cells: Path, cell: int, row: int, column: int, code: str) -> tuple[int, int]:
    """Where the flagged code sits in the .ipynb's own text, found by hand: the JSON line holding the cell's
    `row`-th source line (this test's notebook writes one source line per JSON string), and the column of
    the flagged character in it (these lines hold no escapes before the flagged column)."""
    raw = (three_cells / "nb.ipynb").read_text(encoding="utf-8").splitlines()
    cells = json.loads(THREE_CELLS)["cells"]
    wanted = json.dumps(cells[cell - 1]["source"][row - 1])
    at = next(i for i, text in enumerate(raw) if text.strip().rstrip(",") == wanted)
    return at + 1, raw[at].index('"') + 1 + column


def test_findings_in_three_cells_sarif(three_cells: Path) -> None:
    """GitHub code scanning shows a region on the file as stored: the region is where the flagged code is in
    the .ipynb's JSON text; the cell and the line and column inside it are in the result's properties."""
    result = run("--format", "sarif", "nb.ipynb", cwd=three_cells)
    results = json.loads(result.stdout)["runs"][0]["results"]
    found = []
    for r, (cell, row, column, code) in zip(results, EXPECTED, strict=True):
        location = r["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "nb.ipynb"
        region = location["region"]
        expected = _raw_line_and_column(three_cells, cell, row, column, code)
        assert (region["startLine"], region["startColumn"]) == expected
        assert region["endLine"] >= region["startLine"] and region["endColumn"] >= 1
        props = r["properties"]
        found.append((props["cell"], props["cellLine"], props["cellColumn"], r["ruleId"]))
    assert found == EXPECTED


def test_findings_in_three_cells_github(three_cells: Path) -> None:
    result = run("--format", "github", "nb.ipynb", cwd=three_cells)
    lines = result.stdout.splitlines()
    assert len(lines) == 3
    for line, (cell, row, column, code) in zip(lines, EXPECTED, strict=True):
        # The annotation marks the .ipynb's own line; the message says cell:line:col.
        raw_line, raw_column = _raw_line_and_column(three_cells, cell, row, column, code)
        assert line.startswith(f"::error file=nb.ipynb,line={raw_line},col={raw_column},endLine=")
        assert f"title={code}" in line and f"::cell {cell}:{row}:{column}: " in line


def test_raw_positions_follow_escapes_and_single_string_sources(tmp_path: Path) -> None:
    """A cell whose source is one JSON string (not a list of lines), with escaped quotes and a non-ASCII
    character before the flagged code: the SARIF region still lands on the flagged characters."""
    cell = 'import jax\n\n@jax.jit\ndef f(x):\n    s = "\u00e9\\""; y = float(x)\n    return y\n'
    text = (
        '{"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": null,\n'
        f' "source": {json.dumps(cell)}}}],\n "metadata": {{}}, "nbformat": 4, "nbformat_minor": 5}}\n'
    )
    (tmp_path / "nb.ipynb").write_text(text, encoding="utf-8")
    rows = json.loads(run("--format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert [(r["cell"], r["line"], r["code"]) for r in rows] == [(1, 5, "JAX102")]
    result = json.loads(run("--format", "sarif", "nb.ipynb", cwd=tmp_path).stdout)["runs"][0]["results"][0]
    region = result["locations"][0]["physicalLocation"]["region"]
    raw = text.splitlines()[region["startLine"] - 1]
    assert region["endLine"] == region["startLine"] == 2
    assert raw[region["startColumn"] - 1 : region["endColumn"] - 1] == "float(x)"


def test_folders_are_searched_for_notebooks(three_cells: Path) -> None:
    (three_cells / "mod.py").write_text(IMPORTS + "\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n")
    checkpoints = three_cells / ".ipynb_checkpoints"
    checkpoints.mkdir()
    (checkpoints / "nb-checkpoint.ipynb").write_text(THREE_CELLS)
    findings = lint_paths([str(three_cells)])
    assert sorted({(Path(f.path).name, f.cell) for f in findings}) == [
        ("mod.py", None),
        ("nb.ipynb", 3),
        ("nb.ipynb", 5),
        ("nb.ipynb", 7),
    ]


def test_names_from_earlier_cells_are_known() -> None:
    text = notebook(
        "from jax import jit as J\nfrom jax import lax\n",
        "x = 1\n",
        "@J\ndef f(x):\n    while x > 0:\n        x = x - 1\n    return x\n",
    )
    findings = lint_source(text, "nb.ipynb")
    assert [(f.cell, f.line, f.code) for f in findings] == [(3, 3, "JAX101")]
    # The same cell alone knows no `J`: nothing to report.
    assert lint_source(notebook("@J\ndef f(x):\n    while x > 0:\n        x = x - 1\n"), "nb.ipynb") == []


def test_magics_do_not_break_parsing_or_shift_lines() -> None:
    cell = (
        "%config InlineBackend.figure_format = 'retina'\n"
        "!echo one \\\n"
        "  two\n"
        "jnp.ones?\n"
        "?jax.jit\n"
        "%env XLA_FLAGS=--xla_force_host_platform_device_count=2\n"
        "out = %sx ls\n"
        "res = %timeit -o -q f(jnp.ones(3)).block_until_ready()\n"
        "%time for i in range(3): f(i)\n"
        "@jax.jit\n"
        "def f(x):\n"
        "    !echo inside\n"
        "    return x[0] if x > 0 else x\n"
    )
    findings = lint_source(notebook(IMPORTS, cell), "nb.ipynb")
    assert [(f.cell, f.line, f.column, f.code) for f in findings] == [(2, 13, 20, "JAX101")]


def test_transform_keeps_lines_and_columns() -> None:
    cells = code_cells(
        notebook("%timeit -n 3 f(x)  # noqa: JAX403\nfiles = !ls\n    \n", "%%bash\nls (\n", "x?\ny = 1\n")
    )
    joined = join_cells(cells)
    assert joined.source.splitlines() == [
        "0;           f(x)  # noqa: JAX403",
        "files = None",
        "    ",
        "",
        "",
        "pass",
        "y = 1",
    ]
    assert [(m.line, m.cell, m.cell_line, m.kind, m.name) for m in joined.magics.values()] == [
        (1, 1, 1, "line", "timeit"),
        (2, 1, 2, "shell", ""),
        (4, 2, 1, "cell", "bash"),
        (6, 3, 1, "help", ""),
    ]
    assert joined.locate(5) == (2, 2) and joined.locate(7) == (3, 2)


def test_timing_magics_are_exposed_to_rules() -> None:
    """What JAX403 needs: `index.magics` by line, and `magic_for(index, node)` for the code a magic runs."""
    text = notebook(
        IMPORTS + "f = jax.jit(jnp.sin)\n", "%timeit f(jnp.ones(3))\n", "%%timeit -n 2\ny = f(2.0)\nz = 1\n"
    )
    joined = join_cells(code_cells(text))
    module = cst.parse_module(joined.source)
    index = ModuleIndex(module)
    index.magics = joined.magics
    calls = {}

    class Calls(cst.CSTVisitor):
        def visit_Call(self, node: cst.Call) -> None:
            calls.setdefault(cst.Module([]).code_for_node(node), node)

    module.visit(Calls())
    timeit = magic_for(index, calls["f(jnp.ones(3))"])
    assert isinstance(timeit, Magic)
    assert (timeit.kind, timeit.name, timeit.code, timeit.text, timeit.cell) == (
        "line",
        "timeit",
        "f(jnp.ones(3))",
        "%timeit f(jnp.ones(3))",
        2,
    )
    cell_magic = magic_for(index, calls["f(2.0)"])
    assert cell_magic is not None and (cell_magic.kind, cell_magic.name) == ("cell", "timeit")
    assert cell_magic.code == "y = f(2.0)\nz = 1"
    assert magic_for(index, calls["jax.jit(jnp.sin)"]) is None
    assert magics_for(index)[timeit.line] is timeit
    assert magics_for(ModuleIndex(cst.parse_module("x = 1\n"))) == {}


def test_the_engine_hands_magics_to_the_index(monkeypatch: pytest.MonkeyPatch) -> None:
    seen = []
    import jaxlint.engine as engine

    real = engine.ModuleIndex

    def spy(*args, **kwargs):
        index = real(*args, **kwargs)
        seen.append(index)
        return index

    monkeypatch.setattr(engine, "ModuleIndex", spy)
    lint_source(notebook(IMPORTS, "%timeit jnp.ones(3)\n"), "nb.ipynb")
    assert [m.name for m in seen[-1].magics.values()] == ["timeit"]


def test_noqa_in_a_cell() -> None:
    text = notebook(IMPORTS, "@jax.jit\ndef f(x):\n    if x > 0:  # noqa: JAX101\n        return float(x)\n")
    assert [(f.cell, f.line, f.code) for f in lint_source(text, "nb.ipynb")] == [(2, 4, "JAX102")]


def test_source_as_one_string_and_crlf() -> None:
    text = notebook(
        IMPORTS.replace("\n", "\r\n"), "@jax.jit\r\ndef f(x):\r\n    return float(x)", as_lines=False
    )
    assert [(f.cell, f.line, f.column) for f in lint_source(text, "nb.ipynb")] == [(2, 3, 12)]


def test_invalid_json_is_jax000_not_a_crash(tmp_path: Path) -> None:
    (tmp_path / "broken.ipynb").write_text('{"cells": [\n  {"cell_type": "code",, }\n]}\n')
    (tmp_path / "list.ipynb").write_text("[1, 2]\n")
    (tmp_path / "good.ipynb").write_text(THREE_CELLS)
    result = run("--format", "json", ".", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    rows = json.loads(result.stdout)
    broken = [(r["path"], r["line"], r["code"]) for r in rows if r["code"] == "JAX000"]
    assert broken == [("broken.ipynb", 2, "JAX000"), ("list.ipynb", 1, "JAX000")]
    assert "cannot parse notebook" in rows[0]["message"] and "cell" not in rows[0]
    assert len([r for r in rows if r["path"] == "good.ipynb"]) == 3  # the run went on


def test_syntax_error_in_a_cell_is_reported_at_its_cell() -> None:
    findings = lint_source(notebook(IMPORTS, "x = 1\n", "def f(:\n    pass\n"), "nb.ipynb")
    assert [(f.code, f.cell, f.line) for f in findings] == [("JAX000", 3, 1)]


def test_non_python_and_empty_notebooks_are_skipped() -> None:
    assert lint_source(notebook("library(jax)\nif (x) 1 else jnp\n", language="R"), "nb.ipynb") == []
    assert lint_source(notebook(("markdown", "# only text, jax")), "nb.ipynb") == []
    assert (
        lint_source(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), "e.ipynb")
        == []
    )


def test_stdin_notebook(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--stdin-filename", "nb.ipynb", "-"],
        input=THREE_CELLS,
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert result.returncode == 1
    assert result.stdout.splitlines()[0].startswith("nb.ipynb:cell 3:5:8: JAX101")


# -- issue 15 item 11 ---------------------------------------------------------------------------------------

KEY_REUSE = notebook(
    IMPORTS + "key = jax.random.key(0)\n",
    ("markdown", "Sampling."),
    "a = jax.random.normal(key, (3,))\n",
    "def broken(:\n    pass\n",
    "b = jax.random.uniform(key, (3,))\n",
)


def test_messages_cite_cell_and_line_not_lines_of_the_joined_module(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(KEY_REUSE)
    result = run("--format", "json", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    rows = {row["code"]: row for row in json.loads(result.stdout)}
    reuse = rows["JAX301"]
    assert (reuse["cell"], reuse["line"]) == (5, 1)
    assert "first consumed at cell 3, line 1 by jax.random.normal" in reuse["message"], reuse["message"]


def test_one_unparsable_cell_does_not_hide_the_others(tmp_path: Path) -> None:
    (tmp_path / "nb.ipynb").write_text(KEY_REUSE)
    result = run("nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    lines = finding_lines(result)
    assert lines[0].startswith("nb.ipynb:cell 4:1:"), lines
    assert "JAX000 cannot parse: invalid syntax" in lines[0], lines
    assert lines[1].startswith("nb.ipynb:cell 5:1:24: JAX301 key 'key' reused"), lines
    assert len(lines) == 2


def test_fix_says_plainly_that_notebooks_are_not_fixed(tmp_path: Path) -> None:
    source = notebook(IMPORTS + "x = jnp.zeros(3)\nx[0] = 1\n")
    (tmp_path / "nb.ipynb").write_text(source)
    listed = run("nb.ipynb", cwd=tmp_path)
    assert "[*]" not in listed.stdout + listed.stderr  # not fixable: no promise `--fix` will not keep
    for args in (("--fix",), ("--diff",)):
        result = run(*args, "nb.ipynb", cwd=tmp_path)
        assert "notebooks are not fixed: 1 fixable finding in nb.ipynb left as it is" in result.stderr, result
        assert (tmp_path / "nb.ipynb").read_text() == source


FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "rules"


@pytest.mark.parametrize(
    "name",
    [
        "JAX101_redefined",
        "JAX102_redefined",
        "JAX301_redefined",
        "JAX103_arrays_everywhere",
        "JAX101_arrays_everywhere",
        "JAX202_host_effects",
        "JAX403_context_timers",
        "JAX201_linen_call",
    ],
)
def test_redefinitions_in_notebook_cells(tmp_path: Path, name: str) -> None:
    """The redefinition fixtures (and others written in `# %%` parts), one notebook cell per part: a def, a
    `jax.jit(f, ...)` or a call belongs to the definition live in that cell, as in the script; the same
    findings, at their cells and lines."""
    from tests.rules.test_fixtures import expectations

    source = (FIXTURES / f"{name}.py").read_text(encoding="utf-8")
    cells: list[list[str]] = [[]]
    where: dict[int, tuple[int, int]] = {}  # fixture line -> (cell, line in the cell)
    for number, line in enumerate(source.splitlines(keepends=True), 1):
        if line.strip() == "# %%":
            cells.append([])
            continue
        cells[-1].append(line)
        where[number] = (len(cells), len(cells[-1]))
    assert len(cells) > 4
    (tmp_path / "nb.ipynb").write_text(notebook(*["".join(c) for c in cells]), encoding="utf-8")
    code = name.split("_")[0]
    result = run("--format", "json", "--select", code, "nb.ipynb", cwd=tmp_path)
    found = {(r["cell"], r["line"], r["column"], r["code"]) for r in json.loads(result.stdout)}
    expected = {(*where[line], column, c) for line, c, column in expectations(source)}
    assert found == expected, result.stderr


# -- issue 29: a notebook is a program (JAX501) ---------------------------------------------------------------


def test_a_notebook_is_a_program_for_float64_requests(tmp_path: Path) -> None:
    """A float64 request in a notebook is checked as in a script (a notebook is never imported), even when
    its only top-level call is `result = run()`; the same cells as a module are library code."""
    cells = (
        IMPORTS,
        "def run():\n    return jnp.zeros(3, dtype=jnp.float64)\n",
        "result = run()\n",
    )
    (tmp_path / "nb.ipynb").write_text(notebook(*cells))
    (tmp_path / "lib.py").write_text("".join(cells))
    result = run("--format", "json", "nb.ipynb", "lib.py", cwd=tmp_path)
    rows = [(r["path"], r["cell"], r["line"], r["code"]) for r in json.loads(result.stdout)]
    assert rows == [("nb.ipynb", 2, 2, "JAX501")], result.stderr
    x64 = notebook('import jax\njax.config.update("jax_enable_x64", True)\n', *cells[1:])
    (tmp_path / "nb.ipynb").write_text(x64)
    assert run("nb.ipynb", cwd=tmp_path).returncode == 0


# -- issue 30 item 8 ----------------------------------------------------------------------------------------


def test_a_cell_that_is_not_text_or_holds_a_nul_is_a_jax000_on_that_cell(tmp_path: Path) -> None:
    printing = "import jax\n@jax.jit\ndef f(x):\n    print(x)\n    return x\n"
    sources = [printing, 3, ["x = 1\n", None], "y = 1\nz = 2\x00\n", {"not": "text"}]
    raw = [{"cell_type": "code", "metadata": {}, "outputs": [], "source": s} for s in sources]
    (tmp_path / "nb.ipynb").write_text(
        json.dumps({"cells": raw, "metadata": {}, "nbformat": 4, "nbformat_minor": 5})
    )
    result = run("--format", "json", "nb.ipynb", cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    rows = [(r["code"], r["cell"], r["line"], r["column"]) for r in json.loads(result.stdout)]
    assert rows == [
        ("JAX201", 1, 4, 5),  # the other cells are linted still
        ("JAX000", 2, 1, 1),
        ("JAX000", 3, 1, 1),
        ("JAX000", 4, 2, 6),  # the NUL's own cell, line and column, not cell 1
        ("JAX000", 5, 1, 1),
    ]


def test_timeit_of_one_call_offers_to_wait_for_its_result(tmp_path: Path) -> None:
    """`%timeit f(x)` offers `%timeit jax.block_until_ready(f(x))` (safe: any pytree result); a timed line of
    several calls, or a `%%timeit` cell, gets no fix. With the fix typed in, nothing is left: it parses and a
    second lint offers nothing."""
    define = IMPORTS + "@jax.jit\ndef f(x):\n    return x * 2, x\n"
    timed = "x = jnp.ones(3)\n%timeit -n 3 f(x)\n%timeit y = f(x)\n%time f(x)[0] + f(x)[0]\n"
    (tmp_path / "nb.ipynb").write_text(notebook(define, timed, "%%timeit\nf(x)\n"))
    result = run("--format", "json", "nb.ipynb", cwd=tmp_path)
    rows = [(r["cell"], r["line"], r["code"], r["fix"], r["fix_safety"]) for r in json.loads(result.stdout)]
    wait = "jax.block_until_ready(f(x))"
    assert rows == [
        (2, 2, "JAX403", wait, "safe"),
        (2, 3, "JAX403", wait, "safe"),
        (2, 4, "JAX403", None, None),
        (3, 2, "JAX403", None, None),
    ], rows
    fixed = (
        "x = jnp.ones(3)\n%timeit -n 3 jax.block_until_ready(f(x))\n%timeit y = jax.block_until_ready(f(x))\n"
    )
    (tmp_path / "nb.ipynb").write_text(notebook(define, fixed))
    again = run("--format", "json", "nb.ipynb", cwd=tmp_path)
    assert again.returncode == 0 and json.loads(again.stdout) == [], again.stdout + again.stderr


def test_timeit_fix_needs_jax_to_refer_to(tmp_path: Path) -> None:
    cells = ("from jax import jit\n@jit\ndef f(x):\n    return x * 2\n", "%timeit f(1.0)\n")
    (tmp_path / "nb.ipynb").write_text(notebook(*cells))
    (row,) = json.loads(run("--format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    assert (row["code"], row["fix"]) == ("JAX403", None)
