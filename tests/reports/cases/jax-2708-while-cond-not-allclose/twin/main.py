import jax.numpy as jnp
from jax import lax


def step(x):
    return x + 0.5


def not_there_yet(x):
    return jnp.logical_not(jnp.allclose(x, 4.0))


print(lax.while_loop(not_there_yet, step, 0.0))
