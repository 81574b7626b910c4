from nesst_like.spectral_model import ballabio_spectrum


def detected_spectrum(E, mean, width, E_min, E_max):
    spec = ballabio_spectrum(E, mean, width)
    spec[E < E_min] = 0.0  # expect: JAX103
    spec[E > E_max] = 0.0  # expect: JAX103
    return spec
