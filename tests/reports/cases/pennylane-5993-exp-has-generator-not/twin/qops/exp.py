import jax.numpy as jnp

from qops.gates import RX


class Exp:
    """exp(coeff * base) for a Pauli base."""

    def __init__(self, base, coeff):
        self.base, self.coeff = base, coeff

    @property
    def has_generator(self):
        return self.base.is_hermitian

    def decomposition(self):
        # the rotation angle comes from the imaginary part; a real part cannot be checked while tracing
        return [RX(jnp.real(2j * self.coeff))]
