import jax.numpy as jnp


def array_equal(a1, a2):
    a1, a2 = jnp.asarray(a1), jnp.asarray(a2)
    if a1.shape != a2.shape:
        return False
    return bool(jnp.asarray(a1 == a2).all())  # expect: JAX101
