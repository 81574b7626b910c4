import jax
import jax.numpy as jnp


def loss(weights, inputs, periods):
    out = jnp.tanh(inputs @ weights)  # (time, batch)
    total = 0.0
    for i in range(out.shape[1]):
        idx = jax.lax.dynamic_index_in_dim(periods, i, keepdims=False)
        window = jax.lax.dynamic_slice(out, (0, i), (idx, 1))  # expect: JAX102
        total = total + jnp.mean(window**2)
    return total


inputs = jnp.ones((20, 3, 4)) * jnp.linspace(0.0, 1.0, 4)
periods = jnp.array([5, 12, 20])
grad_fn = jax.jit(jax.grad(loss))
print(grad_fn(jnp.ones((4,)) * 0.1, inputs, periods))
