import jax.numpy as jnp

from fem.element import assemble

nodes = jnp.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
elements = jnp.array([[0, 1, 2], [1, 3, 2]])
print(assemble(nodes, elements).shape)
