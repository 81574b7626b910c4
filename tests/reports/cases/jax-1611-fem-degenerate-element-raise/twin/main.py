import jax.numpy as jnp
import numpy as np

from fem.element import assemble

nodes = jnp.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
elements = jnp.array([[0, 1, 2], [1, 3, 2]])
stiffness, dets = assemble(nodes, elements)
if np.any(np.isclose(np.abs(np.asarray(dets)), 0.0)):
    raise ValueError("degenerate element")
print(stiffness.shape)
