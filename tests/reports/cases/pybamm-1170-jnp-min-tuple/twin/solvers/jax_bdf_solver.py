import jax.numpy as jnp


def _select_initial_step(fun, t0, y0, f0, h0, rtol, atol):
    scale = atol + jnp.abs(y0) * rtol
    y1 = y0 + h0 * f0
    f1 = fun(y1, t0 + h0)
    d2 = jnp.sqrt(jnp.mean(((f1 - f0) / scale) ** 2))
    return h0 * d2 ** (-1 / 2)


def bdf_init(fun, t0, y0, h0, rtol, atol):
    """Initial state of the BDF integrator (order 1)."""
    state = {"t": t0, "y": y0, "rtol": rtol, "atol": atol, "order": 1}
    f0 = fun(y0, t0)
    state["h"] = _select_initial_step(fun, t0, y0, f0, h0, rtol, atol)
    EPS = jnp.finfo(y0.dtype).eps
    state["newton_tol"] = jnp.maximum(10 * EPS / rtol, jnp.minimum(0.03, rtol**0.5))
    return state
