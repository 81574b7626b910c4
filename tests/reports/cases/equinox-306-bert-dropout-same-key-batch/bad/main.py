import jax
import jax.numpy as jnp
from bert.model import EncoderLayer, batched_forward

init_key, dropout_key = jax.random.split(jax.random.PRNGKey(0))
layer = EncoderLayer(16, init_key)
tokens = jnp.ones((8, 16))
out = batched_forward(layer, tokens, dropout_key)
if bool(jnp.all((out == 0) == (out[0] == 0))):
    print("OBSERVED: all 8 examples in the batch got the same dropout mask")
