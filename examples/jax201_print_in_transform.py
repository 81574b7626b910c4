"""JAX201: print inside jit runs once at trace time and shows a tracer."""

import jax


@jax.jit
def step(x):
    print("x =", x)  # JAX201: jax.debug.print("x = {}", x)
    return x * 2
