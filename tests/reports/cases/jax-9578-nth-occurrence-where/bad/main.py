import jax
import jax.numpy as jnp


@jax.jit
def idx_nth_occurrence(operand, occurrence, n=0):
    arr = jnp.where(operand == occurrence, operand, jnp.nan)
    return jnp.where(arr == arr)[0][n]  # expect: JAX104


print(idx_nth_occurrence(jnp.array([3.0, 1.0, 3.0, 2.0, 3.0]), 3.0, 1))
