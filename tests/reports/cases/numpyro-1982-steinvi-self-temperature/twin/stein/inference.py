import jax
import jax.numpy as jnp


class AnnealedStein:
    def __init__(self, num_steps):
        self.num_steps = num_steps

    def _loss_and_grad(self, particles, step):
        temperature = jnp.minimum(1.0, (step + 1) / self.num_steps)

        def loss(p):
            return temperature * jnp.sum(p**2)

        value, grad = jax.value_and_grad(loss)(particles)
        return value, grad, temperature

    def update(self, particles, step):
        value, grad, temperature = self._loss_and_grad(particles, step)
        return particles - 0.1 * grad, value, temperature

    def run(self, particles):
        step_fn = jax.jit(self.update)
        temperature = 1.0
        for step in range(3):
            particles, _, temperature = step_fn(particles, step)
        return particles, temperature
