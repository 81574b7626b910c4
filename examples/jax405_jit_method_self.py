"""JAX405: @jax.jit on a method traces `self`, which is not an array or a pytree."""

import jax
import jax.numpy as jnp


class LinearModel:
    def __init__(self, weights, bias):
        self.weights = weights
        self.bias = bias

    @jax.jit  # JAX405: TypeError at the first call; jit a function of (weights, bias, x)
    def predict(self, x):
        return jnp.dot(x, self.weights) + self.bias
