from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=(2,))
def map_row(z, alpha, T):
    return jnp.sum(jnp.exp(-alpha * z / T))


alpha, T = 0.5, 3
rows = jnp.arange(12.0).reshape(4, 3)
out = jax.vmap(partial(map_row, alpha, T))(rows)  # expect: JAX402
print(out)
