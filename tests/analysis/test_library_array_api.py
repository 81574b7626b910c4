"""The array-API rows of the library table (analysis/semantics/array_api.py), run on the installed libraries with
real JAX on CPU: each namespace getter answers `jax.numpy` for a JAX array, traced under jax.jit too, and a
JAX array's `__array_namespace__()` does. Getters of a library that is not installed are skipped."""

from __future__ import annotations

import importlib
import os
import sys

import pytest

from jaxlint.analysis.semantics.array_api import JAX_NAMESPACE, NAMESPACE_GETTERS, NAMESPACE_METHOD


def _getter(qualname: str):
    module, _, name = qualname.rpartition(".")
    if module.startswith("scipy."):
        # scipy reads the switch once, on import; without it its getter answers NumPy's namespace for all
        if "scipy" in sys.modules and os.environ.get("SCIPY_ARRAY_API") != "1":
            pytest.skip("scipy was imported without SCIPY_ARRAY_API=1")
        os.environ["SCIPY_ARRAY_API"] = "1"
    try:
        return getattr(importlib.import_module(module), name)
    except ImportError:
        pytest.skip(f"{module} is not installed")


@pytest.mark.parametrize("qualname", sorted(NAMESPACE_GETTERS))
def test_a_getter_answers_jax_numpy_for_jax_arrays(qualname: str) -> None:
    jax = pytest.importorskip("jax")
    getter = _getter(qualname)
    x = jax.numpy.ones(3)
    assert getter(x).__name__ == JAX_NAMESPACE
    seen = []
    jax.jit(lambda v: seen.append(getter(v).__name__) or v)(x)
    assert seen == [JAX_NAMESPACE]


def test_a_jax_array_answers_its_namespace() -> None:
    jax = pytest.importorskip("jax")
    x = jax.numpy.ones(3)
    assert getattr(x, NAMESPACE_METHOD)().__name__ == JAX_NAMESPACE
    seen = []
    jax.jit(lambda v: seen.append(getattr(v, NAMESPACE_METHOD)().__name__) or v)(x)
    assert seen == [JAX_NAMESPACE]
