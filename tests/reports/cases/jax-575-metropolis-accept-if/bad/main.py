import itertools

import jax
import jax.numpy as jnp

N = 6
PAIRS = list(itertools.combinations(range(N), 2))


def energy(fields, couplings, spins):
    pair_terms = jnp.array([spins[i] * spins[j] for i, j in PAIRS])
    return jnp.dot(fields, spins) + jnp.dot(couplings, pair_terms)


@jax.jit
def sweep(fields, couplings, spins, key):
    for i in range(N):
        flipped = spins.at[i].set(1 - spins[i])
        delta = energy(fields, couplings, flipped) - energy(fields, couplings, spins)
        key, sub = jax.random.split(key)
        if delta < 0:  # expect: JAX101
            spins = flipped
        elif jax.random.uniform(sub) < jnp.exp(-delta):  # expect: JAX101
            spins = flipped
    return spins


fields = jnp.linspace(-1.0, 1.0, N)
couplings = jnp.full(len(PAIRS), 0.1)
spins = jnp.zeros(N)
print(sweep(fields, couplings, spins, jax.random.key(0)))
