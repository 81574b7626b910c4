import jax
import jax.numpy as jnp


def accumulate():
    seq = [jnp.zeros([])]

    def bump():
        seq[0] += 1  # expect: JAX105
        return seq[0]

    jax.checkpoint(bump)()
    jax.checkpoint(bump)()
    return seq[0] * 2


print(jax.jit(accumulate)())
