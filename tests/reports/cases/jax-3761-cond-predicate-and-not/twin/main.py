import jax
import jax.numpy as jnp


def shift_down(x):
    return x - 5000.0


def shift_up(x):
    return x + 100.0


@jax.jit
def both_negative(x, y):
    return jax.lax.cond((x < 0) & (y < 0), shift_down, shift_up, x)


@jax.jit
def non_negative(x):
    return jax.lax.cond(jnp.logical_not(x < 0), shift_down, shift_up, x)


print(both_negative(jnp.float32(0.3), jnp.float32(0.1)))
print(non_negative(jnp.float32(0.3)))
