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
    ],
)
def test_float64_is_fine_where_the_module_enables_x64(setup: str) -> None:
    assert lint_source(F64.format(setup=setup), "m.py", select=["JAX501"]) == []


def test_float64_flagged_where_x64_is_only_named_in_prose() -> None:
    source = '"""Uses float64 on purpose; x64 is not discussed here."""\n' + F64.format(setup="")
    assert [f.code for f in lint_source(source, "m.py", select=["JAX501"])] == ["JAX501"]
