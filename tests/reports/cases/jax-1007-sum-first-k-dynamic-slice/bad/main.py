import jax
import jax.numpy as jnp


@jax.jit
def sum_first_k(a, k):
    return jnp.sum(jax.lax.dynamic_slice(a, (0,), (k,)))  # expect: JAX102


print(sum_first_k(jnp.arange(3.0), 2))
