"""JAX106: a functional update whose result is thrown away."""

import jax.numpy as jnp


def reset_first(x):
    x.at[0].set(0.0)  # JAX106: x is unchanged; x = x.at[0].set(0.0)
    return x


print(reset_first(jnp.ones(3)))
