import jax
import jax.numpy as jnp


def symmetric_range(x):
    return jnp.arange(-x, x)


symmetric_range_jit = jax.jit(symmetric_range, static_argnums=0)

half_width = int(jnp.add(4, 1))
print(symmetric_range(half_width))
print(symmetric_range_jit(half_width))
