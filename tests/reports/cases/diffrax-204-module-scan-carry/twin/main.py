import equinox as eqx
import jax
import jax.numpy as jnp


def filter_scan(f, init, xs):
    dynamic, static = eqx.partition(init, eqx.is_array)

    def _f(_dynamic, x):
        carry = eqx.combine(_dynamic, static)
        new_carry, y = f(carry, x)
        dynamic_out, _ = eqx.partition(new_carry, eqx.is_array)
        return dynamic_out, y

    dynamic_final, ys = jax.lax.scan(_f, dynamic, xs)
    return eqx.combine(dynamic_final, static), ys


def rollout(model, xs):
    def step(carry, x):
        net, h = carry
        h = net(jnp.concatenate([h, x]))
        return (net, h), h

    (_, h_last), hs = filter_scan(step, (model, jnp.zeros(4)), xs)
    return hs


model = eqx.nn.MLP(in_size=6, out_size=4, width_size=16, depth=2, key=jax.random.PRNGKey(0))
xs = jax.random.normal(jax.random.PRNGKey(1), (20, 2))
print(rollout(model, xs).shape)
