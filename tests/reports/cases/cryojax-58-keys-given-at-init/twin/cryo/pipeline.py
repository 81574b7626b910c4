import equinox as eqx
import jax
import jax.numpy as jnp


class GaussianIce(eqx.Module):
    variance: float = 0.1

    def sample(self, key, shape):
        return jnp.sqrt(self.variance) * jax.random.normal(key, shape)


class GaussianDetector(eqx.Module):
    noise: float = 0.5

    def sample(self, key, image):
        return image + self.noise * jax.random.normal(key, image.shape)


class ImagePipeline(eqx.Module):
    ice: GaussianIce
    detector: GaussianDetector

    def render(self, key, specimen):
        ice_key, detector_key = jax.random.split(key)
        return self.detector.sample(detector_key, specimen + self.ice.sample(ice_key, specimen.shape))
