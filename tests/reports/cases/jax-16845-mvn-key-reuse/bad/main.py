import jax.numpy as jnp
from jax import random

key = random.PRNGKey(1337)
outer = random.multivariate_normal(key, jnp.array([0.0]), jnp.eye(1), shape=(4000,))
inner = random.multivariate_normal(key, outer, jnp.eye(1))  # expect: JAX301

variance = float(jnp.var(inner))
if variance > 3.0:
    print(f"OBSERVED: variance of the sum is {variance:.2f}, expected about 2 (the two draws share a key)")
