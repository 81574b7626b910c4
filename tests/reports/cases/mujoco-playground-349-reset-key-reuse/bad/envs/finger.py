import jax
import jax.numpy as jnp


def reset(rng):
    qpos = jax.random.uniform(rng, (2,), minval=-jnp.pi, maxval=jnp.pi)
    spinner = jax.random.uniform(rng, (), minval=-jnp.pi, maxval=jnp.pi)  # expect: JAX301
    return jnp.concatenate([qpos, spinner[None]])
