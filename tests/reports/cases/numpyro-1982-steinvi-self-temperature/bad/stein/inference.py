import jax
import jax.numpy as jnp


class AnnealedStein:
    def __init__(self, num_steps):
        self.num_steps = num_steps
        self.loss_temperature = 1.0

    def _loss_and_grad(self, particles, step):
        self.loss_temperature = jnp.minimum(1.0, (step + 1) / self.num_steps)  # expect: JAX105

        def loss(p):
            return self.loss_temperature * jnp.sum(p**2)

        return jax.value_and_grad(loss)(particles)

    def update(self, particles, step):
        value, grad = self._loss_and_grad(particles, step)
        return particles - 0.1 * grad, value

    def run(self, particles):
        step_fn = jax.jit(self.update)
        for step in range(3):
            particles, _ = step_fn(particles, step)
        return particles
