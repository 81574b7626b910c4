import jax.numpy as jnp
from flax import nnx

from agent.algorithm import Algorithm

algo = Algorithm()
x, y = jnp.ones((8, 3)), jnp.zeros((8, 1))
algo.update(x, y)
state = nnx.state(algo.model)
print(jnp.sum(state["kernel"][...]))
