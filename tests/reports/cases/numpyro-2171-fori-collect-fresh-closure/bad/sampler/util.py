import jax
import jax.numpy as jnp

TRACES = []


def fori_collect(lower, upper, body_fun, init_val):
    """Run body_fun from init_val upper times and collect the positions from lower on."""

    @jax.jit  # expect: JAX401
    def loop_fn():
        TRACES.append(1)

        def step(i, carry):
            state, collection = carry
            state = body_fun(state)
            return state, collection.at[i].set(state[1])

        collection = jnp.zeros((upper,) + init_val[1].shape)
        return jax.lax.fori_loop(0, upper, step, (init_val, collection))

    _, collection = loop_fn()
    return collection[lower:]
