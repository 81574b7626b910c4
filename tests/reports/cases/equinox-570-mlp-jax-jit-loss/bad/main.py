import equinox as eqx
import jax
import jax.numpy as jnp
import numpy as np


def nll(model, X, y):
    yp = jax.vmap(model)(X)
    return jnp.mean((y - yp) ** 2)


def example():
    model = eqx.nn.MLP(2, 1, 4, 3, key=jax.random.PRNGKey(0))
    X = np.random.randn(100, 2).astype(np.float32)
    y = np.random.randn(100, 1).astype(np.float32)
    print("eager:", nll(model, X, y))
    print("jitted:", jax.jit(nll)(model, X, y))  # expect: JAX405


example()
