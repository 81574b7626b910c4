from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnames=("widths",))
def padded_total(x, widths):
    parts = [jnp.pad(x, (0, w)).sum() for w in widths]
    return sum(parts)


widths = [1, 2, 3]
print(padded_total(jnp.ones(4), widths=widths))  # expect: JAX402
