import jax
import jax.numpy as jnp


def swap_and_measure(pair):
    pair[0], pair[1] = pair[1], pair[0]  # expect: JAX202
    return jnp.sin(pair[0]) + jnp.cos(pair[1])


pair = [jnp.arange(3.0), jnp.ones(3)]
out = jax.vmap(swap_and_measure)(pair)
if bool(jnp.all(pair[0] == jnp.arange(3.0))):
    print("OBSERVED: the list passed to the vmapped function was not swapped")
