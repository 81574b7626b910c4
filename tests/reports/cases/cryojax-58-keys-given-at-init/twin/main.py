import jax
import jax.numpy as jnp
from cryo.pipeline import GaussianDetector, GaussianIce, ImagePipeline

pipeline = ImagePipeline(GaussianIce(), GaussianDetector())
specimen = jnp.zeros((4, 4))
keys = jax.random.split(jax.random.PRNGKey(0), 3)
images = [pipeline.render(key, specimen) for key in keys]
if all(bool(jnp.all(image == images[0])) for image in images[1:]):
    print("OBSERVED: three simulated images have identical ice and detector noise")
