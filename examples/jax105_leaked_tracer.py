"""JAX105: a traced value stored where it outlives the trace."""

import jax

history = []


@jax.jit
def step(x):
    y = x * 2
    history.append(y)  # JAX105: the tracer escapes; return y instead
    return y
