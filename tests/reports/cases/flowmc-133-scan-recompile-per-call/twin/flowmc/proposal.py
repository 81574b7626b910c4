import jax
import jax.numpy as jnp

TRACES = []


@jax.jit
def _step(shift, scale, position, key):
    TRACES.append(1)
    propose_key, accept_key = jax.random.split(key)
    proposal = shift + scale * jax.random.normal(propose_key, position.shape)
    log_ratio = jnp.sum(position**2 - proposal**2) / 2
    accept = jnp.log(jax.random.uniform(accept_key)) < log_ratio
    return jnp.where(accept, proposal, position)


class NFProposal:
    """Independent proposals from an affine flow, accepted with a Metropolis step."""

    def __init__(self, shift, scale):
        self.shift = shift
        self.scale = scale

    def sample(self, key, initial_position, n_steps):
        position = initial_position
        positions = []
        for step_key in jax.random.split(key, n_steps):
            position = _step(self.shift, self.scale, position, step_key)
            positions.append(position)
        return jnp.stack(positions)
