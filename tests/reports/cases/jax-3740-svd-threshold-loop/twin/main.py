from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def round_core(core, delta):
    u, s, vt = jnp.linalg.svd(core, full_matrices=False)
    kept = jnp.where(s < delta, 0.0, s)
    return (u * kept) @ vt


core = jax.random.normal(jax.random.key(0), (6, 4))
print(round_core(core, 0.5))
