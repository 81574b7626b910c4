import jax.numpy as jnp
import numpy as np


def asarray(x, dtype=None):
    x = np.asarray(x)  # expect: JAX102
    return jnp.asarray(x, dtype=dtype)
