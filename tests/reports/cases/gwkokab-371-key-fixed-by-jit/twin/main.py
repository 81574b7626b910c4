import jax
import jax.numpy as jnp
from inference.poissonlikelihood import make_log_likelihood

data = jnp.array([0.3, 1.2, 0.7])
log_likelihood = make_log_likelihood(data)
keys = jax.random.split(jax.random.PRNGKey(0), 3)
values = [float(log_likelihood(2.0, key)) for key in keys]
if len(set(values)) == 1:
    print(f"OBSERVED: three Monte Carlo evaluations gave the identical value {values[0]:.6f}")
