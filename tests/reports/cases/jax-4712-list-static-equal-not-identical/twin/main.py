from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(0,))
def shifted(offsets, x):
    return x + sum(offsets)


values = jnp.zeros((3,))
for _ in range(3):
    offsets = (0, 1)
    values = shifted(offsets, values)
print(values)
