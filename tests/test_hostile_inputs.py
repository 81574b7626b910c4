"""Long operator chains and long files (issue 30, items 1, 4 and 9), through the real `jaxlint` and `flake8`.

The inputs come from `tools/hostile_inputs.py`: valid Python that crashed libcst's native parser (SIGSEGV),
stalled it for minutes, or was refused as "nesting too deep" by jaxlint's own walks.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))

from hostile_inputs import CHAINS, HEADER, TRACED_IF_LINE, chain, long_module  # noqa: E402

GOOD = "import jax\n\n@jax.jit\ndef f(x):\n    if x > 0:\n        return x\n    return -x\n"

# Sizes from the issue: each killed the process inside libcst (or, for calls and subscripts, ran over 120 s).
CRASHED = {
    "and": 8000,
    "plus": 8000,
    "attribute": 8000,
    "lambda": 5000,
    "not": 10000,
    "minus": 10000,
    "power": 10000,
    "ternary": 10000,
    "elif": 10000,
    "call": 10000,
    "subscript": 10000,
}
# Chains jaxlint analyses: each kind at 1,000 links, the cheap ones (linear in libcst) at 5,000.
ANALYSED = {kind: 5000 if kind in ("and", "or", "elif", "compare") else 1000 for kind in CHAINS}


def env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT)}


def jaxlint_json(*paths: Path, cwd: Path) -> dict[str, list[dict]]:
    result = subprocess.run(
        [sys.executable, "-m", "jaxlint", "--no-cache", "--format", "json", *map(str, paths)],
        capture_output=True,
        cwd=cwd,
        env=env(),
        timeout=120,
    )
    assert result.returncode in (0, 1), (result.returncode, result.stderr.decode()[-2000:])
    found: dict[str, list[dict]] = {}
    for finding in json.loads(result.stdout):
        found.setdefault(Path(finding["path"]).name, []).append(finding)
    return found


def traced_if_line(kind: str, n: int) -> int:
    """The line of `hostile_inputs.TRACED_IF`'s `if` in `chain(kind, n)`."""
    return (HEADER + CHAINS[kind](n)).count("\n") + TRACED_IF_LINE


def write_chains(folder: Path, sizes: dict[str, int]) -> list[Path]:
    paths = []
    for kind, n in sizes.items():
        path = folder / f"{kind}_{n}.py"
        path.write_text(chain(kind, n))
        paths.append(path)
    (folder / "good.py").write_text(GOOD)
    return [*paths, folder / "good.py"]


def assert_each_file_answered(found: dict[str, list[dict]], sizes: dict[str, int]) -> None:
    """Every chain file has its JAX000 (a clear "cannot …" line) or, when analysed, exactly its finding; the
    file beside them is linted."""
    assert [f["code"] for f in found["good.py"]] == ["JAX101"]
    for kind, n in sizes.items():
        codes = [(f["code"], f["line"]) for f in found[f"{kind}_{n}.py"]]
        if codes != [("JAX101", traced_if_line(kind, n))]:
            ((code, _),) = codes
            (message,) = [f["message"] for f in found[f"{kind}_{n}.py"]]
            assert code == "JAX000" and message.startswith(("cannot parse: ", "cannot analyse: ")), message
            assert "internal error" not in message and "nesting too deep" not in message


# -- item 1: chains that killed the process --------------------------------------------------------------


@pytest.mark.parametrize("kinds", [list(CRASHED)[:6], list(CRASHED)[6:]], ids=["first", "second"])
def test_chains_that_crashed_libcst_get_an_answer_and_the_other_files_are_linted(
    tmp_path: Path, kinds
) -> None:
    """Fewer than 8 files: linted in the command's own process, where a crash lost every file's findings."""
    sizes = {kind: CRASHED[kind] for kind in kinds}
    found = jaxlint_json(*write_chains(tmp_path, sizes), cwd=tmp_path)
    assert_each_file_answered(found, sizes)


def test_an_8000_operand_and_chain_is_analysed_and_the_longest_chains_get_jax000(tmp_path: Path) -> None:
    """Also a `+` chain split over lines (inside brackets, across brackets, by backslashes): the scan that
    picks the texts to measure reads logical lines, not physical ones."""
    split = ("plus_in_brackets", "plus_across_brackets", "plus_backslashes")
    sizes = {"and": 8000, "plus": 8000, "call": 10000, **dict.fromkeys(split, 8000)}
    found = jaxlint_json(*write_chains(tmp_path, sizes), cwd=tmp_path)
    assert [(f["code"], f["line"]) for f in found["and_8000.py"]] == [("JAX101", traced_if_line("and", 8000))]
    for name in ("plus_8000.py", "call_10000.py", *(f"{kind}_8000.py" for kind in split)):
        ((refused),) = found[name]
        assert refused["code"] == "JAX000" and refused["line"] == 4, refused  # the chain's statement
        assert refused["message"].startswith("cannot analyse: a chain of "), refused


