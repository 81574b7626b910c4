import time

import jax
import jax.numpy as jnp


@jax.jit
def noisy_step(x, key):
    return x + jax.random.normal(key, x.shape)


key = jax.random.PRNGKey(int(time.time() * 1000) % 2**31)
first_key, second_key = jax.random.split(key)
x = jnp.zeros(3)
first = noisy_step(x, first_key)
time.sleep(0.05)
second = noisy_step(x, second_key)
if bool(jnp.all(first == second)):
    print("OBSERVED: two steps 50 ms apart drew the same noise: the clock was read at trace time")
