import time

import jax
import jax.numpy as jnp
import jax.random as jr
import lineax as lx
from diffrax import ControlTerm, Euler, MultiTerm, ODETerm, SaveAt, VirtualBrownianTree, diffeqsolve

t0, t1 = 0.0, 1.0


def drift(t, y, args):
    return -y


def diffusion(t, y, args):
    return lx.DiagonalLinearOperator(jnp.ones(2))


key = jr.PRNGKey(int(time.time()))


def simulate(y0):
    brownian = VirtualBrownianTree(t0, t1, tol=1e-3, shape=(2,), key=key)  # expect: JAX301
    terms = MultiTerm(ODETerm(drift), ControlTerm(diffusion, brownian))
    solution = diffeqsolve(terms, Euler(), t0, t1, dt0=0.05, y0=y0, saveat=SaveAt(t1=True))
    return solution.ys[0]


paths = jax.vmap(simulate)(jnp.ones((4, 2)))
if bool(jnp.all(paths == paths[0])):
    print("OBSERVED: the 4 vmapped SDE trajectories are identical: they share one Brownian motion")
