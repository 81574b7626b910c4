import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS


def seasonal_model(y, seasonality):
    level = numpyro.sample("level", dist.Normal(0.0, 1.0))
    first_season = jnp.abs(y[:seasonality])  # expect: JAX102
    init_s = numpyro.sample("init_s", dist.Normal(0.0, first_season * 0.3 + 0.1))
    season = jnp.tile(init_s, y.shape[0] // seasonality)  # expect: JAX102
    numpyro.sample("y", dist.Normal(level + season, 1.0), obs=y)


y = jnp.sin(jnp.arange(24.0))
mcmc = MCMC(NUTS(seasonal_model), num_warmup=20, num_samples=20, jit_model_args=True, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), y, 6)
print(mcmc.get_samples()["level"].mean())
