import jax.numpy as jnp


def asarray(x, dtype=None):
    return jnp.asarray(x, dtype=dtype)
