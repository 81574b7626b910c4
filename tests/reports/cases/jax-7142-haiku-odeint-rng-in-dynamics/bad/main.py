import haiku as hk
import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint


def flow(x):
    linear = hk.Linear(x.shape[-1])

    def dynamics(y, t):
        noise = jax.random.normal(hk.next_rng_key(), y.shape)  # expect: JAX105
        dy, vjp_fn = jax.vjp(linear, y)
        (vjp,) = vjp_fn(noise)
        return dy - 0.0 * jnp.dot(vjp, noise)

    return odeint(dynamics, x, jnp.array([0.0, 1.0]))[-1]


model = hk.transform(flow)
x = jnp.ones((5, 3))
params = model.init(jax.random.key(0), x[0])
out = jax.vmap(model.apply, in_axes=(None, None, 0))(params, jax.random.key(1), x)
print(out.shape)
