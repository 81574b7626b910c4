import jax
import jax.numpy as jnp

TRACES = []


class Sampler:
    def __init__(self, step_size):
        self.step_size = step_size
        self.data = None

    def _sample(self, position):
        TRACES.append(1)
        grad = jnp.mean(self.data) - position
        return position + self.step_size * grad

    def run(self, data, position):
        self.data = data
        sample = jax.jit(self._sample)  # expect: JAX401
        for _ in range(10):
            position = sample(position)
        return position


sampler = Sampler(0.5)
for seed in range(3):
    data = jax.random.normal(jax.random.PRNGKey(seed), (100,)) + 3.0
    print("estimate:", sampler.run(data, jnp.zeros(())))
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 runs on data of the same shape")
