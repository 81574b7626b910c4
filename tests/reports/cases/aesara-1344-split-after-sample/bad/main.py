import jax
from jaxlink.random import sample_normal

jax.config.update("jax_debug_key_reuse", True)

rng = {"jax_state": jax.random.key(0)}
rng, first = sample_normal(rng, (3,))
rng, second = sample_normal(rng, (3,))
print(first, second)
