import jax
import jax.numpy as jnp

from qops.exp import Exp
from qops.gates import PauliX, expval_z


@jax.jit
def circuit(theta):
    op = Exp(PauliX(), coeff=-1j * jnp.cos(theta))
    return expval_z(op.decomposition())


print(circuit(jnp.pi / 3))
