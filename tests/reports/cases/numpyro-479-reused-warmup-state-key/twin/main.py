import jax
import jax.numpy as jnp
from mini_mcmc.sampler import MCMC

mcmc = MCMC(lambda x: -0.5 * jnp.sum(x**2), num_warmup=50, num_samples=20)
first = mcmc.run(jax.random.key(0), jnp.zeros(2))
second = mcmc.run(jax.random.key(1), jnp.zeros(2))
third = mcmc.run(jax.random.key(2), jnp.zeros(2))
if jnp.array_equal(second, third):
    print("OBSERVED: runs with keys 1 and 2 after warmup returned identical samples")
