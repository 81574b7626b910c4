import jax
import jax.numpy as jnp
import optax


def piecewise_interpolate(init_value, boundaries, scales):
    values = [init_value]
    for scale in scales:
        values.append(values[-1] * scale)

    def schedule(count):
        for i, boundary in enumerate(boundaries):
            if count < boundary:  # expect: JAX101
                start = 0 if i == 0 else boundaries[i - 1]
                frac = (count - start) / (boundary - start)
                return values[i] + frac * (values[i + 1] - values[i])
        return values[-1]

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
