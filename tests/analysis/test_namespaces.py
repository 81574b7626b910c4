"""The namespace rows of analysis/semantics/namespaces.py that rules test names against, run on real JAX on CPU: NumPy's
and `math`'s functions raise on a tracer (each its own error), NumPy's dtype namespace takes a tracer's dtype,
and every array namespace is a module of the running JAX."""

from __future__ import annotations

import importlib
import sys

import pytest

from jaxlint.analysis.semantics.namespaces import (
    ARRAY_NAMESPACES,
    JAX_NUMPY,
    MATH,
    NAMESPACES_CHECKED,
    NUMPY,
    NUMPY_DTYPE,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402


def test_checked_on_the_running_versions() -> None:
    assert f"jax {jax.__version__}" in NAMESPACES_CHECKED and f"numpy {np.__version__}" in NAMESPACES_CHECKED
    assert f"python {sys.version_info.major}.{sys.version_info.minor}" in NAMESPACES_CHECKED


@pytest.mark.parametrize(
    ("namespace", "error"),
    [(NUMPY, jax.errors.TracerArrayConversionError), (MATH, jax.errors.ConcretizationTypeError)],
)
def test_host_numerics_raise_on_a_tracer(namespace: str, error: type[Exception]) -> None:
    for function in ("sin", "exp", "sqrt"):
        host = resolve(namespace + function)
        with pytest.raises(error):
            jax.jit(lambda x, host=host: host(x))(jnp.float32(1.0))


def test_numpy_dtype_namespace_takes_a_tracers_dtype() -> None:
    make = resolve(NUMPY_DTYPE)
    assert jax.jit(lambda x: x.astype(make(x.dtype)))(jnp.float32(1.0)) == 1.0
    assert importlib.import_module(NUMPY_DTYPE + "s") is np.dtypes


def test_array_namespaces_are_modules_of_the_running_jax() -> None:
    assert ARRAY_NAMESPACES[0] == JAX_NUMPY
    for namespace in ARRAY_NAMESPACES:
        module = importlib.import_module(namespace.rstrip("."))
        assert module.__name__.startswith("jax.")
    assert isinstance(jax.jit(resolve(JAX_NUMPY + "sin"))(jnp.float32(1.0)), jax.Array)
