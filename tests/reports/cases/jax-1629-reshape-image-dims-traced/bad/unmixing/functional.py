import jax.numpy as np


def spatial_functional(X, Y, K, m, n, lam):
    r = X.shape[0]
    X_im = np.reshape(X, (r, m, n), order="F")  # expect: JAX102
    tv = np.sum(np.abs(np.diff(X_im, axis=1))) + np.sum(np.abs(np.diff(X_im, axis=2)))
    return 0.5 * np.sum((K @ X - Y) ** 2) + lam * tv
