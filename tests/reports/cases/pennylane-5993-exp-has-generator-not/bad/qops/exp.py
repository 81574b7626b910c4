import numpy as np

from qops.gates import RX


class Exp:
    """exp(coeff * base) for a Pauli base."""

    def __init__(self, base, coeff):
        self.base, self.coeff = base, coeff

    @property
    def has_generator(self):
        return self.base.is_hermitian and not np.real(self.coeff)  # expect: JAX101

    def decomposition(self):
        if self.has_generator:
            return [RX(2j * self.coeff)]
        raise NotImplementedError("exp with a non-imaginary coefficient has no decomposition")
