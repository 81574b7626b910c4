"""JAX402: a list passed to a static argument cannot be hashed into jit's cache key."""

from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames="hidden_sizes")
def mlp_apply(params, x, hidden_sizes):
    for w, size in zip(params, hidden_sizes):
        x = jnp.tanh(x @ w[:, :size])
    return x


def predict(params, x):
    return mlp_apply(params, x, hidden_sizes=[128, 64])  # JAX402: use a tuple (128, 64)
