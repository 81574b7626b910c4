"""An eager `jax.vmap` stages nothing out: only values computed from its mapped arguments are tracers.

Each expectation was checked on jax 0.10: inside `jax.vmap(f)(xs)` called outside jit, `jnp.zeros(3)` and
`jax.random.split(closed_key)` are concrete arrays and a mapped argument is a BatchTracer; under `jax.jit`,
`lax.scan` or any other staging transformation the same calls give tracers.
"""

from __future__ import annotations

from tests.analysis.test_library import traced_probes


def test_eager_vmap_body_computes_concrete_arrays_from_unmapped_values() -> None:
    seen = traced_probes(
        """
        import jax
        import jax.numpy as jnp

        def outer(xs, key, scale):
            def body(x, s):
                probe(jnp.zeros(3))
                probe(jax.random.split(key))
                probe(jnp.ones(3) * s)
                probe(x)
                probe(jnp.sin(x))

                def inner():
                    probe(jnp.arange(2))

                inner()
                return x

            return jax.vmap(body, in_axes=(0, None))(xs, scale)
        """
    )
    assert seen == {
        "jnp.zeros(3)": False,
        "jax.random.split(key)": False,
        "jnp.ones(3) * s": False,
        "x": True,
        "jnp.sin(x)": True,
        "jnp.arange(2)": False,
    }


def test_staging_transformations_make_every_jnp_result_a_tracer() -> None:
    seen = traced_probes(
        """
        import jax
        import jax.numpy as jnp
        from jax import lax

        def mapped_in_jit(x):
            probe(jnp.zeros(1))
            return x

        def mapped_in_scan(c, x):
            probe(jnp.zeros(2))
            return c, x

        @jax.vmap
        def called_from_jit(x):
            probe(jnp.zeros(3))
            return x

        def helper(x):
            probe(jnp.zeros(4))
            return x

        @jax.jit
        def step(xs):
            def body(x):
                probe(jnp.zeros(5))
                return helper(x)

            jax.vmap(mapped_in_jit)(xs)
            called_from_jit(xs)
            return jax.vmap(body)(xs)

        jax.jit(jax.vmap(lambda x: probe(jnp.zeros(6))))
        lax.scan(jax.vmap(mapped_in_scan, in_axes=(None, 0)), 0.0, None)
        """
    )
    assert seen == {f"jnp.zeros({n})": True for n in range(1, 7)}


def test_helper_called_only_from_an_eager_vmap_is_eager_too() -> None:
    seen = traced_probes(
        """
        import jax
        import jax.numpy as jnp

        def helper(x):
            probe(jnp.zeros(1))
            probe(x + 1)
            return x

        def run(xs):
            return jax.vmap(lambda x: helper(x))(xs)
        """
    )
    assert seen == {"jnp.zeros(1)": False, "x + 1": True}
