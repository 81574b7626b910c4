import jax
import jax.numpy as jnp


def pair_energy(a, b):
    return jnp.exp(-jnp.sum((a - b) ** 2))


def all_pairs(data_a, data_b):
    return jax.vmap(jax.vmap(pair_energy, in_axes=(None, 0)), in_axes=(0, None))(data_a, data_b)


data_a = jax.random.normal(jax.random.key(0), (12, 3))
data_b = jax.random.normal(jax.random.key(1), (10, 3))
matrix = all_pairs(data_a, data_b)
jaxpr = jax.make_jaxpr(all_pairs)(data_a, data_b)
if len(jaxpr.eqns) >= data_a.shape[0] * data_b.shape[0]:
    print(f"OBSERVED: {len(jaxpr.eqns)} equations for a {matrix.shape} matrix: one computation per pair")
