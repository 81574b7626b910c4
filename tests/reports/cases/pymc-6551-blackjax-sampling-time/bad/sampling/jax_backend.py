from datetime import datetime

import jax
import jax.numpy as jnp


def _one_chain(key, draws):
    def step(carry, key):
        position, matrix = carry
        matrix = jnp.tanh(matrix @ matrix)
        proposal = position + 0.1 * jax.random.normal(key, position.shape) + 1e-3 * matrix[0, :3]
        return (proposal, matrix), proposal

    init = (jnp.zeros(3), jnp.eye(256) * 0.5)
    _, positions = jax.lax.scan(step, init, jax.random.split(key, draws))
    return positions


_run_chains = jax.jit(jax.vmap(_one_chain, in_axes=(0, None)), static_argnums=1)


def sample_nuts(key, chains, draws):
    """Run the chains, then transform the draws; report how long each phase took."""
    tic1 = datetime.now()
    states = _run_chains(jax.random.split(key, chains), draws)
    tic2 = datetime.now()  # expect: JAX403
    samples = {"mu": states[..., 0], "sigma": jnp.exp(states[..., 1])}
    tic3 = datetime.now()  # expect: JAX403
    stats = {"sampling_time": (tic2 - tic1).total_seconds(), "transform_time": (tic3 - tic2).total_seconds()}
    return samples, stats
