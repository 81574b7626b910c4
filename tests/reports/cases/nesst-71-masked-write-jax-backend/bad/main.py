import jax.numpy as jnp

from nesst_like.time_of_flight import detected_spectrum

E = jnp.linspace(12.0, 16.0, 9)
print(detected_spectrum(E, mean=14.1, width=0.3, E_min=13.0, E_max=15.5))
