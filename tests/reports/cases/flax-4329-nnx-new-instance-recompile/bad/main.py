import jax.numpy as jnp
import optax
from flax import nnx

TRACES = []


class Regressor(nnx.Module):
    def __init__(self, rngs):
        self.linear = nnx.Linear(4, 1, rngs=rngs)

    def __call__(self, x):
        return self.linear(x)


@nnx.jit
def train_step(model, optimizer, x, y):
    TRACES.append(1)
    loss, grads = nnx.value_and_grad(lambda m: jnp.mean((m(x) - y) ** 2))(model)
    optimizer.update(model, grads)
    return loss


x = jnp.ones((16, 4))
y = jnp.zeros((16, 1))
for seed in range(3):
    model = Regressor(nnx.Rngs(seed))
    optimizer = nnx.Optimizer(model, optax.sgd(0.1), wrt=nnx.Param)  # expect: JAX402
    for _ in range(2):
        train_step(model, optimizer, x, y)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 seeds of the same model")
