import jax
from gridenv.environment import Environment

env = Environment(height=5, width=5)
space = env.observation_space()
print("sampled observation:", space.sample(jax.random.PRNGKey(0)).shape)
