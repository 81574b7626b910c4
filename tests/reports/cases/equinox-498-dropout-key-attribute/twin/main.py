import jax
import jax.numpy as jnp
from model.net import Encoder

key = jax.random.PRNGKey(0)
model_key, first_key, second_key = jax.random.split(key, 3)
model = Encoder(model_key)
x = jnp.ones(8)
first = model(x, key=first_key)
second = model(x, key=second_key)
if bool(jnp.all(first == second)):
    print("OBSERVED: two training-mode forward passes drew the same dropout mask")
