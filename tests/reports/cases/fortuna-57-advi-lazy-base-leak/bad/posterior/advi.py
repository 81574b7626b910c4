import jax
import jax.numpy as jnp


class DiagGaussian:
    def __init__(self, mean, std):
        self.mean = mean
        self.std = std

    def sample(self, rng):
        return self.mean + self.std * jax.random.normal(rng, self.mean.shape)


class ADVIPosterior:
    def __init__(self, n_params, log_std_base=-1.0):
        self.n_params = n_params
        self.log_std_base = log_std_base

    def sample(self, rng):
        if not hasattr(self, "base"):
            std = jnp.exp(self.log_std_base) * jnp.ones(self.n_params)
            self.base = DiagGaussian(mean=jnp.zeros(self.n_params), std=std)  # expect: JAX105
        return self.base.sample(rng)
