import jax
import jax.numpy as jnp
from cryo.pipeline import GaussianDetector, GaussianIce, ImagePipeline

ice_key, detector_key = jax.random.split(jax.random.PRNGKey(0))
pipeline = ImagePipeline(GaussianIce(ice_key), GaussianDetector(detector_key))
specimen = jnp.zeros((4, 4))
images = [pipeline.render(specimen) for _ in range(3)]
if all(bool(jnp.all(image == images[0])) for image in images[1:]):
    print("OBSERVED: three simulated images have identical ice and detector noise")
