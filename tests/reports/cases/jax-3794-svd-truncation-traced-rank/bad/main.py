from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def truncate(core, delta):
    u, s, vt = jnp.linalg.svd(core, full_matrices=False)
    rc = jnp.maximum(1, (s >= delta).sum())
    u, s, vt = u[:, :rc], s[:rc], vt[:rc, :]  # expect: JAX102
    return (u * s) @ vt


core = jax.random.normal(jax.random.key(0), (6, 4))
print(truncate(core, 0.8))
