import jax
import jax.numpy as jnp


def power_law(x, option=False):
    return x**2 if option else x**3  # expect: JAX101


power_law_jit = jax.jit(power_law)
xs = jnp.arange(3.0)
print(jax.vmap(power_law)(xs))
print(power_law_jit(xs, True))
