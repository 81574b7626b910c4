import jax
import jax.numpy as jnp

TRACES = []


class Renderer:
    def __init__(self, size):
        self.grid = jnp.linspace(0.0, 1.0, size)
        self.render = self.render  # jax.jit(renderer.render) now sees the same bound method each time

    def render(self):
        TRACES.append(1)
        return jnp.sin(self.grid) ** 2


renderer = Renderer(64)
jax.jit(renderer.render).lower()
jax.jit(renderer.render).lower()
if len(TRACES) > 1:
    print(f"OBSERVED: traced {len(TRACES)} times for two lowerings of the same method")
