import flax.linen as nn
import jax
import jax.numpy as jnp

from arraylib import jax_backend


class BackendLinear(nn.Module):
    out_size: int

    @nn.compact
    def __call__(self, x):
        x = jax_backend.asarray(x)
        return nn.Dense(self.out_size)(x)


class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = jnp.tanh(BackendLinear(4)(x))
        return jnp.tanh(BackendLinear(1)(x))


model = Net()
x = jnp.array([[0.1, 0.2]])
params = model.init(jax.random.key(0), x)


@jax.jit
def predict(params, x):
    return model.apply(params, x)


print(predict(params, x))
