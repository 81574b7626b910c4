import dataclasses
import functools

import jax
import jax.numpy as jnp


@dataclasses.dataclass
class Config:
    scale: float
    power: int


@functools.partial(jax.jit, static_argnums=1)
def do_stuff(data, config):
    return jnp.sum((data * config.scale) ** config.power)


def evaluate():
    config = Config(scale=0.5, power=2)
    data = jnp.arange(8.0)
    return do_stuff(data, config)  # expect: JAX402


for _ in range(3):
    print("metric:", evaluate())
