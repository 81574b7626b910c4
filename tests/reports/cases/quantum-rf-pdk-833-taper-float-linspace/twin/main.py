import jax
import jax.numpy as jnp

from rfpdk.models import MODELS

for name, model in MODELS.items():
    print(name, jax.jit(model)(wl=jnp.array(1.55)))
