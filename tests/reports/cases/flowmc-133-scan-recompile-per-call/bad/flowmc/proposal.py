import jax
import jax.numpy as jnp

TRACES = []


class NFProposal:
    """Independent proposals from an affine flow, accepted with a Metropolis step."""

    def __init__(self, shift, scale):
        self.shift = shift
        self.scale = scale

    def sample(self, key, initial_position, n_steps):
        def body(position, key):
            TRACES.append(1)
            propose_key, accept_key = jax.random.split(key)
            proposal = self.shift + self.scale * jax.random.normal(propose_key, position.shape)
            log_ratio = jnp.sum(position**2 - proposal**2) / 2
            accept = jnp.log(jax.random.uniform(accept_key)) < log_ratio
            position = jnp.where(accept, proposal, position)
            return position, position

        _, positions = jax.lax.scan(body, initial_position, jax.random.split(key, n_steps))  # expect: JAX401
        return positions
