import jax
import jax.numpy as jnp

TRACES = []


def interp1d(xq, x, f, method="linear"):
    """Interpolate f(x) at the query points xq."""

    @jax.jit  # expect: JAX401
    def kernel(xq, x, f):
        TRACES.append(method)
        i = jnp.clip(jnp.searchsorted(x, xq) - 1, 0, x.size - 2)
        t = (xq - x[i]) / (x[i + 1] - x[i])
        if method == "nearest":
            return jnp.where(t < 0.5, f[i], f[i + 1])
        return f[i] + t * (f[i + 1] - f[i])

    return kernel(xq, x, f)
