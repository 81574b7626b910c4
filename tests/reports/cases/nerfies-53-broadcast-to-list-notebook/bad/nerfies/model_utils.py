import jax.numpy as jnp


def volumetric_rendering(rgb, sigma, z_vals, dirs, last_sample_z=1e10):
    """Composite the samples along each ray."""
    far = jnp.broadcast_to([last_sample_z], z_vals[..., :1].shape)  # expect: JAX502
    dists = jnp.concatenate([z_vals[..., 1:] - z_vals[..., :-1], far], -1)
    dists = dists * jnp.linalg.norm(dirs[..., None, :], axis=-1)
    alpha = 1.0 - jnp.exp(-sigma[..., 0] * dists)
    trans = jnp.exp(
        -jnp.cumsum(jnp.concatenate([jnp.zeros_like(alpha[..., :1]), sigma[..., 0] * dists], -1), -1)
    )
    weights = alpha * trans[..., :-1]
    return {
        "rgb": (weights[..., None] * rgb).sum(axis=-2),
        "depth": (weights * z_vals).sum(axis=-1),
        "acc": weights.sum(axis=-1),
    }
