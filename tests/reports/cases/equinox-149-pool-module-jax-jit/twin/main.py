import equinox as eqx
import jax
import jax.random as jrandom


class Net(eqx.Module):
    pool: eqx.nn.MaxPool2d

    def __init__(self):
        self.pool = eqx.nn.MaxPool2d(kernel_size=3, stride=2)

    def __call__(self, x):
        return self.pool(x)


@eqx.filter_jit
def forward(model, x):
    return jax.vmap(model)(x)


model = Net()
images = jrandom.uniform(jrandom.PRNGKey(0), (1, 3, 32, 32))
print(forward(model, images).shape)
