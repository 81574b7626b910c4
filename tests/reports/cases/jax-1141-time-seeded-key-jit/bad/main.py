import time

import jax
import jax.numpy as jnp


@jax.jit
def noisy_step(x):
    key = jax.random.PRNGKey(int(time.time() * 1000) % 2**31)  # expect: JAX202
    return x + jax.random.normal(key, x.shape)


x = jnp.zeros(3)
first = noisy_step(x)
time.sleep(0.05)
second = noisy_step(x)
if bool(jnp.all(first == second)):
    print("OBSERVED: two steps 50 ms apart drew the same noise: the clock was read at trace time")
