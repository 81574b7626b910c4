import jax.numpy as jnp
from warmup.num_steps import longest_batch_before_turn


def leapfrog(position, momentum, step_size):
    momentum = momentum - 0.5 * step_size * position
    position = position + step_size * momentum
    momentum = momentum - 0.5 * step_size * position
    return position, momentum


run = longest_batch_before_turn(leapfrog)
steps = run(jnp.array([1.0, 0.5]), jnp.array([0.3, -0.2]), 0.1, 100)
print("steps before U-turn:", steps)
