import jax
import jax.numpy as jnp
import numpy as np
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

from tpm.model import residence_time

times = np.arange(0, 30)


def model(mrt=None):
    eff = numpyro.sample("eff", dist.Normal(0.5, 0.1))
    pos = numpyro.sample("pos", dist.Normal(10.0, 0.1))
    sig = numpyro.sample("sig", dist.LogNormal(0.0, 0.2))
    mean_time = numpyro.sample("mt", dist.LogNormal(2.3, 0.3))
    sigma = numpyro.sample("sigma", dist.Exponential(1.0))
    params = np.array([[pos, eff, sig, mean_time]], dtype=np.float64)  # expect: JAX102
    numpyro.sample("obs", dist.Normal(residence_time(times, params), sigma), obs=mrt)


observed = residence_time(times, jnp.array([[10.0, 0.5, 1.0, 10.0]]))
mcmc = MCMC(NUTS(model), num_warmup=20, num_samples=20, progress_bar=False)
mcmc.run(jax.random.key(0), mrt=observed)
print(mcmc.get_samples()["eff"].mean())
