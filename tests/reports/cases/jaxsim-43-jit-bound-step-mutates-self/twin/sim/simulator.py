import jax.numpy as jnp


class Simulator:
    def __init__(self, dt):
        self.dt = dt

    def initial_state(self):
        return jnp.zeros(2), jnp.ones(2)

    def step(self, state):
        position, velocity = state
        velocity = velocity - self.dt * position
        position = position + self.dt * velocity
        return position, velocity
