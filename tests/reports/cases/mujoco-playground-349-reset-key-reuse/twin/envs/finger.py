import jax
import jax.numpy as jnp


def reset(rng):
    qpos_rng, spinner_rng = jax.random.split(rng)
    qpos = jax.random.uniform(qpos_rng, (2,), minval=-jnp.pi, maxval=jnp.pi)
    spinner = jax.random.uniform(spinner_rng, (), minval=-jnp.pi, maxval=jnp.pi)
    return jnp.concatenate([qpos, spinner[None]])
