import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)


def kernel(x1, x2, length, sigma):
    x1 = jnp.expand_dims(x1, axis=1)
    x2 = jnp.expand_dims(x2, axis=1)
    sqdist = jnp.sum(x1**2, 1).reshape(-1, 1) + jnp.sum(x2**2, 1) - 2 * jnp.dot(x1, x2.T)
    return sigma**2 * jnp.exp(-0.5 / length**2 * sqdist)


x_train = np.linspace(0, 5, num=11)
x_train_jnp = jnp.asarray(x_train)
k = kernel(x_train_jnp, x_train_jnp, 1.3773659885652723, 1.0147686098215838)
error = float(jnp.abs(k @ jnp.linalg.inv(k) - jnp.eye(11)).max())
if error > 1e-3:
    print(f"OBSERVED: K @ inv(K) is off the identity by {error:.3g} (kernel matrix dtype {k.dtype})")
