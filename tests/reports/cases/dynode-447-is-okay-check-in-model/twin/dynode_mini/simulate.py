import logging

import diffrax
import jax
import jax.numpy as jnp

logger = logging.getLogger("dynode_mini")


def sir(t, y, beta):
    s, i, r = y
    infections = beta * s * i
    return jnp.stack([-infections, infections - 0.1 * i, 0.1 * i])


def _report(ok):
    if not ok:
        logger.warning("ODE solve failed: hit max_steps")


def simulate(beta, t_max=30.0):
    solution = diffrax.diffeqsolve(
        diffrax.ODETerm(sir),
        diffrax.Tsit5(),
        t0=0.0,
        t1=t_max,
        dt0=0.1,
        y0=jnp.array([0.99, 0.01, 0.0]),
        args=beta,
        saveat=diffrax.SaveAt(ts=jnp.linspace(0.0, t_max, 16)),
        max_steps=4096,
        throw=False,
    )
    jax.debug.callback(_report, diffrax.is_okay(solution.result))
    return solution.ys[:, 1]
