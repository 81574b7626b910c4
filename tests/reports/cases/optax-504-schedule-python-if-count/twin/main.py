import jax
import jax.numpy as jnp
import optax


def piecewise_interpolate(init_value, boundaries, scales):
    values = [init_value]
    for scale in scales:
        values.append(values[-1] * scale)
    starts = jnp.array([0, *boundaries[:-1]], dtype=jnp.float32)
    ends = jnp.array(boundaries, dtype=jnp.float32)
    lows = jnp.array(values[:-1])
    highs = jnp.array(values[1:])

    def schedule(count):
        index = jnp.clip(jnp.searchsorted(ends, count, side="right"), 0, len(boundaries) - 1)
        frac = jnp.clip((count - starts[index]) / (ends[index] - starts[index]), 0.0, 1.0)
        return lows[index] + frac * (highs[index] - lows[index])

    return schedule


optimizer = optax.sgd(piecewise_interpolate(0.1, [10, 20], [0.5, 0.1]))
params = {"w": jnp.ones(3)}
opt_state = optimizer.init(params)


@jax.jit
def step(params, opt_state):
    grads = jax.grad(lambda p: jnp.sum(p["w"] ** 2))(params)
    updates, opt_state = optimizer.update(grads, opt_state)
    return optax.apply_updates(params, updates), opt_state


for _ in range(3):
    params, opt_state = step(params, opt_state)
print(params["w"])
