import jax
import jax.numpy as jnp
from inference.poissonlikelihood import make_log_likelihood

data = jnp.array([0.3, 1.2, 0.7])
log_likelihood = make_log_likelihood(data, jax.random.PRNGKey(0))
values = [float(log_likelihood(2.0)) for _ in range(3)]
if len(set(values)) == 1:
    print(f"OBSERVED: three Monte Carlo evaluations gave the identical value {values[0]:.6f}")
