from typing import NamedTuple

import jax
import jax.numpy as jnp


class State(NamedTuple):
    position: jnp.ndarray
    rng_key: jnp.ndarray


def random_walk(logdensity, state, num_steps):
    def step(state, _):
        key, proposal_key, accept_key = jax.random.split(state.rng_key, 3)
        proposal = state.position + 0.5 * jax.random.normal(proposal_key, state.position.shape)
        log_ratio = logdensity(proposal) - logdensity(state.position)
        accept = jnp.log(jax.random.uniform(accept_key)) < log_ratio
        position = jnp.where(accept, proposal, state.position)
        return State(position, key), position

    return jax.lax.scan(step, state, None, length=num_steps)


class MCMC:
    def __init__(self, logdensity, num_warmup, num_samples):
        self.logdensity = logdensity
        self.num_warmup = num_warmup
        self.num_samples = num_samples
        self._warmup_state = None

    def run(self, rng_key, init_position):
        if self._warmup_state is None:
            state, _ = random_walk(self.logdensity, State(init_position, rng_key), self.num_warmup)
            self._warmup_state = state
        else:
            state = self._warmup_state._replace(rng_key=rng_key)
        _, samples = random_walk(self.logdensity, state, self.num_samples)
        return samples
