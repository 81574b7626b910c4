import jax.numpy as jnp

from speclib.vq import whiten

features = jnp.array([[1.0, 2.0, 5.0], [3.0, 2.0, 1.0], [5.0, 2.0, 3.0]])
print(whiten(features))
