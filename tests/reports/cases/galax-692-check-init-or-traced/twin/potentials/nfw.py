import equinox as eqx
import jax.numpy as jnp


class TriaxialNFW(eqx.Module):
    m: jnp.ndarray
    r_s: jnp.ndarray
    q1: jnp.ndarray
    q2: jnp.ndarray

    def __check_init__(self):
        eqx.error_if(self.q1, jnp.logical_or(self.q1 <= 0, self.q2 <= 0), "axis ratios must be positive")

    def potential(self, xyz):
        r = jnp.sqrt(xyz[0] ** 2 + (xyz[1] / self.q1) ** 2 + (xyz[2] / self.q2) ** 2)
        return -self.m * jnp.log1p(r / self.r_s) / r
