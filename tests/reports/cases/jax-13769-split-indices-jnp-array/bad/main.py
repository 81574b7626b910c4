import jax
import jax.numpy as jnp

SECTION_SIZES = [2, 3, 4]


@jax.jit
def sections_total(x):
    boundaries = jnp.cumsum(jnp.array(SECTION_SIZES))[:-1]
    parts = jnp.split(x, boundaries)  # expect: JAX102
    return [p.sum() for p in parts]


print(sections_total(jnp.arange(9.0)))
