import jax
import jax.numpy as jnp
from flax import nnx

from policy.fast import TinyFAST


@nnx.jit
def sample(model, rng, first_token, sample_kwargs):
    return model.sample_actions(rng, first_token, **sample_kwargs)


model = TinyFAST(nnx.Rngs(0))
tokens = sample(model, jax.random.key(1), jnp.array([3, 4]), {"temperature": 0.7})
print(tokens)
