import jax.numpy as jnp
import numpy as np


class TensorNetwork:
    """Holds the nodes of a network; every tensor is stored in the backend's array type."""

    def __init__(self, backend="numpy", dtype=None):
        self.backend = backend
        self.dtype = dtype
        self.nodes = []

    def add_node(self, tensor):
        if self.backend == "jax":
            stored = jnp.asarray(tensor, dtype=self.dtype)
        else:
            stored = np.asarray(tensor, dtype=self.dtype)
        self.nodes.append(stored)
        return stored
