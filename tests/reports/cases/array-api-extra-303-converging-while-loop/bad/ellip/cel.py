from ellip._array_api import array_namespace


def cel_agm(kc, errtol=1e-6):
    """Complete elliptic integral of the first kind, K = pi / (2 AGM(1, kc)), by the arithmetic-geometric mean."""
    xp = array_namespace(kc)
    a = xp.ones_like(kc)
    g = xp.abs(kc)
    while xp.any(xp.abs(a - g) > errtol * a):  # expect: JAX101
        a, g = 0.5 * (a + g), xp.sqrt(a * g)
    return xp.pi / (2 * a)
