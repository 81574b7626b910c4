import jax


def sample_normal(rng, size):
    rng_key = rng["jax_state"]
    sample = jax.random.normal(rng_key, size)
    rng["jax_state"] = jax.random.split(rng_key, 1)[0]  # expect: JAX301
    return rng, sample
