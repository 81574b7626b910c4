import jax
import jax.numpy as jnp

from ellip.cel import cel_agm

kc = jnp.array([0.2, 0.5, 0.9])
print(cel_agm(kc))
print(jax.jit(cel_agm)(kc))
