import jax.numpy as jnp


def volumetric_rendering(rgb, sigma, z_vals, dirs):
    """Alpha-composite the samples of each ray into a color and a depth."""
    eps = 1e-10
    far = jnp.broadcast_to([1e10], z_vals[..., :1].shape)  # expect: JAX502
    dists = jnp.concatenate([z_vals[..., 1:] - z_vals[..., :-1], far], -1)
    dists = dists * jnp.linalg.norm(dirs[..., None, :], axis=-1)
    alpha = 1.0 - jnp.exp(-sigma[..., 0] * dists)
    accum = jnp.cumprod(jnp.concatenate([jnp.ones_like(alpha[..., :1]), 1.0 - alpha + eps], -1), -1)
    weights = alpha * accum[..., :-1]
    color = (weights[..., None] * rgb).sum(axis=-2)
    depth = (weights * z_vals).sum(axis=-1)
    return color, depth
