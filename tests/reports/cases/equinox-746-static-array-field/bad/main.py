import equinox as eqx
import jax
import jax.numpy as jnp
import jax.random as jr


class Data(eqx.Module):
    data: jax.Array = eqx.field(static=True)

    def __init__(self, seed):
        self.data = jr.uniform(jr.PRNGKey(seed), (10, 10))


class Model(eqx.Module):
    foo: jax.Array

    def __init__(self, foo):
        self.foo = jnp.array(foo)


@eqx.filter_jit
@eqx.filter_value_and_grad
def loss_fn(model, data):
    return jnp.sum(model.foo - data.data)


model = Model(1.0)
data0, data1 = Data(0), Data(1)
loss, grads = loss_fn(model, data0)
loss, grads = loss_fn(model, data1)  # expect: JAX402
print("loss:", loss)
