import jax
import jax.numpy as jnp
from potentials.nfw import TriaxialNFW


@jax.jit
def energy(params, xyz):
    pot = TriaxialNFW(m=params[0], r_s=params[1], q1=params[2], q2=params[3])
    return pot.potential(xyz)


print(energy(jnp.array([1.0, 2.0, 0.9, 0.8]), jnp.array([1.0, 0.5, 0.2])))
