import jax

from ellip._array_api import array_namespace


def lazy_while(cond_fun, body_fun, init, xp):
    """The loop the thread proposes: lax.while_loop for JAX, a plain loop for eager backends."""
    if xp.__name__.startswith("jax"):
        return jax.lax.while_loop(cond_fun, body_fun, init)
    state = init
    while cond_fun(state):
        state = body_fun(state)
    return state


def cel_agm(kc, errtol=1e-6):
    """Complete elliptic integral of the first kind, K = pi / (2 AGM(1, kc)), by the arithmetic-geometric mean."""
    xp = array_namespace(kc)

    def not_converged(state):
        a, g = state
        return xp.any(xp.abs(a - g) > errtol * a)

    def step(state):
        a, g = state
        return 0.5 * (a + g), xp.sqrt(a * g)

    a, _ = lazy_while(not_converged, step, (xp.ones_like(kc), xp.abs(kc)), xp)
    return xp.pi / (2 * a)
