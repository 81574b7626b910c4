"""The library table's identity-hashed rows (`library.IDENTITY_HASHED`, `library.STATIC_STATE_ARGUMENTS`), run on
the installed optax and flax (measured on optax 0.2.8, flax 0.12.8, JAX 0.10.2): optax's transformations are
NamedTuples of closures made per call, so two built alike are unequal, hash apart, and each is a new `jax.jit`
cache key; `nnx.Optimizer` keeps its transformation as static state that `nnx.jit` keys on."""

from __future__ import annotations

import inspect
from functools import partial

import pytest

from jaxlint.analysis.semantics.library import IDENTITY_HASHED, STATIC_STATE_ARGUMENTS

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
optax = pytest.importorskip("optax")

from tests.analysis.test_library_semantics import resolve  # noqa: E402


@pytest.mark.parametrize("name", sorted(IDENTITY_HASHED))
def test_every_row_builds_a_gradient_transformation(name: str) -> None:
    built = resolve(name)
    assert "GradientTransformation" in str(inspect.signature(built).return_annotation), name


@pytest.mark.parametrize(
    "build",
    [
        lambda: optax.adam(1e-2),
        lambda: optax.sgd(0.1),
        lambda: optax.clip_by_global_norm(1.0),
        lambda: optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(1e-3)),
    ],
)
def test_two_built_alike_compare_by_identity(build) -> None:
    first, second = build(), build()
    assert first == first and hash(first) == hash(first)
    assert first != second and hash(first) != hash(second)


def test_a_new_transformation_is_a_new_static_cache_key() -> None:
    traces = []

    @partial(jax.jit, static_argnums=0)
    def step(optimizer, params):
        traces.append(1)
        return optimizer.update(params, optimizer.init(params), params)[0]

    params = {"w": jnp.ones(2)}
    shared = optax.sgd(0.1)
    for _ in range(3):
        step(shared, params)
    assert len(traces) == 1
    for _ in range(3):
        step(optax.sgd(0.1), params)
    assert len(traces) == 4


def test_nnx_optimizer_transformation_is_static_state_of_nnx_jit() -> None:
    nnx = pytest.importorskip("flax.nnx")
    ((position, keyword),) = [STATIC_STATE_ARGUMENTS["flax.nnx.Optimizer"]]
    parameters = list(inspect.signature(nnx.Optimizer.__init__).parameters)[1:]  # without self
    assert parameters[position] == keyword
    traces = []

    @nnx.jit
    def step(model, optimizer, x):
        traces.append(1)
        optimizer.update(model, nnx.grad(lambda m: jnp.mean(m(x) ** 2))(model))

    x = jnp.ones((2, 3))
    shared = optax.sgd(0.1)
    for seed in range(3):  # new modules and optimizers of the same shapes, one transformation: one trace
        model = nnx.Linear(3, 1, rngs=nnx.Rngs(seed))
        step(model, nnx.Optimizer(model, shared, wrt=nnx.Param), x)
    assert len(traces) == 1
    for seed in range(3):  # a transformation built per optimizer: a trace each
        model = nnx.Linear(3, 1, rngs=nnx.Rngs(seed))
        step(model, nnx.Optimizer(model, **{keyword: optax.sgd(0.1)}, wrt=nnx.Param), x)
    assert len(traces) == 4
