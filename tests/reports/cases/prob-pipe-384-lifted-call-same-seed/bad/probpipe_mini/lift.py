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
        self._seed = seed
        self.n_samples = n_samples

    def __call__(self, dist):
        key = jax.random.key(self._seed)
        samples = dist.sample(key, self.n_samples)  # expect: JAX301
        return jnp.asarray(self.fn(samples))
