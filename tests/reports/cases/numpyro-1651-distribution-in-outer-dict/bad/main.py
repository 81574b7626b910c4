import jax
import jax.numpy as jnp
from numpyro.infer import MCMC, NUTS
from stars.model import model

mcmc = MCMC(NUTS(model), num_warmup=20, num_samples=20, progress_bar=False)
with jax.checking_leaks():
    mcmc.run(jax.random.PRNGKey(0), y=jnp.array(1.2))
print(mcmc.get_samples()["mass"].mean())
