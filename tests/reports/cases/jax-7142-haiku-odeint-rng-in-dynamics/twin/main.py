import haiku as hk
import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint


def flow(x):
    w = hk.get_parameter("w", (x.shape[-1], x.shape[-1]), init=hk.initializers.VarianceScaling())
    b = hk.get_parameter("b", (x.shape[-1],), init=jnp.zeros)
    noise = jax.random.normal(hk.next_rng_key(), x.shape)

    def dynamics(y, t, w, b, noise):
        dy, vjp_fn = jax.vjp(lambda v: v @ w + b, y)
        (vjp,) = vjp_fn(noise)
        return dy - 0.0 * jnp.dot(vjp, noise)

    return odeint(dynamics, x, jnp.array([0.0, 1.0]), w, b, noise)[-1]


model = hk.transform(flow)
x = jnp.ones((5, 3))
params = model.init(jax.random.key(0), x[0])
out = jax.vmap(model.apply, in_axes=(None, None, 0))(params, jax.random.key(1), x)
print(out.shape)
