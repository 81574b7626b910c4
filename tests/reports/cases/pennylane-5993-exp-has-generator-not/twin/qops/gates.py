import jax.numpy as jnp

X = jnp.array([[0.0, 1.0], [1.0, 0.0]], dtype=jnp.complex64)
Z = jnp.array([[1.0, 0.0], [0.0, -1.0]], dtype=jnp.complex64)


class PauliX:
    is_hermitian = True
    matrix = X


class RX:
    def __init__(self, angle):
        self.angle = angle

    def matrix(self):
        c, s = jnp.cos(self.angle / 2), jnp.sin(self.angle / 2)
        return jnp.array([[c, -1j * s], [-1j * s, c]], dtype=jnp.complex64)


def expval_z(ops):
    state = jnp.array([1.0, 0.0], dtype=jnp.complex64)
    for op in ops:
        state = op.matrix() @ state
    return jnp.real(jnp.conj(state) @ Z @ state)
