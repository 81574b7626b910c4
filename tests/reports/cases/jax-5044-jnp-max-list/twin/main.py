import jax.numpy as jnp

best = jnp.max(jnp.array([1, 2]))
print("best:", best)
