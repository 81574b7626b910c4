import haiku as hk
import jax
import jax.numpy as jnp


def unroll(xs):
    cell = hk.Linear(4)

    def step(carry, x):
        carry = jnp.tanh(cell(x) + carry)  # expect: JAX105
        return carry, carry

    _, ys = jax.lax.scan(step, jnp.zeros(4), xs)
    return ys


model = hk.transform(unroll)
xs = jnp.ones((5, 3))
params = model.init(jax.random.PRNGKey(0), xs)
print(model.apply(params, None, xs).shape)
