"""JAX101: Python `if` on a traced value inside jax.jit."""

import jax
import jax.numpy as jnp


@jax.jit
def clipped_step(x, lr):
    update = lr * jnp.tanh(x)
    if update > 1.0:  # JAX101: `update` is a tracer; use jnp.minimum or jnp.where
        update = 1.0
    return x - update
