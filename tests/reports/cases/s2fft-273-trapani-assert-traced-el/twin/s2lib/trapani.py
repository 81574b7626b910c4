import warnings
from functools import partial

import jax
import jax.numpy as jnp


def _check_inputs(dl, L):
    assert L > 0
    assert dl.shape[-1] == 2 * L - 1
    if L > 1024:
        warnings.warn("Trapani recursion may be unstable for L > 1024")


@partial(jax.jit, static_argnums=(2,))
def compute_eighth(dl, el, L):
    _check_inputs(dl, L)
    m = jnp.arange(-(L - 1), L)
    scale = jnp.sqrt((2 * el - 1.0) / (2 * el))
    return jnp.where(jnp.abs(m) <= el, dl * scale, 0.0)
