"""JAX202: NumPy's global random state inside jit is read once and baked in."""

import jax
import numpy as np


@jax.jit
def noisy(x):
    return x + np.random.normal(size=x.shape)  # JAX202: same "noise" on every call; use jax.random
