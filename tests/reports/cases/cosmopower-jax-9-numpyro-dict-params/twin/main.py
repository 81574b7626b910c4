import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS

from cpemu.emulator import Emulator

emulator = Emulator()


def like(cinv, datavec=None):
    omega_cdm = numpyro.sample("omega_cdm", dist.Uniform(0.09, 0.15))
    omega_b = numpyro.sample("omega_b", dist.Uniform(0.017, 0.027))
    log_a = numpyro.sample("logA", dist.Uniform(2.6, 3.5))
    h = numpyro.sample("h", dist.Uniform(0.6, 0.8))
    n_s = numpyro.sample("n_s", dist.Uniform(0.9, 1.0))
    params = jnp.array([omega_b, omega_cdm, h, n_s, log_a])
    theory = emulator.predict(params)
    numpyro.sample("data", dist.MultivariateNormal(theory, precision_matrix=cinv), obs=datavec)


truth = emulator.predict(jnp.array([0.022, 0.12, 0.7, 0.96, 3.0]))
mcmc = MCMC(NUTS(like), num_warmup=10, num_samples=10, progress_bar=False)
mcmc.run(jax.random.key(0), jnp.eye(truth.shape[0]) * 100.0, datavec=truth)
print(mcmc.get_samples()["h"].mean())
