import jax
import jax.numpy as jnp

MAX_INT = int(jnp.iinfo(jnp.int16).max)


class Discrete:
    def __init__(self, n_elements=MAX_INT, shape=(), dtype=jnp.int32):
        self.shape = shape
        self.dtype = dtype
        self.minimum = jnp.asarray(0)
        self.maximum = jnp.asarray(n_elements - 1)

    def sample(self, key):
        return jax.random.randint(key, self.shape, self.minimum, self.maximum, self.dtype)
