from functools import partial

import jax
import jax.numpy as jnp
import optax

TRACES = []
OPTIMIZER = optax.adam(1e-2)


@partial(jax.jit, static_argnames=("optimizer",))
def train_step(optimizer, params, opt_state):
    TRACES.append(1)
    grads = jax.tree_util.tree_map(lambda p: 2.0 * p, params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


def train(optimizer):
    params = {"w": jnp.ones((10, 10))}
    opt_state = optimizer.init(params)
    for _ in range(5):
        params, opt_state = train_step(optimizer, params, opt_state)
    return params


for _run in range(3):
    train(OPTIMIZER)
if len(TRACES) > 1:
    print(f"OBSERVED: compiled {len(TRACES)} times for 3 runs of the same optimizer settings")
