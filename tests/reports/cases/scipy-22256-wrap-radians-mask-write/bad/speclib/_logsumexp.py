import math

from speclib._array_api import array_namespace


def wrap_radians(x, xp=None):
    xp = array_namespace(x) if xp is None else xp
    # Wrap radians to (-pi, pi]
    out = -((-x + math.pi) % (2 * math.pi) - math.pi)
    # keep the relative precision of angles that need no wrapping
    no_wrap = xp.abs(x) < xp.pi
    out[no_wrap] = x[no_wrap]  # expect: JAX103
    return out
