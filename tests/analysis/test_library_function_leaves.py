"""The library table's rows on pytrees holding a Python function as a leaf, run on real equinox and JAX: which
library classes keep a function in a field that is not static (FUNCTION_LEAF_CLASSES), which containers hold the
leaves of the layers they are given (LAYER_CONTAINERS), which transformations read every leaf of the arguments
they trace as an array (`array_leaves`) and which lax loops their carry (`array_carry`); which calls return
pytrees of their argument's class (SAME_CLASS_RESULTS)."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from jaxlint.analysis.semantics.library import (
    CONTROL_FLOW,
    FUNCTION_LEAF_CLASSES,
    LAYER_CONTAINERS,
    SAME_CLASS_RESULTS,
    TRANSFORMATIONS,
)

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
eqx = pytest.importorskip("equinox")

from tests.analysis.test_library_semantics import resolve  # noqa: E402


def _instance(name: str) -> Any:
    """An instance of the library class `name`, built with the arguments it needs."""
    cls = resolve(name)
    short = name.rsplit(".", 1)[-1]
    key = jax.random.PRNGKey(0)
    if short == "MLP":
        return cls(2, 3, 4, 1, key=key)
    if short == "Lambda":
        return cls(jax.nn.gelu)
    if short.startswith("Adaptive"):
        if short == "AdaptivePool":
            return cls((2,), 1, jnp.max)
        return cls((2,) * int(short[-2]))
    if short == "Pool":
        return cls(-jnp.inf, jax.lax.max, 1, 2)
    return cls(2)


@pytest.mark.parametrize("name", sorted(FUNCTION_LEAF_CLASSES))
def test_function_leaf_class_keeps_a_function_in_its_fields(name: str) -> None:
    instance = _instance(name)
    fields = {f.name: f for f in dataclasses.fields(type(instance))}
    for field in FUNCTION_LEAF_CLASSES[name]:
        assert not fields[field].metadata.get("static"), f"{name}.{field} is static"
        assert callable(getattr(instance, field)), f"{name}.{field} holds no function"
    leaves = jax.tree_util.tree_leaves(instance)
    assert any(callable(leaf) and not isinstance(leaf, jax.Array) for leaf in leaves)
    with pytest.raises(TypeError):
        jax.jit(lambda m: 0)(instance)
    eqx.filter_jit(lambda m: 0)(instance)  # filtered: the function stays static


@pytest.mark.parametrize("name", sorted(LAYER_CONTAINERS))
def test_layer_container_holds_its_layers_leaves(name: str) -> None:
    position, keyword = LAYER_CONTAINERS[name]
    cls = resolve(name)
    linear = eqx.nn.Linear(2, 2, key=jax.random.PRNGKey(0))
    holding = cls(**{keyword: [linear, eqx.nn.Lambda(jax.nn.gelu)]})
    assert cls(*[None] * position, [linear]).layers  # given at `position` too
    with pytest.raises(TypeError):
        jax.jit(lambda m: 0)(holding)
    jax.jit(lambda m: 0)(cls([linear, linear]))  # only arrays: fine


def _mlp() -> Any:
    return eqx.nn.MLP(2, 2, 4, 1, key=jax.random.PRNGKey(0))


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.array_leaves))
def test_array_leaves_transformation_refuses_a_function_leaf(name: str) -> None:
    transform = resolve(name)
    x = jnp.ones((jax.local_device_count(), 2)) if name in ("jax.pmap", "jax.vmap") else jnp.ones(2)
    with pytest.raises(TypeError):
        transform(lambda m, x: jnp.sum(x))(_mlp(), x)


@pytest.mark.parametrize("name", sorted(n for n, t in TRANSFORMATIONS.items() if t.filtering))
def test_filtering_transformation_keeps_a_function_leaf_static(name: str) -> None:
    if not name.startswith("equinox."):
        pytest.skip("flax.nnx filters its graph nodes, not equinox Modules")
    options = {"in_axes": (None, 0)} if "map" in name else {}  # the maps: the Module's arrays unmapped
    x = jnp.ones((jax.local_device_count(), 2)) if options else jnp.ones(2)
    resolve(name)(lambda m, x: jnp.sum(x), **options)(_mlp(), x)


@pytest.mark.parametrize("name", sorted(n for n, f in CONTROL_FLOW.items() if f.array_carry))
def test_array_carry_loop_refuses_a_function_leaf(name: str) -> None:
    loop = resolve(name)
    flow = CONTROL_FLOW[name]
    assert flow.init is not None
    arguments: list[Any] = {
        "jax.lax.scan": [lambda c, x: (c, x), None, jnp.ones(2)],
        "jax.lax.fori_loop": [0, 2, lambda i, c: c, None],
        "jax.lax.while_loop": [lambda c: False, lambda c: c, None],
    }[name]
    arguments[flow.init[0]] = _mlp()
    with pytest.raises(TypeError):
        loop(*arguments)
    arguments[flow.init[0]] = eqx.filter(_mlp(), eqx.is_array)  # the arrays alone
    loop(*arguments)


@pytest.mark.parametrize("name", sorted(SAME_CLASS_RESULTS))
def test_same_class_result_keeps_the_class_and_its_non_array_fields(name: str) -> None:
    class Scaled(eqx.Module):
        weight: Any
        options: dict

    model = Scaled(jnp.ones(2), {"gain": 2.0})
    result = resolve(name)(model, eqx.is_array)
    parts = result if SAME_CLASS_RESULTS[name] else (result,)
    assert isinstance(result, tuple) is SAME_CLASS_RESULTS[name]
    assert all(type(part) is Scaled for part in parts)
    static = resolve(name)(model, eqx.is_array, **({} if SAME_CLASS_RESULTS[name] else {"inverse": True}))
    static = static[1] if SAME_CLASS_RESULTS[name] else static
    assert static.weight is None and isinstance(static.options, dict)
    with pytest.raises(TypeError):
        hash(static)  # hashed by its fields: the dict's hash raises
