import jax
import jax.numpy as jnp

TRACES = []


class Smoother:
    def __init__(self, width):
        self.kernel = jnp.ones(width) / width
        self.apply = jax.jit(self.apply)

    def apply(self, signal):
        TRACES.append(1)
        return jnp.convolve(signal, self.kernel, mode="same")


smoother = Smoother(5)
signal = jnp.sin(jnp.linspace(0.0, 6.0, 200))
for _ in range(3):
    signal = smoother.apply(signal)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 calls of the same shape")
