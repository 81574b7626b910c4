import jax.numpy as jnp

best = jnp.max([1, 2])  # expect: JAX502
print("best:", best)
