"""JAX102: converting a tracer to a Python number inside jax.jit."""

import jax
import jax.numpy as jnp


@jax.jit
def mean_loss(pred, target):
    loss = jnp.mean((pred - target) ** 2)
    return float(loss)  # JAX102: float() needs a concrete value; return the array
