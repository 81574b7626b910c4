import jax
import jax.numpy as jnp
from flax import nnx

module = nnx.Dropout(0.5, rngs=nnx.Rngs(0))


@jax.jit
def forward(x):
    return module(x)  # expect: JAX301


first = forward(jnp.ones((3, 5)))
second = forward(jnp.ones((3, 5)))
if bool(jnp.all(first == second)):
    print("OBSERVED: two calls of the jitted dropout drew the same mask")
