import functools

import jax
import jax.numpy as jnp

TRACES = []


@functools.cache
def _loop_fn(body_fun, upper):
    @jax.jit
    def loop_fn(init_val):
        TRACES.append(1)

        def step(i, carry):
            state, collection = carry
            state = body_fun(state)
            return state, collection.at[i].set(state[1])

        collection = jnp.zeros((upper,) + init_val[1].shape)
        return jax.lax.fori_loop(0, upper, step, (init_val, collection))

    return loop_fn


def fori_collect(lower, upper, body_fun, init_val):
    """Run body_fun from init_val upper times and collect the positions from lower on."""
    _, collection = _loop_fn(body_fun, upper)(init_val)
    return collection[lower:]
