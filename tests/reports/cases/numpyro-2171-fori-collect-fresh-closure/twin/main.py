import jax
import jax.numpy as jnp
from sampler.util import TRACES, fori_collect


def random_walk(state):
    key, position = state
    key, subkey = jax.random.split(key)
    return key, position + 0.1 * jax.random.normal(subkey, position.shape)


for run in range(3):
    init = (jax.random.PRNGKey(run), jnp.zeros(2))
    samples = fori_collect(0, 200, random_walk, init)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 runs of the same sampler")
