import jax
import jax.numpy as jnp


@jax.jit
def idx_nth_occurrence(operand, occurrence, n=0):
    return jnp.where(operand == occurrence, size=len(operand))[0][n]


print(idx_nth_occurrence(jnp.array([3.0, 1.0, 3.0, 2.0, 3.0]), 3.0, 1))
