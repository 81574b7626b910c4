from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def truncate(core, delta):
    u, s, vt = jnp.linalg.svd(core, full_matrices=False)
    rc = jnp.maximum(1, (s >= delta).sum())
    keep = jnp.arange(s.shape[0]) < rc
    return (u * jnp.where(keep, s, 0.0)) @ vt


core = jax.random.normal(jax.random.key(0), (6, 4))
print(truncate(core, 0.8))
