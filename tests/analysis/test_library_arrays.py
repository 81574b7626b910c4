"""The library table's array rows (analysis/library_arrays.py), run on real JAX and NumPy on CPU with x64 off
(the default): each FLOAT_RESULTS function gives a float array when no dtype is given, at the `dtype` position
the table names; each RESULT_DTYPES function gives the dtype kind it names."""

from __future__ import annotations

import inspect

import pytest

from jaxlint.analysis.library import (
    ARRAYS_CHECKED,
    CONDITION_SIZED,
    FLOAT_RESULTS,
    ONE_ARGUMENT_VALUE_SIZED,
    RESULT_DTYPES,
    VALUE_SIZED,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
np = pytest.importorskip("numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402

_KINDS = {"b": "bool", "i": "int", "u": "uint", "f": "float", "c": "complex"}


def _kind(array) -> str:
    return _KINDS[np.dtype(array.dtype).kind]


def _call(name: str):
    function = resolve(name)
    if name.startswith("jax.random."):
        key = jax.random.key(0)
        if name.endswith("randint"):
            return function(key, (3,), 0, 5)
        if name.endswith("bernoulli"):
            return function(key, 0.5, (3,))
        if name.endswith("truncated_normal"):
            return function(key, -1.0, 1.0, (3,))
        if name.endswith("key_data"):
            return function(key)
        return function(key, (3,))
    return function(3)


def test_checked_on_the_running_jax() -> None:
    assert ARRAYS_CHECKED.startswith(f"jax {jax.__version__}")


@pytest.mark.parametrize("name", sorted(FLOAT_RESULTS))
def test_float_result_without_a_dtype(name: str) -> None:
    assert not jax.config.jax_enable_x64
    assert _kind(_call(name)) == "float", name
    parameters = list(inspect.signature(resolve(name)).parameters)
    assert parameters[FLOAT_RESULTS[name]] == "dtype", f"{name}: dtype is not at {FLOAT_RESULTS[name]}"


@pytest.mark.parametrize("name", sorted(RESULT_DTYPES))
def test_result_dtype_kind(name: str) -> None:
    assert _kind(_call(name)) == RESULT_DTYPES[name], name


@pytest.mark.parametrize("name", sorted(VALUE_SIZED | ONE_ARGUMENT_VALUE_SIZED | CONDITION_SIZED))
def test_value_sized_output_needs_size_under_jit(name: str) -> None:
    """Under jit, on a traced argument (a traced condition for CONDITION_SIZED): ConcretizationTypeError
    (TracerBoolConversionError, one of its kind, for a condition) without `size=`; with it, it runs."""
    function = resolve(name)
    x = jnp.array([0.0, 1.0, 2.0, 0.0])
    call = (lambda v, **k: function(v > 0, v, **k)) if name in CONDITION_SIZED else function
    with pytest.raises(jax.errors.ConcretizationTypeError):
        jax.jit(lambda v: call(v))(x)
    jax.jit(lambda v: call(v, size=4))(x)
