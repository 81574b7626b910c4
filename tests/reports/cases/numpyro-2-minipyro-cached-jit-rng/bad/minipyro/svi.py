import jax
import jax.numpy as jnp


class SVI:
    def __init__(self, seed):
        self.rng = jax.random.PRNGKey(seed)
        self._loss = jax.jit(self._elbo)

    def _elbo(self, loc):
        eps = jax.random.normal(self.rng, (64,))  # expect: JAX301
        z = loc + eps
        return jnp.mean(0.5 * z**2 - 0.5 * eps**2)

    def step(self, loc):
        self.rng, _ = jax.random.split(self.rng)
        return self._loss(loc)
