"""x64 enabled by a package's `__init__.py` (class I of the fresh code, apax): importing any module of the
package runs its `__init__.py` first, so a module whose enclosing package enables x64 runs with 64-bit types
and JAX501/JAX503 leave it alone, through the `jaxlint` command on the folder and on the file alone, and the
findings cache follows an edit of the `__init__.py`. The twin without the `__init__` line is flagged; both are
run on real JAX (the dtype printed is float64, then float32)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_project import _json_rows, run_cli, write

UNITS = """
import jax.numpy as jnp

IDENTITY_BOX = jnp.eye(3, dtype=jnp.float64)


def to_box(cell):
    return jnp.asarray(cell, dtype=jnp.float64) @ IDENTITY_BOX
"""

ENABLING = """
import jax

jax.config.update("jax_enable_x64", True)
"""

PLAIN = """
import jax
"""


def _package(root: Path, init: str) -> None:
    write(root, {"pkg/__init__.py": init, "pkg/sub/__init__.py": "", "pkg/sub/units.py": UNITS})


def _dtype(root: Path) -> str:
    pytest.importorskip("jax")
    env = {**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}
    env.pop("JAX_ENABLE_X64", None)
    run = subprocess.run(
        [sys.executable, "-c", "import pkg.sub.units as u; print(u.IDENTITY_BOX.dtype)"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_a_package_enabling_x64_covers_its_modules(tmp_path: Path) -> None:
    _package(tmp_path, ENABLING)
    assert _dtype(tmp_path) == "float64"
    for target in (".", "pkg/sub/units.py"):
        rows = _json_rows(run_cli("--no-cache", "--format", "json", target, cwd=tmp_path))
        assert not [r for r in rows if r[2] == "JAX501"], (target, rows)


def test_without_the_package_line_the_module_is_flagged(tmp_path: Path) -> None:
    _package(tmp_path, PLAIN)
    assert _dtype(tmp_path) == "float32"
    for target in (".", "pkg/sub/units.py"):
        rows = _json_rows(run_cli("--no-cache", "--format", "json", target, cwd=tmp_path))
        assert [r[1:] for r in rows if r[2] == "JAX501"] == [(3, "JAX501"), (7, "JAX501")], (target, rows)


def test_the_findings_cache_follows_the_package_init(tmp_path: Path) -> None:
    _package(tmp_path, ENABLING)
    cache = str(tmp_path / "cache")

    def jax501() -> int:
        rows = _json_rows(run_cli("--cache-dir", cache, "--format", "json", "pkg/sub/units.py", cwd=tmp_path))
        return len([r for r in rows if r[2] == "JAX501"])

    assert jax501() == 0
    (tmp_path / "pkg" / "__init__.py").write_text(PLAIN)
    assert jax501() == 2
