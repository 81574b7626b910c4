import jax
import numpyro
import numpyro.distributions as dist
from numpyro.infer import Predictive


def sleep_model():
    lazy = numpyro.sample("lazy", dist.Bernoulli(probs=0.9))
    if lazy:  # expect: JAX101
        snooze = numpyro.sample("snooze", dist.Bernoulli(probs=0.8))
        hours = numpyro.sample("hours", dist.Normal(8 + 2 * snooze, 1))
    else:
        hours = numpyro.sample("hours", dist.Normal(6, 1))
    return hours


draws = Predictive(sleep_model, num_samples=200)(jax.random.key(0))
print({name: value.mean() for name, value in draws.items()})
