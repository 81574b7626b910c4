import jax
import jax.numpy as jnp

TRACES = []


def _sample(step_size, data, position):
    TRACES.append(1)
    grad = jnp.mean(data) - position
    return position + step_size * grad


_sample_jit = jax.jit(_sample)


class Sampler:
    def __init__(self, step_size):
        self.step_size = step_size

    def run(self, data, position):
        for _ in range(10):
            position = _sample_jit(self.step_size, data, position)
        return position


sampler = Sampler(0.5)
for seed in range(3):
    data = jax.random.normal(jax.random.PRNGKey(seed), (100,)) + 3.0
    print("estimate:", sampler.run(data, jnp.zeros(())))
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 runs on data of the same shape")
