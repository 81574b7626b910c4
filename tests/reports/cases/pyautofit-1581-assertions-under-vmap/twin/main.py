import jax
import jax.numpy as jnp

from fitlib.model import Fitness, Model

fitness = Fitness(Model(), data=jnp.array([0.5, 1.0, 2.0]))
vectors = jnp.array([[0.4, 1.1, 2.2], [1.0, 0.5, 2.0]])
print(jax.vmap(fitness)(vectors))
