import jax
import jax.numpy as jnp
from jax import lax

a = jnp.array([[0.9, 0.1], [-0.1, 0.9]])
u = jnp.array([0.5, -0.5])
t2 = 3


def transition(x, step):
    x = a @ x if step < t2 else u  # expect: JAX101
    return x, x


def rollout(x0, n_steps=6):
    _, xs = lax.scan(transition, x0, jnp.arange(n_steps))
    return xs


print(jax.grad(lambda x0: rollout(x0).sum())(jnp.ones(2)))
