"""JAX104: boolean-mask indexing with a traced mask inside jax.jit."""

import jax


@jax.jit
def positive_mean(x):
    positives = x[x > 0]  # JAX104: shape depends on values; use jnp.where(x > 0, x, 0)
    return positives.mean()
