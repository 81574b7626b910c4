import equinox as eqx
import jax
import jax.numpy as jnp


def rollout(model, xs):
    def step(carry, x):
        net, h = carry
        h = net(jnp.concatenate([h, x]))
        return (net, h), h

    (_, h_last), hs = jax.lax.scan(step, (model, jnp.zeros(4)), xs)  # expect: JAX405
    return hs


model = eqx.nn.MLP(in_size=6, out_size=4, width_size=16, depth=2, key=jax.random.PRNGKey(0))
xs = jax.random.normal(jax.random.PRNGKey(1), (20, 2))
print(rollout(model, xs).shape)
