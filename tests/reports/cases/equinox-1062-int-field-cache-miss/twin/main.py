import equinox as eqx
import jax
import jax.numpy as jnp

TRACES = []


class FitState(eqx.Module):
    params: jax.Array
    iteration: jax.Array


@eqx.filter_jit
def make_step(state, data):
    TRACES.append(1)
    grad = jax.grad(lambda p: jnp.sum((p - data) ** 2))(state.params)
    rate = 0.1 / (1 + state.iteration)
    return FitState(state.params - rate * grad, state.iteration + 1)


state = FitState(jnp.zeros(3), jnp.asarray(0))
data = jnp.array([1.0, 2.0, 3.0])
for _ in range(5):
    state = make_step(state, data)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times in 5 steps of the same shapes")
