import jax.numpy as jnp
from nerf import model_utils

z_vals = jnp.linspace(2.0, 6.0, 8)[None, :].repeat(4, axis=0)
rgb = jnp.full((4, 8, 3), 0.5)
sigma = jnp.ones((4, 8, 1))
directions = jnp.ones((4, 3))
color, depth = model_utils.volumetric_rendering(rgb, sigma, z_vals, directions)
print("rendered:", color.shape, depth.shape)
