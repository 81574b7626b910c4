import jax


def sample_normal(rng, size):
    rng_key = rng["jax_state"]
    rng_key, sample_key = jax.random.split(rng_key, 2)
    sample = jax.random.normal(sample_key, size)
    rng["jax_state"] = rng_key
    return rng, sample
