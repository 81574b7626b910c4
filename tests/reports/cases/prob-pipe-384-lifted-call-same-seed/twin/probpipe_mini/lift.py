import jax
import jax.numpy as jnp


class Normal:
    def __init__(self, loc, scale):
        self.loc = loc
        self.scale = scale

    def sample(self, key, n):
        return self.loc + self.scale * jax.random.normal(key, (n,))


class LiftedFunction:
    def __init__(self, fn, seed, n_samples):
        self.fn = fn
        self._key = jax.random.key(seed)
        self.n_samples = n_samples

    def __call__(self, dist):
        self._key, key = jax.random.split(self._key)
        samples = dist.sample(key, self.n_samples)
        return jnp.asarray(self.fn(samples))
