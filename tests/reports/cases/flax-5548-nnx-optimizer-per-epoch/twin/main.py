import jax.numpy as jnp
import optax
from flax import nnx

TRACES = []


class Discriminator(nnx.Module):
    def __init__(self, rngs):
        self.hidden = nnx.Linear(8, 16, rngs=rngs)
        self.out = nnx.Linear(16, 1, rngs=rngs)

    def __call__(self, x):
        return self.out(nnx.relu(self.hidden(x)))


@nnx.jit
def train_one_epoch(dis, dis_opt, real, fake):
    TRACES.append(1)

    def loss_fn(model):
        return jnp.mean(nnx.softplus(-model(real))) + jnp.mean(nnx.softplus(model(fake)))

    loss, grads = nnx.value_and_grad(loss_fn)(dis)
    dis_opt.update(dis, grads)
    return loss


rngs = nnx.Rngs(0)
real = jnp.ones((32, 8))
dis_tx = optax.adam(2e-4)
fake = jnp.zeros((32, 8))
for _epoch in range(3):
    dis = Discriminator(rngs=rngs)
    dis_opt = nnx.Optimizer(dis, dis_tx, wrt=nnx.Param)
    train_one_epoch(dis, dis_opt, real, fake)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times in 3 epochs with the same shapes")
