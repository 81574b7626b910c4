import warnings

import jax
import jax.numpy as jnp
import numpy as np


def residual(log_conc, totals):
    return jnp.exp(log_conc) + 0.1 * jnp.exp(2 * log_conc) - totals


def solve(totals, iterations=4, warn_cutoff=1e-8):
    log_conc = jnp.log(totals)
    adjust = jnp.zeros_like(totals)
    for _ in range(iterations):
        jac = jax.jacfwd(residual)(log_conc, totals)
        adjust = -jnp.linalg.solve(jac, residual(log_conc, totals))
        log_conc = log_conc + adjust
    if np.any(np.abs(adjust) > warn_cutoff):  # expect: JAX102
        warnings.warn("solver did not converge below warn_cutoff; raise iterations")
    return jnp.exp(log_conc)
