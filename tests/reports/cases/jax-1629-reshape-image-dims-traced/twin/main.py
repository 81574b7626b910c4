import jax
import jax.numpy as jnp

from unmixing.functional import spatial_functional

m, n, r, bands = 4, 3, 2, 5
X = jnp.ones((r, m * n)) / r
K = jnp.linspace(0.1, 1.0, bands * r).reshape(bands, r)
Y = K @ X + 0.01

grad_fn = jax.jit(jax.grad(spatial_functional), static_argnums=(3, 4))
print(grad_fn(X, Y, K, m, n, 0.1).shape)
