import jax.numpy as jnp
from agent.algorithm import Algorithm
from flax import nnx

algo = Algorithm()
x, y = jnp.ones((8, 3)), jnp.zeros((8, 1))
algo.update(x, y)
state = nnx.state(algo.model)
print(jnp.sum(state["kernel"][...]))
