import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from dynode_mini.simulate import simulate
from numpyro.infer import MCMC, NUTS

observed = simulate(0.4) + 0.001


def model(obs):
    beta = numpyro.sample("beta", dist.LogNormal(jnp.log(0.3), 0.5))
    numpyro.sample("obs", dist.Normal(simulate(beta), 0.01), obs=obs)


mcmc = MCMC(NUTS(model), num_warmup=5, num_samples=5, progress_bar=False)
mcmc.run(jax.random.key(0), observed)
print(mcmc.get_samples()["beta"].mean())
