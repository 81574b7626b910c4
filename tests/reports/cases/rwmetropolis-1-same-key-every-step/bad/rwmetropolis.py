from functools import partial

import jax
import jax.numpy as jnp


def logpdf(x):
    return -0.5 * jnp.sum(x**2)


@partial(jax.jit, static_argnums=(1,))
def kernel(rng_key, logprob_fn, position, log_prob):
    move_key, accept_key = jax.random.split(rng_key)
    proposal = position + jax.random.normal(move_key, position.shape)
    proposal_log_prob = logprob_fn(proposal)
    log_uniform = jnp.log(jax.random.uniform(accept_key))
    accept = log_uniform < proposal_log_prob - log_prob
    return jnp.where(accept, proposal, position), jnp.where(accept, proposal_log_prob, log_prob)


def sample(rng_key, n_samples, position):
    log_prob = logpdf(position)
    positions = []
    for _ in range(n_samples):
        position, log_prob = kernel(rng_key, logpdf, position, log_prob)  # expect: JAX301
        positions.append(position)
    return jnp.stack(positions)
