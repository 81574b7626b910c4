import jax.numpy as jnp
import optax
from flax import nnx


@nnx.jit
def update(model, optimizer, x, y):
    def loss_fn(model):
        return jnp.mean((model(x) - y) ** 2)

    grads = nnx.grad(loss_fn)(model)
    optimizer.update(model, grads)


class Algorithm:
    def __init__(self, lr=1e-2):
        self.model = nnx.Linear(3, 1, rngs=nnx.Rngs(0))
        self.optimizer = nnx.Optimizer(self.model, optax.adamw(lr), wrt=nnx.Param)

    def update(self, x, y):
        update(self.model, self.optimizer, x, y)
