import jax
import jax.numpy as jnp
from model.net import Encoder

model = Encoder(jax.random.PRNGKey(0))
x = jnp.ones(8)
first = model(x)
second = model(x)
if bool(jnp.all(first == second)):
    print("OBSERVED: two training-mode forward passes drew the same dropout mask")
