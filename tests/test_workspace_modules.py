"""Linting a project runs none of its code (issue 39, item 1): a project module named like one of the
standard library's or jaxlint's dependencies is never imported by the command line (however started, with
`--fix`, stdin, SARIF, worker processes) nor by the flake8 plugin. The server: tests/server/
test_workspace_modules.py; `--verify`: tests/runtime/test_verify_isolation.py."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SOURCE = """\
import jax
import jax.numpy as jnp

from helpers import g


@jax.jit
def f(x):
    if x > 0:
        x = x + 1
    print("x is", x)
    return jnp.sin(g(x))
"""
CONSOLE_SCRIPT = "import sys\nfrom jaxlint.cli import main\nsys.exit(main())\n"


@pytest.fixture
def project(tmp_path, planted_modules):
    folder = tmp_path / "project"
    folder.mkdir()
    planted_modules.plant(folder)
    (folder / "helpers.py").write_text("def g(x):\n    return x\n")
    for name in ("model.py", "other.py"):
        (folder / name).write_text(SOURCE)
    yield folder
    assert planted_modules.ran(folder) == []


def _run(command: list[str], cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    result = subprocess.run(
        command, cwd=cwd, env=env, input=stdin, capture_output=True, text=True, timeout=300
    )
    assert result.returncode in (0, 1) and "Traceback" not in result.stderr, result.stderr
    return result


@pytest.mark.parametrize(
    "args",
    [
        ["--no-cache", "model.py", "other.py"],
        ["--no-cache", "--jobs", "2", "model.py", "other.py"],  # worker processes
        ["--no-cache", "--format", "sarif", "model.py"],
        ["--no-cache", "--fix", "--unsafe-fixes", "model.py"],
        ["--no-cache", "--stdin-filename", "model.py", "-"],
        ["model.py"],  # the cache
    ],
)
def test_python_dash_m_jaxlint_imports_no_module_of_the_project(project, args):
    result = _run([sys.executable, "-m", "jaxlint", *args], project, stdin=SOURCE)
    assert "JAX101" in result.stdout or "--fix" in args


def test_the_console_script_imports_no_module_of_the_project(project, tmp_path):
    script = tmp_path / "jaxlint"  # a console script: its own folder first on sys.path
    script.write_text(CONSOLE_SCRIPT)
    assert "JAX101" in _run([sys.executable, str(script), "--no-cache", "model.py"], project).stdout


@pytest.mark.skipif(shutil.which("flake8", path=str(Path(sys.executable).parent)) is None, reason="no flake8")
def test_flake8_imports_no_module_of_the_project(project):
    flake8 = shutil.which("flake8", path=str(Path(sys.executable).parent))
    assert flake8 is not None
    assert "JAX101" in _run([flake8, "--isolated", "--select", "JAX", "model.py"], project).stdout
