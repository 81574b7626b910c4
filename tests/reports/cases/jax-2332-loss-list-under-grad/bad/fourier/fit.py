import jax
import jax.numpy as jnp


class FourierFit:
    def __init__(self, n_terms):
        self.n_terms = n_terms
        self.loss_list = []

    def predict(self, coefficients, t):
        k = jnp.arange(self.n_terms)
        return jnp.sum(coefficients * jnp.cos(k * t[:, None]), axis=1)

    def loss(self, coefficients, t, y):
        value = jnp.sum(jnp.square(self.predict(coefficients, t) - y))
        self.loss_list += [value]  # expect: JAX105
        return value

    def update(self, coefficients, t, y, rate=0.01):
        grads = jax.grad(self.loss)(coefficients, t, y)
        return coefficients - rate * grads
