import jax
import jax.numpy as jnp

from otlib.sinkhorn import sinkhorn


@jax.jit
def solve(x, y):
    cost = jnp.sum((x[:, None, :] - y[None, :, :]) ** 2, axis=-1)
    a = jnp.full(x.shape[0], 1.0 / x.shape[0])
    b = jnp.full(y.shape[0], 1.0 / y.shape[0])
    out = sinkhorn(cost, a, b)
    return out.f, out.converged


x = jax.random.normal(jax.random.key(0), (5, 2))
y = jax.random.normal(jax.random.key(1), (4, 2)) + 1.0
print(solve(x, y))
