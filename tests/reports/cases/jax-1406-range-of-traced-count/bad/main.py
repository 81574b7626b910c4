import jax
import jax.numpy as jnp


def repeated_smooth(x, num):
    for _ in range(num):  # expect: JAX102
        x = 0.5 * (x + jnp.roll(x, 1))
    return x


print(repeated_smooth(jnp.arange(6.0), 3))
print(jax.jit(repeated_smooth)(jnp.arange(6.0), 3))
