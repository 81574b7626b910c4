import jax
import jax.numpy as np

GRAD_REF = np.array([[-1.0, -1.0], [1.0, 0.0], [0.0, 1.0]])  # P1 triangle shape-function gradients


def element_stiffness(coords):
    jacobian = coords.T @ GRAD_REF
    det = np.linalg.det(jacobian)
    grads = GRAD_REF @ np.linalg.inv(jacobian)
    return 0.5 * np.abs(det) * grads @ grads.T, det


@jax.jit
def assemble(nodes, elements):
    return jax.vmap(element_stiffness)(nodes[elements])
