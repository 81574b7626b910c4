import jax
import jax.numpy as jnp


def residual(log_conc, totals):
    return jnp.exp(log_conc) + 0.1 * jnp.exp(2 * log_conc) - totals


def _warn():
    jax.debug.print("solver did not converge below warn_cutoff; raise iterations")


def solve(totals, iterations=4, warn_cutoff=1e-8):
    log_conc = jnp.log(totals)
    adjust = jnp.zeros_like(totals)
    for _ in range(iterations):
        jac = jax.jacfwd(residual)(log_conc, totals)
        adjust = -jnp.linalg.solve(jac, residual(log_conc, totals))
        log_conc = log_conc + adjust
    jax.lax.cond(jnp.any(jnp.abs(adjust) > warn_cutoff), _warn, lambda: None)
    return jnp.exp(log_conc)
