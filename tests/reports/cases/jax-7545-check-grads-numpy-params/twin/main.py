import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.test_util import check_grads

RA0, DEC0 = 0.3, -0.5


def radec2lm(radec):
    lm = jnp.zeros((radec.shape[0], 2))

    def body(s, lm):
        ra, dec = radec[s]
        delta_ra = ra - RA0
        l = jnp.cos(dec) * jnp.sin(delta_ra)
        m = jnp.sin(dec) * jnp.cos(DEC0) - jnp.cos(dec) * jnp.sin(DEC0) * jnp.cos(delta_ra)
        return lm.at[s, 0].set(l).at[s, 1].set(m)

    return lax.fori_loop(0, radec.shape[0], body, lm)


def visibilities(params):
    radec = jnp.asarray(params["radec"])
    stokes = jnp.asarray(params["stokes"])
    lm = radec2lm(radec)
    return jnp.sum(stokes * jnp.cos(2 * jnp.pi * lm[:, 0]) * jnp.cos(2 * jnp.pi * lm[:, 1]))


params = {"radec": np.array([[0.31, -0.49], [0.29, -0.52]]), "stokes": np.array([1.0, 0.5])}
check_grads(visibilities, (params,), order=1, modes=["rev"])
print("gradients check out")
