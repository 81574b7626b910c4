import jax.numpy as jnp


def ballabio_spectrum(E, mean, width):
    """Gaussian approximation of a DT neutron peak, produced by the JAX backend."""
    return jnp.exp(-0.5 * ((E - mean) / width) ** 2) / (width * jnp.sqrt(2 * jnp.pi))
