import numpyro
import numpyro.distributions as dist


def mass_prior(mu):
    return dist.TruncatedNormal(mu, 1.0, low=0.0)


def model(y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 1.0))
    mass = numpyro.sample("mass", mass_prior(mu))
    numpyro.sample("y", dist.Normal(mass, 0.5), obs=y)
