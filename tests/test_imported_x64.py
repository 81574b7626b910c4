"""x64 enabled by an imported project module (class R of the fresh code, chronax): a module whose top level runs
`jax.config.update("jax_enable_x64", True)` enables x64 for every module importing it, directly (a relative
import inside the package) or through the package's `__init__.py` (a script next to the package importing
`from pkg import Model`), so JAX501 leaves the importers alone, through the `jaxlint` command on the folder and on
each file alone. Twins stay flagged: the imported module enables x64 only inside a function, or only under its
`if __name__ == "__main__"`, neither of which runs on import. Each layout is run on real JAX (float64, then
float32)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_project import _json_rows, run_cli, write

ENABLING = """
import jax

jax.config.update("jax_enable_x64", True)


def scale(x):
    return 2 * x
"""

IN_A_FUNCTION = """
import jax


def use_x64():
    jax.config.update("jax_enable_x64", True)


def scale(x):
    return 2 * x
"""

UNDER_MAIN = """
import jax


def scale(x):
    return 2 * x


if __name__ == "__main__":
    jax.config.update("jax_enable_x64", True)
"""

# flax-style: a module of the package imports the backend relatively and builds float64 at import
MODEL = """
import jax.numpy as jnp

from .backend import scale

WEIGHTS = scale(jnp.ones(3, dtype=jnp.float64))


class Model:
    def predict(self, x):
        return jnp.asarray(x, dtype=jnp.float64) @ WEIGHTS
"""

# a test script beside the package, importing it through its `__init__.py`
SCRIPT = """
import jax.numpy as jnp

from pkg import Model

y = jnp.full((3,), 10.0, dtype=jnp.float64)
print(y.dtype, Model().predict(y).dtype)
"""


def _project(root: Path, backend: str) -> None:
    write(
        root,
        {
            "pkg/__init__.py": "from .model import Model\n",
            "pkg/backend.py": backend,
            "pkg/model.py": MODEL,
            "tests/check.py": SCRIPT,
        },
    )


def _dtypes(root: Path) -> str:
    pytest.importorskip("jax")
    env = {**os.environ, "PYTHONPATH": str(root), "JAX_PLATFORMS": "cpu"}
    env.pop("JAX_ENABLE_X64", None)
    run = subprocess.run(
        [sys.executable, str(root / "tests" / "check.py")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def _jax501(root: Path, target: str) -> list[tuple[str, int]]:
    rows = _json_rows(run_cli("--no-cache", "--format", "json", target, cwd=root))
    return sorted((r[0], r[1]) for r in rows if r[2] == "JAX501")


def test_an_imported_module_enabling_x64_covers_its_importers(tmp_path: Path) -> None:
    _project(tmp_path, ENABLING)
    assert _dtypes(tmp_path) == "float64 float64"
    for target in (".", "pkg/model.py", "tests/check.py"):
        assert _jax501(tmp_path, target) == [], target


@pytest.mark.parametrize("backend", [IN_A_FUNCTION, UNDER_MAIN], ids=["in-a-function", "under-main"])
def test_x64_that_does_not_run_on_import_leaves_the_importers_flagged(tmp_path: Path, backend: str) -> None:
    _project(tmp_path, backend)
    assert _dtypes(tmp_path) == "float32 float32"
    found = _jax501(tmp_path, ".")
    assert [line for path, line in found if path.endswith("model.py")] == [5, 10], found
    assert [line for path, line in found if path.endswith("check.py")] == [5], found
    assert [line for _, line in _jax501(tmp_path, "tests/check.py")] == [5]
