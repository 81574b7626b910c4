from dataclasses import dataclass, field

import jax
import jax.numpy as jnp


@dataclass
class RoundState:
    wall: jax.Array
    rng_key: jax.Array = field(default_factory=lambda: jax.random.PRNGKey(0))


def init(rng):
    rng, subkey = jax.random.split(rng)
    wall = jax.random.permutation(rng, jnp.arange(136))
    return RoundState(wall=wall)  # expect: JAX301


def next_round(state):
    rng_key, shuffle_key = jax.random.split(state.rng_key)
    wall = jax.random.permutation(shuffle_key, jnp.arange(136))
    return RoundState(wall=wall, rng_key=rng_key)
