from typing import NamedTuple

import jax
import jax.numpy as jnp

INT32_MAX = 2**31 - 1


class MemoryConfig(NamedTuple):
    capacity: int
    max_age: int


class Entries(NamedTuple):
    keys: jax.Array
    ages: jax.Array
    active: jax.Array


@jax.jit
def _retrieve(entries, query, max_age):
    fresh = entries.active & (entries.ages <= max_age)
    scores = jnp.where(fresh, entries.keys @ query, -jnp.inf)
    return jnp.argmax(scores)


class ExperientialMemory:
    def __init__(self, config):
        if config.max_age < 0:
            raise ValueError("max_age must be non-negative")
        # ages are int32: any larger max_age already means "never expire"
        self.config = config._replace(max_age=min(config.max_age, INT32_MAX))

    def init(self):
        n = self.config.capacity
        return Entries(jnp.zeros((n, 4)), jnp.zeros(n, jnp.int32), jnp.zeros(n, bool))

    def write(self, entries, key):
        slot = jnp.argmin(entries.active)
        return Entries(entries.keys.at[slot].set(key), entries.ages + 1, entries.active.at[slot].set(True))

    def query(self, entries, query):
        return _retrieve(entries, query, self.config.max_age)
