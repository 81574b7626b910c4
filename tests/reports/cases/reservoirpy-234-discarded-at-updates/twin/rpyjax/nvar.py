import jax
import jax.numpy as jnp


class NVAR:
    """Nonlinear vector autoregression: delayed inputs plus their pairwise products."""

    def __init__(self, delay, dim):
        self.delay, self.dim = delay, dim

    def _step(self, store, x):
        store = jnp.roll(store, 1, axis=0)
        store = store.at[0].set(x)
        linear = store.reshape(-1)
        features = jnp.zeros(linear.size * 2)
        features = features.at[: linear.size].set(linear)
        features = features.at[linear.size :].set(linear**2)
        return store, features

    def run(self, xs):
        store = jnp.zeros((self.delay, self.dim))
        return jax.lax.scan(self._step, store, xs)[1]
