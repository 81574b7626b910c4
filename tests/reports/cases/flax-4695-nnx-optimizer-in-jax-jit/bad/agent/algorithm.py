import jax
import jax.numpy as jnp
import optax
from flax import nnx


class Algorithm:
    def __init__(self, lr=1e-2):
        self.model = nnx.Linear(3, 1, rngs=nnx.Rngs(0))
        self.optimizer = nnx.Optimizer(self.model, optax.adamw(lr), wrt=nnx.Param)

        @jax.jit
        def update(x, y):
            def loss_fn(model):
                return jnp.mean((model(x) - y) ** 2)

            grads = nnx.grad(loss_fn)(self.model)
            self.optimizer.update(self.model, grads)  # expect: JAX105

        self.update = update
