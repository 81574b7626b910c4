import haiku as hk
import jax
import jax.numpy as jnp
from wax.unroll import unroll


def noisy_step(x):
    return x + jax.random.normal(hk.next_rng_key(), x.shape)


outputs = unroll(noisy_step, jnp.zeros((5, 3)), jax.random.PRNGKey(0))
if bool(jnp.all(outputs == outputs[0])):
    print("OBSERVED: all 5 unrolled steps drew the same noise")
