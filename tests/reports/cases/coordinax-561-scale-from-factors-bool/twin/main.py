import equinox as eqx
import jax.numpy as jnp

from coordlib.transforms import Scale

build = eqx.filter_jit(Scale.from_factors)
scale = build(jnp.asarray([2.0, 3.0, 4.0]))
print(scale(jnp.ones(3)))
