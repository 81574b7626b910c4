import jax.numpy as jnp

from nesst_like.spectral_model import ballabio_spectrum


def detected_spectrum(E, mean, width, E_min, E_max):
    spec = ballabio_spectrum(E, mean, width)
    spec = jnp.where(E < E_min, 0.0, spec)
    spec = jnp.where(E > E_max, 0.0, spec)
    return spec
