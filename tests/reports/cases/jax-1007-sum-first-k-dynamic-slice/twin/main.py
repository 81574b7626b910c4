import jax
import jax.numpy as jnp


@jax.jit
def sum_first_k(a, k):
    n = len(a)
    return jnp.sum(jnp.where(jnp.arange(n) < k, a, 0))


print(sum_first_k(jnp.arange(3.0), 2))
