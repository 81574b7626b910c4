import numpyro
import numpyro.distributions as dist

priors = {}


def model(y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    priors["mass"] = dist.TruncatedNormal(mu, 1.0, low=0.0)  # expect: JAX105
    mass = numpyro.sample("mass", priors["mass"])
    numpyro.sample("y", dist.Normal(mass, 0.5), obs=y)
