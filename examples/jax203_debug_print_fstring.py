"""JAX203: an f-string in jax.debug.print formats the tracer at trace time."""

import jax


@jax.jit
def step(x):
    jax.debug.print(f"x = {x}")  # JAX203: jax.debug.print("x = {}", x)
    return x * 2
