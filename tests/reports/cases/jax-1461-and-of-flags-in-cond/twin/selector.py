import jax


@jax.jit
def pick(use_first, first_ready, a, b):
    return jax.lax.cond(use_first & first_ready, lambda ab: ab[0], lambda ab: ab[1], (a, b))
