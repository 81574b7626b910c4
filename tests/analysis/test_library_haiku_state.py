"""The library table's rows for Haiku's implicit state (analysis/semantics/haiku_state.py), run on dm-haiku: the
calls that store into a transformation's frame misbehave inside a raw lax.scan body (a leaked tracer, or the same
rng key every iteration) and not inside hk.scan; the library modules listed create parameters or state, and
leak them from a raw lax.cond branch; the frame transformations run their function in a new frame."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from jaxlint.analysis.semantics.library import (
    HAIKU_FRAMES,
    HAIKU_MODULE,
    HAIKU_PARAMETER_MODULES,
    HAIKU_STATE_CALLS,
    HAIKU_STATE_CHECKED,
)

hk = pytest.importorskip("haiku")
jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")

from tests.analysis.test_library_semantics import resolve  # noqa: E402

assert HAIKU_STATE_CHECKED == "dm-haiku 0.0.17"


def _state_call(name: str) -> Callable[[Any], Any]:
    """A function of one row vector calling the frame-state function `name` once (its result used)."""
    short = name.rsplit(".", 1)[1]
    if short == "get_parameter":
        return lambda x: x * hk.get_parameter("w", x.shape, init=jnp.ones)
    if short == "get_state":
        return lambda x: x * hk.get_state("s", x.shape, init=jnp.ones)
    if short == "set_state":
        return lambda x: hk.set_state("s", x) or x
    if short == "next_rng_keys":
        return lambda x: x + jax.random.normal(hk.next_rng_keys(2)[0], x.shape)
    return lambda x: x + jax.random.normal(resolve(name)(), x.shape)


def _run(body: Callable[[Any], Any], scan: Callable, once_more: Callable[[Any], Any]) -> list[Any]:
    """`body` in each step of `scan` inside hk.transform_with_state, then `once_more` after the loop (the
    frame's stored values used again); init and apply run. The scanned outputs."""

    def forward(xs):
        _, ys = scan(lambda c, x: (c, body(x)), 0.0, xs)
        return ys + 0 * once_more(xs[0])

    transformed = hk.transform_with_state(forward)
    xs = jnp.ones((3, 2))
    params, state = transformed.init(jax.random.key(0), xs)
    ys, _ = transformed.apply(params, state, jax.random.key(1), xs)
    return list(ys)


@pytest.mark.parametrize("name", sorted(HAIKU_STATE_CALLS))
def test_frame_state_call_misbehaves_in_a_raw_scan_body(name: str) -> None:
    """In a raw lax.scan body the call stores a tracer in the frame (UnexpectedTracerError) or gives every
    iteration the same key; in hk.scan it runs and the keys differ."""
    call = _state_call(name)
    # the same call again after the loop; after set_state, a read of what it stored
    after = _state_call("haiku.get_state") if name.endswith("set_state") else call
    try:
        rows = _run(call, jax.lax.scan, after)
    except jax.errors.UnexpectedTracerError:
        pass
    else:
        assert "rng" in HAIKU_STATE_CALLS[name] and all((r == rows[0]).all() for r in rows), name
    rows = _run(call, hk.scan, after)
    if "rng" in HAIKU_STATE_CALLS[name]:
        assert not (rows[0] == rows[1]).all(), f"{name}: hk.scan draws a new key each step"


def _module_call(name: str) -> Callable[[Any, Any], Any]:
    short = name.removeprefix("haiku.")
    x2 = lambda x: x[:, 0, 0]  # noqa: E731
    return {
        "Conv1D": lambda m, x: m(x[:, 0]),
        "Embed": lambda m, x: m(jnp.zeros((2,), int)),
        "BatchNorm": lambda m, x: m(x, is_training=True),
        "LSTM": lambda m, x: m(x2(x), m.initial_state(2))[0],
        "GRU": lambda m, x: m(x2(x), m.initial_state(2))[0],
        "VanillaRNN": lambda m, x: m(x2(x), m.initial_state(2))[0],
        "MultiHeadAttention": lambda m, x: m(x[:, 0], x[:, 0], x[:, 0]),
    }.get(short, lambda m, x: m(x))


_MAKERS: dict[str, Callable[[], Any]] = {
    "Linear": lambda: hk.Linear(3),
    "Bias": lambda: hk.Bias(),
    "Conv1D": lambda: hk.Conv1D(2, 3),
    "Conv2D": lambda: hk.Conv2D(2, 3),
    "Conv2DTranspose": lambda: hk.Conv2DTranspose(2, 3),
    "DepthwiseConv2D": lambda: hk.DepthwiseConv2D(1, 3),
    "Embed": lambda: hk.Embed(5, 3),
    "LayerNorm": lambda: hk.LayerNorm(-1, True, True),
    "RMSNorm": lambda: hk.RMSNorm(-1),
    "BatchNorm": lambda: hk.BatchNorm(True, True, 0.9),
    "GroupNorm": lambda: hk.GroupNorm(1),
    "LSTM": lambda: hk.LSTM(3),
    "GRU": lambda: hk.GRU(3),
    "VanillaRNN": lambda: hk.VanillaRNN(3),
    "MultiHeadAttention": lambda: hk.MultiHeadAttention(1, 2, w_init=hk.initializers.VarianceScaling()),
    "nets.MLP": lambda: hk.nets.MLP([3]),
}


@pytest.mark.parametrize("name", sorted(HAIKU_PARAMETER_MODULES))
def test_parameter_module_creates_state_and_leaks_it_from_a_raw_branch(name: str) -> None:
    make, call = _MAKERS[name.removeprefix("haiku.")], _module_call(name)
    x = jnp.ones((2, 4, 4, 3))
    plain = hk.transform_with_state(lambda x: call(make(), x))
    params, state = plain.init(jax.random.key(0), x)
    assert params or state, f"{name}: no parameters or state"

    def raw(x):
        module = make()
        assert isinstance(module, resolve(HAIKU_MODULE))
        return jax.lax.cond(True, lambda v: call(module, v), lambda v: call(module, v), x)

    leaking = hk.transform_with_state(raw)
    with pytest.raises(jax.errors.UnexpectedTracerError):
        params, state = leaking.init(jax.random.key(0), x)
        leaking.apply(params, state, jax.random.key(0), x)


def test_a_module_without_parameters_does_not_leak() -> None:
    """hk.Flatten keeps nothing: in a raw branch it runs (so it is not listed)."""
    assert "haiku.Flatten" not in HAIKU_PARAMETER_MODULES
    f = hk.transform(lambda x: jax.lax.cond(True, hk.Flatten(), hk.Flatten(), x))
    x = jnp.ones((2, 3, 3))
    assert f.apply(f.init(jax.random.key(0), x), None, x).shape == (2, 9)


@pytest.mark.parametrize("name", sorted(HAIKU_FRAMES))
def test_frame_transformation_runs_its_function_in_a_new_frame(name: str) -> None:
    """Inside a raw lax.scan body, a function given to the transformation runs in its own frame: its parameters
    are created there and nothing leaks into the frame around it."""
    transform = resolve(name)
    multi = name.startswith("haiku.multi_transform")

    def inner(x):
        return hk.Linear(2)(x)

    def made():
        return inner, (inner,)

    def forward(xs):
        def step(c, x):
            built = transform(made) if multi else transform(inner)
            params = built.init(jax.random.key(0), x)
            if name.endswith("with_state"):
                params = params[0]
            return c, jnp.sum(x) + sum(jnp.sum(p) for p in jax.tree.leaves(params))

        return jax.lax.scan(step, 0.0, xs)[1]

    outer = hk.transform(forward)
    xs = jnp.ones((3, 2))
    assert outer.init(jax.random.key(0), xs) == {}
    assert outer.apply({}, None, xs).shape == (3,)
