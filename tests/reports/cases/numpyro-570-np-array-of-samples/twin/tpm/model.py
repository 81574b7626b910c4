import jax.numpy as jnp


def residence_time(times, params):
    pos, eff, sig, mean_time = params[0]
    pulse = eff * jnp.exp(-0.5 * ((times - pos) / sig) ** 2)
    return pulse * jnp.exp(-times / mean_time)
