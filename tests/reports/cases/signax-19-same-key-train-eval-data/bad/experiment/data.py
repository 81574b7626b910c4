import jax.numpy as jnp
import jax.random as jrandom


def get_bm_noise(n_points, num_samples, random_key):
    increments = jrandom.normal(random_key, (num_samples, n_points)) / jnp.sqrt(n_points)
    return jnp.cumsum(increments, axis=1)


def get_ou_signal(random_key, num_samples, n_points, theta=0.5):
    noise = jrandom.normal(random_key, (num_samples, n_points))
    return noise * jnp.exp(-theta * jnp.linspace(0.0, 1.0, n_points))
