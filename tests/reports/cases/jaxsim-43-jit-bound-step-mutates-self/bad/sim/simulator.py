import jax.numpy as jnp


class Simulator:
    def __init__(self, dt):
        self.dt = dt
        self.position = jnp.zeros(2)
        self.velocity = jnp.ones(2)

    def step(self):
        velocity = self.velocity - self.dt * self.position
        position = self.position + self.dt * velocity
        self.velocity = velocity  # expect: JAX105
        self.position = position  # expect: JAX105
        return position