def test_flake8_survives_the_chains_that_crashed_libcst(tmp_path: Path) -> None:
    """Only `and`/`or` chains: flake8 builds its own `ast` first and stops on deeper trees (`+`, `.b`, …)
    with a RecursionError of its own before any plugin runs."""
    sizes = {"and": 8000, "or": 20000}
    paths = write_chains(tmp_path, sizes)
    result = subprocess.run(
        [sys.executable, "-m", "flake8", "--isolated", "--select", "JAX", *map(str, paths)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env(),
        timeout=120,
    )
    assert result.returncode == 1, (result.returncode, result.stderr[-2000:])
    found: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        path, row, _column, text = line.split(":", 3)
        found.setdefault(Path(path).name, []).append(f"{row} {text.split()[0]}")
    assert found["good.py"] == ["5 JAX101"]
    assert found["and_8000.py"] == [f"{traced_if_line('and', 8000)} JAX101"]
    assert found["or_20000.py"] == ["4 JAX000"]


# -- item 9: chains of 1,000 to 5,000 links are analysed, not refused as "nesting too deep" -------------------


def test_chains_of_a_thousand_links_are_analysed(tmp_path: Path) -> None:
    """More than 8 files: linted by the worker pool."""
    found = jaxlint_json(*write_chains(tmp_path, ANALYSED), cwd=tmp_path)
    assert [f["code"] for f in found["good.py"]] == ["JAX101"]
    for kind, n in ANALYSED.items():
        codes = [(f["code"], f["line"]) for f in found[f"{kind}_{n}.py"]]
        assert codes == [("JAX101", traced_if_line(kind, n))], (kind, found[f"{kind}_{n}.py"])


# -- item 4: a long module costs a bounded number of position passes ----------------------------------------

# Runs the command counting the code generation passes over whole modules (each `Positions` pass is one).
_COUNT_PASSES = """\
import atexit, sys
import libcst
passes = 0
generate = libcst.Module._codegen
def counted(self, state):
    global passes
    passes += 1
    return generate(self, state)
libcst.Module._codegen = counted
atexit.register(lambda: print("passes", passes, file=sys.stderr))
from jaxlint.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_a_long_module_is_positioned_in_a_bounded_number_of_passes(tmp_path: Path) -> None:
    """A rule asking for lines once per function (JAX301 here, 200 functions) cost one pass over the module each:
    time quadratic in its size (50,000 lines: 13 minutes). `bench/file_size.py` measures the time."""
    (tmp_path / "long.py").write_text(long_module(5000))
    (tmp_path / "count.py").write_text(_COUNT_PASSES)
    result = subprocess.run(
        [sys.executable, "count.py", "--no-cache", "--format", "json", "long.py"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env(),
        timeout=300,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    findings = json.loads(result.stdout)
    assert len(findings) > 200 and {f["code"] for f in findings} == {"JAX301"}
    passes = int(result.stderr.split("passes")[-1])
    assert 1 <= passes <= 3, passes


# -- issue 39, item 5: valid Python that libcst's parser refuses is not reported as a syntax error ----------


def test_valid_python_that_libcst_refuses_is_not_a_syntax_error(tmp_path: Path) -> None:
    """libcst's grammar refuses more than 3,000 adjacent string literals or `for` clauses (a ParserSyntaxError
    for text CPython parses): the file gets a JAX000 that says it could not be analysed, at the run or the
    comprehension, and the files beside it are linted; in a notebook, that cell, and the other cells are."""
    run = " ".join(['"a"'] * 4000)
    (tmp_path / "strings.py").write_text(f"import jax\nx = (\n{run}\n)\n")
    clauses = " ".join(f"for a{i} in b" for i in range(3001))
    (tmp_path / "clauses.py").write_text(f"import jax\nx = [a {clauses}]\n")
    (tmp_path / "good.py").write_text(GOOD)
    cells = [GOOD, "x = (\n" + " ".join(['"a"'] * 3500) + "\n)\n"]
    notebook = {"cells": [{"cell_type": "code", "metadata": {}, "source": cell} for cell in cells]}
    (tmp_path / "book.ipynb").write_text(json.dumps({**notebook, "metadata": {}, "nbformat": 4}))
    found = jaxlint_json(*sorted(tmp_path.glob("*.py")), tmp_path / "book.ipynb", cwd=tmp_path)
    expected = {
        "strings.py": (3, 1, "cannot analyse: 4,000 adjacent string literals, more than libcst's parser"),
        "clauses.py": (2, 5, "cannot analyse: a comprehension of 3,001 `for` clauses, more than libcst's"),
    }
    for name, (line, column, start) in expected.items():
        ((refused),) = found[name]
        assert (refused["code"], refused["line"], refused["column"]) == ("JAX000", line, column), refused
        assert refused["message"].startswith(start), refused
    assert [f["code"] for f in found["good.py"]] == ["JAX101"]
    jax101, refused = found["book.ipynb"]
    assert (jax101["code"], jax101["cell"], jax101["line"]) == ("JAX101", 1, 5), jax101
    assert (refused["code"], refused["cell"], refused["line"]) == ("JAX000", 2, 2), refused
    assert refused["message"].startswith("cannot analyse: 3,500 adjacent string literals"), refused
