import jax.numpy as jnp
from solvers.jax_bdf_solver import bdf_init


def decay(y, t):
    return -0.5 * y


state = bdf_init(decay, 0.0, jnp.array([1.0, 2.0]), 1e-3, rtol=1e-6, atol=1e-8)
print("newton tolerance:", state["newton_tol"], "initial step:", state["h"])
