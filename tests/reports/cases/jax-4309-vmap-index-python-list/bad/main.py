import jax
import jax.numpy as jnp

res_map = jnp.arange(12).reshape(3, 4)
signal = jnp.linspace(0.0, 1.0, 12 * 5).reshape(12, 5)

new_map = []
for j in range(res_map.shape[0] - 1):
    for i in range(res_map.shape[1] - 1):
        new_map.append([j, i])


def inner(n):
    j, i = new_map[n]  # expect: JAX102
    return signal[res_map[j, i]] + signal[res_map[j, i + 1]]


features = jax.vmap(inner)(jnp.arange(len(new_map)))
print(features.shape)
