import jax
import jax.numpy as jnp

from popinf.likelihood import PopulationLikelihood

events = jax.random.normal(jax.random.key(1), (3, 50)) + 1.0
likelihood = PopulationLikelihood(events)


@jax.jit
def post_process(sample):
    return likelihood.extra_statistics(dict(sample))


posterior = {"mu": jnp.float32(1.0), "sigma": jnp.float32(0.5)}
print(post_process(posterior))
