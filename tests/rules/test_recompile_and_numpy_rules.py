"""Module-level cases of JAX401-JAX405 and JAX501-JAX502 that one fixture file cannot hold."""

from __future__ import annotations

import pytest

from jaxlint import lint_source

F64 = "import jax.numpy as jnp\n{setup}\na = jnp.zeros(3, dtype=jnp.float64)\n"


@pytest.mark.parametrize(
    "setup",
    [
        'import jax\njax.config.update("jax_enable_x64", True)',
        "from jax import config\nconfig.update('jax_enable_x64', True)",
        'import os\nos.environ["JAX_ENABLE_X64"] = "1"',
        "from jax.experimental import enable_x64",
        "import jax\nwith jax.enable_x64(True):\n    pass",
        "import jax\nDTYPE = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32",
        "from jax._src import test_util as jtu\n@jtu.with_config(jax_enable_x64=True)\nclass T: pass",
    ],
)
def test_float64_is_fine_where_the_module_enables_x64(setup: str) -> None:
    assert lint_source(F64.format(setup=setup), "m.py", select=["JAX501"]) == []


def test_float64_flagged_where_x64_is_only_named_in_prose() -> None:
    source = '"""Uses float64 on purpose; x64 is not discussed here."""\n' + F64.format(setup="")
    assert [f.code for f in lint_source(source, "m.py", select=["JAX501"])] == ["JAX501"]


def _notebook(*sources: str) -> str:
    import json

    cells = [
        {"cell_type": "code", "metadata": {}, "source": source, "outputs": [], "execution_count": None}
        for source in sources
    ]
    meta = {"kernelspec": {"language": "python", "name": "python3"}}
    return json.dumps({"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5})


NOTEBOOK_SETUP = (
    "import jax\nimport jax.numpy as jnp\n\n@jax.jit\ndef f(x):\n    return jnp.sin(x) * 2\n\nx = jnp.ones(8)"
)


def test_timeit_magics_without_blocking_are_flagged_at_cell_and_line() -> None:
    text = _notebook(
        NOTEBOOK_SETUP,
        "%timeit f(x)",
        "%timeit f(x).block_until_ready()",
        "%%timeit\ny = f(x)\nz = jnp.cos(y)",
        "%%time\ny = f(x)\nprint(y)",
        "%time y = f(x)",
        "%timeit -n 3 jax.block_until_ready(f(x))",
    )
    found = [(f.cell, f.line, f.column) for f in lint_source(text, "t.ipynb", select=["JAX403"])]
    assert found == [(2, 1, 9), (4, 2, 5), (6, 1, 11)]


def test_timers_in_notebook_cells_are_judged_like_python() -> None:
    text = _notebook(NOTEBOOK_SETUP, "import time\nt0 = time.time()\ny = f(x)\nprint(time.time() - t0)")
    found = [(f.cell, f.line, f.code) for f in lint_source(text, "t.ipynb", select=["JAX403"])]
    assert found == [(2, 4, "JAX403")]


def test_float64_flagged_where_a_variable_is_merely_named_x64() -> None:
    source = F64.format(setup="x64 = 1") + "b = jnp.ones(3, dtype=jnp.float64)\n"
    assert [f.line for f in lint_source(source, "m.py", select=["JAX501"])] == [3, 4]


@pytest.mark.parametrize(
    "setup",
    [
        "import jax\nX64 = jax.config.x64_enabled",
        "import jax\n@jax.default_matmul_precision('x')\ndef g(): pass",
    ],
)
def test_float64_x64_spellings(setup: str) -> None:
    found = lint_source(F64.format(setup=setup), "m.py", select=["JAX501"])
    assert bool(found) == ("x64_enabled" not in setup)
