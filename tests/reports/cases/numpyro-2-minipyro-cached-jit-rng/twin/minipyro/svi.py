import jax
import jax.numpy as jnp


class SVI:
    def __init__(self, seed):
        self.rng = jax.random.PRNGKey(seed)
        self._loss = jax.jit(self._elbo)

    def _elbo(self, loc, rng):
        eps = jax.random.normal(rng, (64,))
        z = loc + eps
        return jnp.mean(0.5 * z**2 - 0.5 * eps**2)

    def step(self, loc):
        self.rng, step_rng = jax.random.split(self.rng)
        return self._loss(loc, step_rng)
