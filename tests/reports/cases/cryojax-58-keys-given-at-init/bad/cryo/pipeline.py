import equinox as eqx
import jax
import jax.numpy as jnp


class GaussianIce(eqx.Module):
    key: jax.Array
    variance: float = 0.1

    def sample(self, shape):
        return jnp.sqrt(self.variance) * jax.random.normal(self.key, shape)  # expect: JAX301


class GaussianDetector(eqx.Module):
    key: jax.Array
    noise: float = 0.5

    def sample(self, image):
        return image + self.noise * jax.random.normal(self.key, image.shape)  # expect: JAX301


class ImagePipeline(eqx.Module):
    ice: GaussianIce
    detector: GaussianDetector

    def render(self, specimen):
        return self.detector.sample(specimen + self.ice.sample(specimen.shape))
