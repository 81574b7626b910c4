import jax.numpy as jnp

from speclib._logsumexp import wrap_radians

angles = jnp.array([0.5, 4.0, -7.0, 3.0])
print(wrap_radians(angles))
