import jax
import jax.numpy as jnp

from npcompat.comparison import array_equal

x = jnp.arange(4.0)
print(array_equal(x, x))
print(jax.jit(array_equal)(x, x + 1))
