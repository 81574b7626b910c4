import jax
import jax.numpy as jnp
from jax.lax import scan


def fixed_step_solve(rhs, t_span, y0, max_dt):
    delta_t = t_span[1] - t_span[0]
    steps = jnp.array(delta_t // max_dt).astype(int)
    h = delta_t / steps

    def body(y, step):
        t = t_span[0] + h * step
        return y + rhs(t, y) * h, None

    return scan(body, y0, jnp.arange(steps))[0]  # expect: JAX102


def simulate(rate):
    return fixed_step_solve(lambda t, y: rate * y, [0.0, 0.5], jnp.array(1.0), 0.1)


print(simulate(2.0))
print(jax.jit(simulate)(2.0))
