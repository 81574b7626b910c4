import flax.linen as nn
import jax
import jax.numpy as jnp

TRACES = []


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(1)(nn.relu(nn.Dense(16)(x)))


model = Model()
params = model.init(jax.random.key(0), jnp.ones((1, 8)))


def loss_fn(params, x, y):
    TRACES.append(1)
    return jnp.mean((model.apply(params, x) - y) ** 2)


x = jax.random.normal(jax.random.key(1), (32, 8))
y = jnp.sum(x, axis=1, keepdims=True)
for step in range(4):
    grad_fn = jax.jit(jax.value_and_grad(loss_fn))  # expect: JAX401
    loss, grads = grad_fn(params, x, y)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.01 * g, params, grads)

if len(TRACES) > 1:
    print(f"OBSERVED: the loss was traced and compiled {len(TRACES)} times in 4 steps")
