import jax
import jax.numpy as jnp
from posterior.advi import ADVIPosterior

posterior = ADVIPosterior(n_params=3)


@jax.jit
def predictive_mean(rng, inputs):
    weights = posterior.sample(rng)
    return inputs @ weights


print(predictive_mean(jax.random.PRNGKey(0), jnp.ones((4, 3))))
print(predictive_mean(jax.random.PRNGKey(1), jnp.ones((8, 3))))
