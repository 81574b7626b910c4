import flax.linen as nn
import jax
import jax.numpy as jnp


class Net(nn.Module):
    @nn.compact
    def __call__(self, x):
        return nn.Dense(8)(nn.relu(nn.Dense(32)(x)))


model = Net()
params = model.init(jax.random.key(0), jnp.ones((1, 16)))


@jax.jit
def infer(x):
    return model.apply(params, x)


output = infer(jnp.ones((1, 16))).block_until_ready()
if output is None or isinstance(output, jax.core.Tracer):
    print("OBSERVED: infer returned None and the global output holds a tracer, not the prediction")
