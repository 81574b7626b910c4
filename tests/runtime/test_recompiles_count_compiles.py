"""`jaxlint.runtime.count_compiles()` in this process, with real JAX on CPU."""

from __future__ import annotations

import functools
import threading
import traceback

import pytest

jax = pytest.importorskip("jax")
jnp = jax.numpy

from jaxlint.runtime import count_compiles  # noqa: E402
from tests.conftest import exact_recompiles  # noqa: E402

pytestmark = pytest.mark.slow


def test_counts_compiles_per_function_and_in_total():
    @jax.jit
    def step(x):
        return x * 2

    with count_compiles() as counts:
        for n in (3, 3, 4, 5):
            step(jnp.ones(n))
    assert counts.compiles_of(step) == 3
    assert counts.traces_of("test_counts_compiles_per_function_and_in_total.<locals>.step") == 3
    assert counts.compiles == 3 and counts.traces == 3
    assert counts.all_compiles >= 3  # plus jnp.ones' eager dispatch
    stats = counts.stats(step)
    if exact_recompiles():  # JAX 0.9 on; before it, counts only
        assert [r["reason"] for r in stats.reasons] == [
            "arg 'x': f32[3] → f32[4]",
            "arg 'x': f32[4] → f32[5]",
        ]
    assert "3 compiles, 3 traces" in counts.report()


def test_only_counts_inside_the_block():
    @jax.jit
    def step(x):
        return x + 1

    step(jnp.ones(2))
    with count_compiles() as counts:
        step(jnp.ones(2))  # cached
    step(jnp.ones(3))
    assert counts.compiles_of(step) == 0 and counts.stats(step) is None


def test_static_weak_type_and_reasons():
    @functools.partial(jax.jit, static_argnames="mode")
    def f(x, mode):
        return x if mode == "id" else -x

    with count_compiles() as counts:
        f(1.0, mode="id")
        f(jnp.float32(1.0), mode="id")
        f(jnp.float32(1.0), mode="neg")
    assert counts.traces_of(f) == 3
    if not exact_recompiles():
        pytest.skip("retrace reasons need JAX's per-call jit hook (JAX 0.9 on)")
    reasons = [r["reason"] for r in counts.stats(f).reasons]
    assert reasons == ["arg 'x': weak f32[] → f32[]", "static 'mode': 'id' → 'neg'"]


def test_nested_jit_and_grad_of_jit():
    @jax.jit
    def inner(x):
        return jnp.sin(x).sum()

    @jax.jit
    def outer(x):
        return inner(x) * 2

    with count_compiles() as counts:
        outer(jnp.ones(3))
        jax.grad(outer)(jnp.ones(3))  # more executables of `outer`, no new trace
    assert counts.traces_of(inner) == 1 and counts.compiles_of(inner) == 0
    assert counts.traces_of(outer) == 1 and counts.compiles_of(outer) >= 2


def test_blocks_nest_and_count_other_threads():
    @jax.jit
    def f(x):
        return x - 1

    with count_compiles() as outer:
        with count_compiles() as inner:
            f(jnp.ones(2))
        thread = threading.Thread(target=lambda: f(jnp.ones(7)))
        thread.start()
        thread.join()
    assert inner.compiles_of(f) == 1
    assert outer.compiles_of(f) == 2


def test_user_errors_keep_a_clean_traceback():
    @jax.jit
    def bad(x):
        if x > 0:
            return x
        return -x

    with count_compiles() as counts, pytest.raises(jax.errors.TracerBoolConversionError) as info:
        bad(1.0)
    frames = [frame.filename for frame in traceback.extract_tb(info.value.__traceback__)]
    assert not any(name.endswith("jax_hooks.py") for name in frames)
    assert counts.traces_of(bad) == 0  # a failed trace is not cached and not counted


def test_lookup_by_qualname():
    def make():
        @jax.jit
        def g(x):
            return x

        return g

    a = make()
    with count_compiles() as counts:
        a(jnp.ones(1))
    assert counts.compiles_of("test_lookup_by_qualname.<locals>.make.<locals>.g") == 1
    assert counts.compiles_of("nothing") == 0
