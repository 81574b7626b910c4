"""JAX103: NumPy-style in-place assignment on a JAX array."""

import jax.numpy as jnp


def one_hot(index, size):
    out = jnp.zeros(size)
    out[index] = 1.0  # JAX103: JAX arrays are immutable; out = out.at[index].set(1.0)
    return out
