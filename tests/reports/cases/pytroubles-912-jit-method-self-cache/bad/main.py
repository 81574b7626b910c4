from functools import partial

import jax
import jax.numpy as jnp
import numpy as np


class Doubler:
    @partial(jax.jit, static_argnums=0)
    def run(self, values):
        doubled = values * 2
        self.cache = doubled  # expect: JAX105
        return doubled


doubler = Doubler()
out = doubler.run(jnp.array([1.0, 2.0, 3.0]))
print(np.array(out))
print(np.array(doubler.cache))
