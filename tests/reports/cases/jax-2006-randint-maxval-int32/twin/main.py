import jax


def worker_seeds(key, count):
    # one seed per worker, spread over the whole non-negative 32-bit range
    return jax.random.randint(key, (count,), 0, 2**31 - 1)


seeds = worker_seeds(jax.random.PRNGKey(1), 4)
print("seeds:", seeds)
