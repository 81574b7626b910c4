import itertools

import jax
import jax.numpy as jnp

SECTION_SIZES = [2, 3, 4]


@jax.jit
def sections_total(x):
    boundaries = list(itertools.accumulate(SECTION_SIZES))[:-1]
    parts = jnp.split(x, boundaries)
    return [p.sum() for p in parts]


print(sections_total(jnp.arange(9.0)))
