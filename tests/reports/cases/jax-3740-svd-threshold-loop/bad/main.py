from functools import partial

import jax
import jax.numpy as jnp


@partial(jax.jit, static_argnums=1)
def round_core(core, delta):
    u, s, vt = jnp.linalg.svd(core, full_matrices=False)
    kept = []
    for x in s:
        if x < delta:  # expect: JAX101
            kept.append(0.0)
        else:
            kept.append(x)
    return (u * jnp.stack(kept)) @ vt


core = jax.random.normal(jax.random.key(0), (6, 4))
print(round_core(core, 0.5))
