import jax.numpy as jnp
from flax import nnx

module = nnx.Dropout(0.5, rngs=nnx.Rngs(0))


@nnx.jit
def forward(model, x):
    return model(x)


first = forward(module, jnp.ones((3, 5)))
second = forward(module, jnp.ones((3, 5)))
if bool(jnp.all(first == second)):
    print("OBSERVED: two calls of the jitted dropout drew the same mask")
