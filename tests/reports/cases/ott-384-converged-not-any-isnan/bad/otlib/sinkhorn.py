from typing import NamedTuple

import jax
import jax.numpy as jnp


class SinkhornOutput(NamedTuple):
    f: jax.Array
    g: jax.Array
    errors: jax.Array
    threshold: float

    @property
    def converged(self):
        return jnp.logical_and(
            not jnp.any(jnp.isnan(self.errors)), self.errors[-1] < self.threshold  # expect: JAX101
        )


def sinkhorn(cost, a, b, epsilon=0.1, iterations=20, threshold=1e-3):
    def step(carry, _):
        f, g = carry
        f = epsilon * jnp.log(a) - epsilon * jax.nn.logsumexp((g[None, :] - cost) / epsilon, axis=1)
        g = epsilon * jnp.log(b) - epsilon * jax.nn.logsumexp((f[:, None] - cost) / epsilon, axis=0)
        plan = jnp.exp((f[:, None] + g[None, :] - cost) / epsilon)
        return (f, g), jnp.sum(jnp.abs(plan.sum(axis=1) - a))

    (f, g), errors = jax.lax.scan(step, (jnp.zeros_like(a), jnp.zeros_like(b)), None, length=iterations)
    return SinkhornOutput(f, g, errors, threshold)
