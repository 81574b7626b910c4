"""JAX301: the same PRNG key drawn from twice gives the same random bits twice."""

import jax
import jax.numpy as jnp


def add_noise(x, key):
    noise = jax.random.normal(key, x.shape)
    mask = jax.random.bernoulli(key, 0.9, x.shape)  # JAX301: the noise's key again
    return jnp.where(mask, x + noise, 0.0)


def sample_many(key, n):
    samples = []
    for _ in range(n):
        samples.append(jax.random.normal(key, (2,)))  # JAX301: the same sample on every iteration
    return jnp.stack(samples)


def sample_many_fixed(key, n):
    samples = []
    for _ in range(n):
        key, sub = jax.random.split(key)
        samples.append(jax.random.normal(sub, (2,)))
    return jnp.stack(samples)
