import jax
import jax.numpy as jnp


def swap_and_measure(pair):
    first, second = pair[1], pair[0]
    return jnp.sin(first) + jnp.cos(second), [first, second]


pair = [jnp.arange(3.0), jnp.ones(3)]
out, pair = jax.vmap(swap_and_measure)(pair)
if bool(jnp.all(pair[0] == jnp.arange(3.0))):
    print("OBSERVED: the list passed to the vmapped function was not swapped")
