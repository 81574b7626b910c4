import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import Predictive


def sleep_model():
    lazy = numpyro.sample("lazy", dist.Bernoulli(probs=0.9))
    snooze = numpyro.sample("snooze", dist.Bernoulli(probs=0.8))
    loc = jnp.where(lazy == 1, 8 + 2 * snooze, 6.0)
    return numpyro.sample("hours", dist.Normal(loc, 1))


draws = Predictive(sleep_model, num_samples=200)(jax.random.key(0))
print({name: value.mean() for name, value in draws.items()})
