import jax.numpy as jnp

from packing.rnn import run_packed

packed = jnp.arange(18.0).reshape(9, 2) / 10
print(run_packed(packed, jnp.array([4, 3, 2]), jnp.ones((2, 3))))
