from functools import partial

import jax
import jax.numpy as jnp


def longest_batch_before_turn(integrator_step):
    """Count the integration steps a trajectory makes before it turns back."""

    @partial(jax.jit, static_argnums=(2, 3))
    def run(initial_position, initial_momentum, step_size, num_integration_steps):
        def cond(state):
            iteration, position, momentum = state
            turned = jnp.sum((position - initial_position) * momentum) < 0
            return (iteration < num_integration_steps) & ~turned

        def update(state):
            iteration, position, momentum = state
            position, momentum = integrator_step(position, momentum, step_size)
            return iteration + 1, position, momentum

        result = jax.lax.while_loop(cond, update, (0, initial_position, initial_momentum))
        return result[0]

    return run
