"""JAX502: jax.numpy reductions do not accept Python lists (NumPy's do)."""

import jax.numpy as jnp


def total_loss(reconstruction_loss, kl_loss, l2_penalty):
    return jnp.sum([reconstruction_loss, kl_loss, l2_penalty])  # JAX502: raises TypeError; use jnp.array([...])
