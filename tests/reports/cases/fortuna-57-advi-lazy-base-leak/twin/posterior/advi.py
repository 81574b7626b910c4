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
        self._base = self._get_base(n_params)

    def _get_base(self, n_params):
        std = jnp.exp(self.log_std_base) * jnp.ones(n_params)
        return DiagGaussian(mean=jnp.zeros(n_params), std=std)

    def sample(self, rng):
        return self._base.sample(rng)
