import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

keep = np.array(True)
for wanted in (jnp.bfloat16, jnp.float16, jnp.float32, jnp.float64):
    values = np.ones((2, 2), dtype=wanted)
    fill = np.array(np.nan, dtype=wanted)
    picked = jnp.where(keep, values, fill)
    if picked.dtype != np.dtype(wanted):
        print(f"OBSERVED: jnp.where of {np.dtype(wanted)} inputs came out {picked.dtype}")
